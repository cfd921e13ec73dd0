"""The one place hook results are combined.

Each hook's rule is declared beside its spec (``atomic_host.contract.hookspecs.DISPATCH_RULES``);
:class:`Dispatcher` calls the implementations through the plugin manager — which isolates them,
reports exceptions as ``extension_error`` and bounds their time — and applies the rule:

``each``          every result (non-None, of an accepted type), in call order.
``first_cancel``  the first :class:`~atomic_host.contract.results.Cancel`, or None.
``chain``         each result's ``apply(event)`` updates the event; the first result whose
                  ``apply`` returns True (``InputResult.handled()``) is returned and ends the chain.
``first_block``   the first ``ToolCallDecision`` with ``block=True``, or None.
``patch``         each result patches ``event.result`` (a ``ToolResult`` replaces it); returns None.
``first_result``  the first accepted non-None result, or None.

A result of a type the rule does not accept is reported as an ``extension_error`` (plugin, hook,
what it returned) and ignored, so one plugin's mistake never changes the outcome of the others.

The ``first_*`` rules stop calling implementations once decided, sync and async alike (the manager
yields each result as it comes). For the other async hooks the manager returns after every
implementation ran (as the host has always done): results are combined in call order, but an
implementation sees the event as it was when the hook was called; ``chain`` and ``patch`` can move
to the same per-implementation iteration (``PluginHost.aiter_each``) when their call sites come here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from atomic_host.contract.hookspecs import DISPATCH_RULES, HookRule
from atomic_host.contract.results import Cancel
from atomic_host.contract.tools import ToolResult

if TYPE_CHECKING:
    from atomic_host.contract.host import HostAPI
    from atomic_host.plugins.manager import PluginHost

_FIRST: dict[str, Callable[[Any], bool]] = {
    "first_cancel": lambda r: isinstance(r, Cancel),
    "first_block": lambda r: bool(getattr(r, "block", False)),
    "first_result": lambda r: True,
}
"""The rules one result decides, and which accepted results decide them."""


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
        rule = self.rules[hook]
        # The manager is the only caller of implementations: isolation, error reports and time bounds live there.
        results = self.plugins.call_each(hook, plugin=plugin, api=self.api, **kwargs)
        return self._combine(hook, rule, results, kwargs)

    async def acall(self, hook: str, **kwargs: Any) -> Any:
        """Call a hook from async code; ``async def`` implementations are awaited."""
        rule = self.rules[hook]
        if rule.combine in _FIRST:
            # Decided by one result: stop calling once it is in (a strategy hook's default must
            # not run — and ask a model — after a plugin already answered).
            return await self._afirst(hook, rule, kwargs)
        results = await self.plugins.acall_each(hook, api=self.api, **kwargs)
        return self._combine(hook, rule, results, kwargs)

    async def _afirst(self, hook: str, rule: HookRule, kwargs: dict[str, Any]) -> Any:
        calls = self.plugins.aiter_each(hook, bounded=rule.bounded, api=self.api, **kwargs)
        async with aclosing(calls):
            async for pair in calls:
                for result in self._accepted(hook, rule, (pair,)):
                    if _FIRST[rule.combine](result):
                        return result
        return None

    # --- rules ---

    def _accepted(self, hook: str, rule: HookRule, results: Iterable[tuple[str, Any]]) -> Iterable[Any]:
        for plugin, result in results:
            if result is None:
                continue
            if not rule.returns:
                yield result  # observers and registrations: whatever they return is not used
            elif isinstance(result, rule.returns):
                yield result
            else:
                expected = " or ".join(t.__name__ for t in rule.returns)
                self._report(plugin, hook, f"returned {type(result).__name__}; expected {expected} or None")

    def _combine(self, hook: str, rule: HookRule, results: Iterable[tuple[str, Any]], kwargs: dict[str, Any]) -> Any:
        accepted = self._accepted(hook, rule, results)
        combine = rule.combine
        if combine == "each":
            return list(accepted)
        if combine == "first_cancel":
            return next((r for r in accepted if isinstance(r, Cancel)), None)
        if combine == "first_block":
            return next((r for r in accepted if getattr(r, "block", False)), None)
        if combine == "first_result":
            return next(iter(accepted), None)
        event = kwargs["event"]
        if combine == "patch":
            for result in accepted:
                if isinstance(result, ToolResult):
                    event.result = result
                else:
                    result.apply(event)
            return None
        if combine == "chain":
            return next((r for r in accepted if r.apply(event)), None)
        raise ValueError(f"unknown combining rule {combine!r} for hook {hook}")

    def _report(self, plugin: str, hook: str, message: str) -> None:
        record = self.plugins.records.get(plugin)
        self.plugins.on_error(record.path if record else plugin, hook, message)
