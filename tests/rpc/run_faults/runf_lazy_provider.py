"""A provider whose stream function is named by a ``"module:function"`` string, as the built-in
providers are: its module (runf_lazy_stream) is imported the first time a prompt needs it."""

from atomic_host import ApiImpl, ProviderInfo, hookimpl


@hookimpl
def register_providers(register) -> None:
    register(ApiImpl("runf-lazy", "runf_lazy_stream:stream", needs_http=False))
    register(
        ProviderInfo(
            id="runflazy",
            name="Lazily imported provider",
            api="runf-lazy",
            always_authenticated=True,
            models=[{"id": "lazy-1", "name": "Lazy", "contextWindow": 8000, "maxTokens": 100,
                     "input": ["text"], "reasoning": False}],
        )
    )
