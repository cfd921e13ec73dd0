"""The one place hook results are combined.

Each hook's rule is declared beside its spec (``atomic_host.contract.hookspecs.DISPATCH_RULES``);
:class:`Dispatcher` calls the implementations through the plugin manager — which isolates them,
reports exceptions as ``extension_error`` and bounds their time — and applies the rule:

``each``          every result (non-None, of an accepted type), in call order.
``first_cancel``  the first :class:`~atomic_host.contract.results.Cancel`, or None.
``chain``         each result's ``apply(event)`` updates the event; the first result whose
                  ``apply`` returns True (``InputResult.handled()``) is returned and ends the chain.
``first_block``   the first ``ToolCallDecision`` with ``block=True``, or None (a ``terminate`` of
                  any decision is noted on the event).
``patch``         each result patches ``event.result`` (a ``ToolResult`` replaces it); returns None.
``first_result``  the first accepted non-None result, or None.

A result of a type the rule does not accept is reported as an ``extension_error`` (plugin, hook,
what it returned) and ignored, so one plugin's mistake never changes the outcome of the others.

A hook whose rule has ``on_failure`` (``tool_call``) can fail closed: an implementation that fails
(raises, exits, times out, returns something unusable) while it fails closed (``@fail_closed``, or
``hooks.failClosed``) stands for ``on_failure(path, why)`` — a block — instead of being skipped; and
with ``hooks.failClosed`` a plugin that failed to load stands for one too, before any is called.

Results are combined as the manager yields them, one implementation at a time (also for async
hooks): a ``chain`` or ``patch`` result is applied to the event before the next implementation
sees it, and the ``first_*`` rules stop calling once decided.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from atomic_host.contract.hookspecs import DISPATCH_RULES, Combine, HookRule
from atomic_host.contract.results import Cancel
from atomic_host.contract.tools import ToolResult
from atomic_host.plugins.faults import HookFailed

if TYPE_CHECKING:
    from atomic_host.contract.host import HostAPI
    from atomic_host.plugins.manager import PluginHost


class Dispatcher:
    """Calls hooks by name with the host API filled in and combines their results by rule."""

    def __init__(self, plugins: PluginHost, api: HostAPI, rules: dict[str, HookRule] | None = None) -> None:
        self.plugins = plugins
        self.api = api
        self.rules = DISPATCH_RULES if rules is None else rules

    def has_impls(self, hook: str) -> bool:
        """Whether any plugin implements ``hook`` (lets hot paths skip building an event)."""
        return self.plugins.has_impls(hook)

    def call(self, hook: str, *, plugin: str | None = None, **kwargs: Any) -> Any:
        """Call a synchronous hook (``sync`` in its rule); ``plugin`` limits it to one plugin."""
        fold = _Fold(self, hook, kwargs.get("event"))
        # The manager is the only caller of implementations: isolation, error reports and time bounds live there.
        for plugin_name, result in self.plugins.call_each(hook, plugin=plugin, api=self.api, **kwargs):
            if fold.add(plugin_name, result):
                break
        return fold.value

    async def acall(self, hook: str, **kwargs: Any) -> Any:
        """Call a hook from async code; ``async def`` implementations are awaited. For a hook that
        can fail closed, a plugin that failed to load and stands for a fail-closed gate decides
        first (:meth:`PluginHost.not_loaded_gates`)."""
        fold = _Fold(self, hook, kwargs.get("event"))
        closable = fold.rule.on_failure is not None
        if closable:
            for record in self.plugins.not_loaded_gates():
                why = f"it did not load ({record.error})"
                self.plugins.on_error(record.path, hook, f"{why}; fails closed")
                if fold.add(record.name, HookFailed(record.path, why)):
                    return fold.value
        results = self.plugins.aiter_each(
            hook, bounded=fold.rule.bounded, fail_closed=closable, api=self.api, **kwargs
        )
        try:
            async for plugin_name, result in results:
                if fold.add(plugin_name, result):
                    break
        finally:
            await results.aclose()  # type: ignore[attr-defined]
        return fold.value

    def _path(self, plugin: str) -> str:
        record = self.plugins.records.get(plugin)
        return record.path if record else plugin

    def _report(self, plugin: str, hook: str, message: str) -> None:
        self.plugins.on_error(self._path(plugin), hook, message)


_COMBINES = frozenset(get_args(Combine))


class _Fold:
    """One hook call's results, combined by its rule as they arrive (see the module docstring)."""

    def __init__(self, dispatcher: Dispatcher, hook: str, event: Any) -> None:
        self.dispatcher, self.hook, self.event = dispatcher, hook, event
        self.rule = dispatcher.rules[hook]
        if self.rule.combine not in _COMBINES:
            raise ValueError(f"unknown combining rule {self.rule.combine!r} for hook {hook}")
        self.value: Any = [] if self.rule.combine == "each" else None

    def add(self, plugin: str, result: Any) -> bool:
        """Take one implementation's result; True once the outcome is decided (stop calling)."""
        if result is None:
            return False
        rule = self.rule
        if isinstance(result, HookFailed) and rule.on_failure is not None:
            result = rule.on_failure(result.path, result.why)  # a failed fail-closed implementation
        elif rule.returns and not isinstance(result, rule.returns):
            expected = " or ".join(t.__name__ for t in rule.returns)
            why = f"returned {type(result).__name__}; expected {expected} or None"
            plugins = self.dispatcher.plugins
            if rule.on_failure is None or not any(plugins.fails_closed(i) for i in plugins.impls(self.hook, plugin)):
                self.dispatcher._report(plugin, self.hook, why)
                return False
            self.dispatcher._report(plugin, self.hook, f"{why}; fails closed")
            result = rule.on_failure(self.dispatcher._path(plugin), why)
        try:
            return self._combine(result)
        except Exception as exc:  # a result that cannot be applied is its plugin's error, like a raise
            self.dispatcher._report(plugin, self.hook, f"returned an unusable {type(result).__name__}: {exc}")
            return False

    def _combine(self, result: Any) -> bool:
        combine = self.rule.combine
        if combine == "each":
            self.value.append(result)
            return False
        if combine == "first_cancel":
            return self._decide(result if isinstance(result, Cancel) else None)
        if combine == "first_result":
            return self._decide(result)
        if combine == "patch" and isinstance(result, ToolResult):
            self.event.result = result
            return False
        if combine == "patch":
            result.apply(self.event)
            return False
        # chain, first_block: apply() updates the event; True ends the call
        return self._decide(result if result.apply(self.event) else None)

    def _decide(self, result: Any) -> bool:
        if result is None:
            return False
        self.value = result
        return True
