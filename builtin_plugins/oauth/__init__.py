"""Built-in OAuth sign-in for subscription plans: GitHub Copilot (device code), ChatGPT (PKCE with a
localhost callback) and Anthropic Claude Pro/Max (PKCE, callback or pasted code).

Only :mod:`builtin_plugins.oauth.declarations` (stdlib and the contract) is imported at startup: it
declares which providers have a login and names each flow as a ``"module:attribute"`` string. The
flow modules, and httpx with them, load when a login or a token refresh runs.
"""
