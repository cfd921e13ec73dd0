"""What to tell a person when no model can run: which environment variables, ``--api-key`` or
``login`` would make which provider work. Shared by print mode and the RPC errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_host.engine.model_choice import STALE_ADVICE, STALE_DEFAULT

if TYPE_CHECKING:
    from atomic_host.core.models.registry import ModelRegistry
    from atomic_host.core.options import Options

NO_MODEL = "No model selected."
STALE_HEAD = STALE_DEFAULT.partition("{ref}")[0]
NO_KEY = "No API key found for "
"""The engine's error texts (``AgentSession.require_model``) that :func:`explain` extends."""


def _env_names(models: ModelRegistry, provider: str) -> list[str]:
    names = list(models.env_key_names(provider))
    return sorted(names, key=lambda n: not n.endswith("_API_KEY"))  # the API key first, tokens after


def named_providers(models: ModelRegistry) -> list[str]:
    """Provider ids worth naming to a person: not the ``scripted`` ones (test replies, no model)."""
    return [p for p in models.provider_ids() if not getattr(models.provider_info(p), "scripted", False)]


def _keyed_providers(models: ModelRegistry) -> list[str]:
    """Providers with models and a known key variable."""
    with_models = {m["provider"] for m in models.all_models()}
    return [p for p in named_providers(models) if p in with_models and _env_names(models, p)]


def _login(provider: str, rpc: bool) -> str:
    if rpc:
        return f'send {{"type":"login_provider","provider":"{provider}","apiKey":"KEY"}}'
    return f"run `atomic login {provider}`"


def _vars(names: list[str]) -> str:
    return names[0] + (f" (or {' or '.join(names[1:])})" if len(names) > 1 else "")


def key_hint(models: ModelRegistry, provider: str | None = None, model: str | None = None, rpc: bool = False) -> str:
    """One or two sentences: how to get a usable model for ``provider`` (or for any provider)."""
    if provider and models.provider_info(provider) is None:
        known = ", ".join(named_providers(models))
        return f"Unknown provider {provider!r}; known providers: {known}."
    if provider and not models.auth_status(provider).get("configured"):
        names = _env_names(models, provider)
        env = f"Set {_vars(names)}, pass" if names else "Pass"
        return f"{provider} has no API key. {env} --api-key KEY, or {_login(provider, rpc)}."
    if provider or model or models.available():
        what = f"Model {model!r} was not found" if model else "No model is selected"
        return f"{what}; `atomic --list-models` lists the ones you can use (pick one with --model)."
    providers = _keyed_providers(models)
    if not providers:
        return "No provider has an API key: add one in models.json or pass --provider NAME --api-key KEY."
    # The first three with their variables; the rest by name, so the line stays readable.
    env = " or ".join(f"{' / '.join(_env_names(models, p))} ({p})" for p in providers[:3])
    if len(providers) > 3:
        env += f" — or the key of {', '.join(providers[3:-1])} or {providers[-1]} —"
    return (
        f"No provider has an API key. Set {env} in the environment, pass --provider NAME --api-key KEY, "
        f"or {_login('NAME', rpc)}."
    )


def explain(message: str, models: ModelRegistry, options: Options, rpc: bool = False) -> str:
    """``message`` with a :func:`key_hint` appended when it is one of the engine's no-model errors;
    for a person (not ``rpc``), a saved default model that is gone is explained with the flag and,
    when its provider has no key, the key's variable (the RPC's words name ``set_model``)."""
    if not rpc and message.startswith(STALE_HEAD) and message.endswith(STALE_ADVICE):
        fact = message[: -len(STALE_ADVICE)].rstrip()
        provider = fact[len(STALE_HEAD) :].split("/", 1)[0]
        advice = "Pick one with --model PROVIDER/ID (`atomic --list-models` lists them), or change defaultModel."
        info = models.provider_info(provider)
        if info is None or not models.auth_status(provider).get("configured"):
            advice += " " + key_hint(models, provider)
        return f"{fact} {advice}"
    if message.startswith(NO_MODEL):
        return f"{message} {key_hint(models, options.provider, options.model, rpc)}"
    if message.startswith(NO_KEY):
        provider = message[len(NO_KEY) :].split(".", 1)[0]
        names = _env_names(models, provider)
        if names:
            return f"{message} For {provider}: {_vars(names)}, or {_login(provider, rpc)}."
    return message
