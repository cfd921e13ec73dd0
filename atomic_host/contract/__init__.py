"""The contract (layer 0): everything a plugin sees of the host, and nothing else.

``markers`` (hookspec/hookimpl), ``hookspecs`` (every hook, with its combining rule), ``events`` and
``results`` (what hooks receive and return), ``tools``, ``commands``, ``providers`` (what plugins
register), ``host`` (the ``api`` argument, as a Protocol) and ``errors``. Modules here import only the
standard library, pluggy, and each other (pydantic only lazily); ``atomic_host`` re-exports the public
names lazily.
"""
