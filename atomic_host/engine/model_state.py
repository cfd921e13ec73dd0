"""The model and thinking level a session runs with: chosen at startup, set, cycled, scoped, recorded.

:class:`ModelState` owns ``model``, ``thinking_level`` and the message that refuses prompts while the
saved default model is gone. Every change is recorded in the session (``model_change``,
``thinking_level_change``), announced to the client (``model_changed``, ``thinking_level_changed``)
and to plugins (``model_select``, ``thinking_level_select``). Auto-retry's fallback models swap the
model without recording it (``engine/retry.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_host.contract.errors import HostError
from atomic_host.contract.events import ModelSelectEvent, ThinkingLevelSelectEvent
from atomic_host.core.models.thinking import clamp, next_level
from atomic_host.engine.model_choice import MODEL_LEVELS, model_thinking_level, scoped_models, startup_choice

if TYPE_CHECKING:
    from atomic_host.engine.emitter import Emitter
    from atomic_host.engine.services import HostServices
    from atomic_host.kit.sessions.tree import Session

NO_MODEL = "No model selected. Use set_model, --model or configure an API key."


class ModelState:
    """One session's model and thinking level."""

    def __init__(self, rt: HostServices, session: Session, emit: Emitter) -> None:
        self._rt = rt
        self._session = session
        self._emit = emit
        self.model: dict[str, Any] | None = None
        self.thinking_level = "off"
        self.fallback_message: str | None = None
        """Set when the saved default model is gone: prompts are refused with it until a model is set."""

    def select_startup(self, fresh: bool) -> None:
        """The startup choice (``--model``, the saved default, …) over what the branch restored."""
        rt = self._rt
        choice = startup_choice(rt.options, rt.settings, rt.models, fresh, self.model, self.thinking_level)
        self.model, self.thinking_level = choice.model, choice.thinking_level
        self.fallback_message = choice.fallback_message
        if fresh:
            self.record_initial()
        elif not any(e.get("type") == "thinking_level_change" for e in self._session.branch()):
            self._session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    def record_initial(self) -> None:
        """A new session starts with ``model_change`` (when a model is set) and ``thinking_level_change``."""
        if self.model is not None:
            self._session.append("model_change", provider=self.model["provider"], modelId=self.model["id"])
        self._session.append("thinking_level_change", thinkingLevel=self.thinking_level)

    def require(self) -> dict[str, Any]:
        """The model a run can use, or the ``HostError`` that says why there is none."""
        if self.model is None:
            raise HostError(self.fallback_message or NO_MODEL)
        provider = self.model["provider"]
        if not self._rt.models.auth_status(provider).get("configured"):
            raise HostError(
                f"No API key found for {provider}. Set it with --api-key, auth.json or the "
                "provider's environment variable."
            )
        return self.model

    def set_model(self, provider: str, model_id: str, persist: bool = False, source: str = "set") -> dict[str, Any]:
        rt = self._rt
        model = next((m for m in rt.models.available() if m["provider"] == provider and m["id"] == model_id), None)
        if model is None:
            raise HostError(f"Model not found: {provider}/{model_id}")
        previous = self.model
        self.model = model
        self.fallback_message = None
        self._session.append("model_change", provider=provider, modelId=model_id)
        # the level saved for this model (set_thinking_level persist) comes back with it
        level = clamp(model, model_thinking_level(rt.settings, model) or self.thinking_level)
        if level != self.thinking_level:
            self._set_level(level)
        self.announce(model, previous, source)
        if persist:
            rt.settings.save_global("defaultProvider", provider)
            rt.settings.save_global("defaultModel", model_id)
            rt.settings.save_global("defaultThinkingLevel", self.thinking_level)
        return model

    def announce(self, model: dict[str, Any], previous: dict[str, Any] | None, source: str) -> None:
        """``model_changed`` to the client, ``model_select`` to plugins."""
        self._emit({"type": "model_changed", "model": model, "previousModel": previous, "source": source})
        hooks = self._rt.hooks
        if hooks.has_impls("model_select"):
            hooks.call("model_select", event=ModelSelectEvent(model, previous, source))

    def _set_level(self, level: str) -> None:
        previous, self.thinking_level = self.thinking_level, level
        self._session.append("thinking_level_change", thinkingLevel=level)
        self._emit({"type": "thinking_level_changed", "level": level})
        hooks = self._rt.hooks
        if hooks.has_impls("thinking_level_select"):
            hooks.call("thinking_level_select", event=ThinkingLevelSelectEvent(level, previous))

    def set_thinking_level(self, level: str, persist: bool = False) -> dict[str, Any]:
        effective = clamp(self.model, level) if self.model else level
        if effective != self.thinking_level:
            self._set_level(effective)
        if persist:
            settings = self._rt.settings
            settings.save_global("defaultThinkingLevel", effective)
            if self.model:  # and the active model's own override, used when it is selected again
                settings.save_global_item(MODEL_LEVELS, f"{self.model['provider']}/{self.model['id']}", effective)
        data: dict[str, Any] = {"level": effective}
        if self.model:
            data.update(provider=self.model["provider"], modelId=self.model["id"])
        return data

    def cycle_thinking_level(self) -> dict[str, Any] | None:
        if not self.model:
            return None
        level = next_level(self.model, self.thinking_level)
        if level is None:
            return None
        self._set_level(level)
        return {"level": level}

    def scoped(self) -> list[dict[str, Any]]:
        """The models ``--models`` / ``enabledModels`` select (empty: no scope)."""
        rt = self._rt
        return scoped_models(rt.options, rt.settings, rt.models)

    def cycle_model(self, direction: str | None, persist: bool) -> dict[str, Any] | None:
        scoped = self.scoped()
        candidates = scoped or self._rt.models.available()
        if len(candidates) < 2:
            return None
        keys = [(m["provider"], m["id"]) for m in candidates]
        current = (self.model["provider"], self.model["id"]) if self.model else None
        index = keys.index(current) if current in keys else 0
        step = -1 if direction == "backward" else 1
        target = candidates[(index + step) % len(candidates)]
        self.set_model(target["provider"], target["id"], persist=persist, source="cycle")
        return {"model": self.model, "thinkingLevel": self.thinking_level, "isScoped": bool(scoped)}
