"""The kit (layer 1): public helpers for plugin authors, built-in and third-party alike.

``llm`` (streaming, HTTP, context shaping, partial JSON, usage, one-shot completion, error
classification), ``shell`` (running commands), ``truncate``, ``tempdirs``, ``fsio`` (``atomic_write``,
``private_dir``) and ``messages``. Modules here import only the standard library, their own
third-party dependencies, :mod:`atomic_host.contract` and each other.
"""
