"""The engine (layer 4): the session engine that drives runs — AgentSession and what it composes
(compaction driver, session and branch summaries, crash recovery). It uses the agent loop below and
is used by the runtime and the frontends above."""
