"""Choosing a model without side effects: at startup (``--model``, ``--provider``, the saved
default, a provider's preferred model), a ``fallbackModels`` entry, the ``enabledModels`` scope. The session
(:mod:`atomic_host.engine.agent_session`) applies the choice and records it."""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from atomic_host.core.models.refs import parse_model_ref, resolve_model
from atomic_host.core.models.thinking import LEVELS, clamp
from atomic_host.kit.log import log

if TYPE_CHECKING:
    from atomic_host.core.models.registry import ModelRegistry
    from atomic_host.core.options import Options
    from atomic_host.core.settings import Settings

STALE_DEFAULT = "Your default model {ref} (settings defaultProvider/defaultModel) is not available."
STALE_ADVICE = "Choose a model with set_model (or --model), or fix models.json."
"""The refusal when the saved default model is gone (``modelFallbackMessage``), in the RPC's words;
print mode words the advice for a command line (:func:`atomic_host.frontends.hints.explain`)."""


class StartupChoice:
    """What a session starts with: the model (or None), the thinking level, and the message that
    refuses prompts when the saved default model is gone (then ``model`` is None)."""

    __slots__ = ("fallback_message", "model", "thinking_level")

    def __init__(self, model: dict[str, Any] | None, thinking_level: str, fallback_message: str | None) -> None:
        self.model, self.thinking_level, self.fallback_message = model, thinking_level, fallback_message


MODEL_LEVELS = "modelThinkingLevels"
"""The setting of per-model thinking levels: ``{"<provider>/<modelId>": "<level>"}``
(``set_thinking_level {persist: true}`` writes the active model's)."""


def model_thinking_level(settings: Settings, model: dict[str, Any] | None) -> str | None:
    """The thinking level saved for ``model`` (``modelThinkingLevels``), if a valid one is."""
    table = settings.get(MODEL_LEVELS)
    if model is None or not isinstance(table, dict):
        return None
    level = table.get(f"{model['provider']}/{model['id']}")
    return level if level in LEVELS else None


def startup_choice(
    options: Options,
    settings: Settings,
    registry: ModelRegistry,
    fresh: bool,
    model: dict[str, Any] | None,
    level: str,
) -> StartupChoice:
    """The model and level a session starts with. ``model``/``level`` are what the session's own
    branch restored (a resumed session); ``fresh`` is a new session (defaults apply)."""
    wanted_level: str | None = options.thinking
    fallback_message = None
    if options.model:
        _p, _m, ref_level = parse_model_ref(options.model)
        model = resolve_model(registry, options.model, options.provider)
        if model is None:
            log.warning(f"model not found: {options.model}")
        wanted_level = wanted_level or ref_level
    elif options.provider:
        model = next((m for m in registry.available() if m["provider"] == options.provider), None)
    if model is None and fresh:
        dp, dm = settings.str("defaultProvider"), settings.str("defaultModel")
        if dp and dm:
            model = registry.find(dp, dm)
            if model is None:  # never silently swap the user's chosen model for another
                fallback_message = f"{STALE_DEFAULT.format(ref=f'{dp}/{dm}')} {STALE_ADVICE}"
        else:
            model = registry.default_model()  # the providers' preferred_models, never a scripted one
    if fresh or wanted_level:
        saved = model_thinking_level(settings, model) or settings.str("defaultThinkingLevel")
        level = wanted_level or saved or "medium"
    if level not in LEVELS:
        log.warning(f"unknown thinking level {level!r}, using medium")
        level = "medium"
    if model is not None:
        level = clamp(model, level)
    return StartupChoice(model, level, fallback_message)


def fallback_target(registry: ModelRegistry, entry: Any) -> tuple[dict[str, Any], str | None] | None:
    """A ``fallbackModels`` entry (``provider/model[:level]``) → an available model with
    credentials and its level, else None."""
    if not isinstance(entry, str) or "/" not in entry:
        return None
    provider, model_id, level = parse_model_ref(entry)  # `:14b` of ollama/qwen3:14b is no level
    model = next((m for m in registry.available() if m["provider"] == provider and m["id"] == model_id), None)
    if model is None or not registry.auth_status(provider).get("configured"):
        log.warning(f"fallback model {entry} is not available; skipped")
        return None
    return model, (clamp(model, level) if level else None)


def scoped_models(options: Options, settings: Settings, registry: ModelRegistry) -> list[dict[str, Any]]:
    """The models ``--models`` / ``enabledModels`` patterns select (empty: no scope)."""
    patterns = options.models or settings.list("enabledModels", []) or []
    if not patterns:
        return []
    out = []
    for m in registry.available():
        full = f"{m['provider']}/{m['id']}"
        if any(fnmatch.fnmatch(full, p) or fnmatch.fnmatch(m["id"], p) for p in patterns):
            out.append(m)
    return out
