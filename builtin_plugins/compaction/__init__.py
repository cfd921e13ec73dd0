"""Verbatim-lines compaction (semantics §4): the strategy, as pure functions.

``prepare`` numbers the region's transcript lines and finds the protected ``<keepContext>`` spans,
``prompt`` writes the request that asks the model for deletion ranges, ``parse`` reads and
validates its answer, and ``apply`` rebuilds the compacted text and its stats. The host-side
driver (events, entries, triggers) is ``atomic_host.engine.compaction``; an extension can replace
the strategy through the ``session_before_compact`` hook.
"""

PROMPT_VERSION = 3
STRATEGY = "verbatim-lines"
