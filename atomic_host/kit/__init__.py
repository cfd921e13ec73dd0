"""The kit (layer 1): the stable helpers plugins build on, built-in and third-party alike.

``__all__`` lists the public modules; each lists its stable names in its own ``__all__``, and
docs/kit.md documents every one of them. Import them by module (``from atomic_host.kit.llm.http
import drive``); a name outside a public module's ``__all__`` is the host's own and may change.
``atomic_host.kit._fast`` is private: the host's speed tactics (docs/performance.md), each the
same behaviour as the library path it replaces, switched off by ``ATOMIC_PLAIN=1``.

- ``llm``: provider adapters (the stream assembler, HTTP and SSE, context shaping, partial JSON,
  usage, one-shot completion, error classification)
- ``sessions``: session stores (the entry tree, the store protocol, the JSONL format, listings)
- ``shell``, ``truncate``, ``tempdirs``, ``tool_env``: tools (running commands, cutting output,
  private temp files, credential-free environments)
- ``fsio``, ``database``, ``processes``: files written atomically, PostgreSQL settings, pids
- ``messages``, ``transcript``, ``compaction``: the conversation as a model sees it, as text, and
  the compaction settings
- ``images``: pictures for a model, checked and shrunk
- ``secrets``, ``log``: credential masking and the ``atomic`` logger
- ``proposed``: what an ``edit``/``write`` call would change, as a diff, before it runs
- ``permission_modes``: the approval modes' names (Claude Code's and ACP's) and the mode a host starts in
- ``copies``, ``collector``: JSON copies and bulk builds of acyclic objects

Modules here import only the standard library, their own third-party dependencies,
:mod:`atomic_host.contract` and each other.
"""

__all__ = [
    "collector",
    "compaction",
    "copies",
    "database",
    "fsio",
    "images",
    "llm",
    "log",
    "messages",
    "permission_modes",
    "processes",
    "proposed",
    "secrets",
    "sessions",
    "shell",
    "tempdirs",
    "tool_env",
    "transcript",
    "truncate",
]
