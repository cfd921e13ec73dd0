"""Verbatim-lines compaction (semantics §4): the default implementation of the ``compact`` hook.

``prepare`` numbers the region's transcript lines and finds the protected ``<keepContext>`` spans,
``prompt`` writes the request that asks the model for deletion ranges, ``parse`` reads and
validates its answer, ``apply`` rebuilds the compacted text and its stats, and ``strategy`` runs
them for one compaction. The host-side driver (jobs, events, the entry, triggers) is
``atomic_host.engine.compaction``. A plugin replaces this strategy by implementing ``compact``
itself (this one is ``trylast``), or supplies the text through ``session_before_compact``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_host import hookimpl

if TYPE_CHECKING:
    from atomic_host.contract.events import CompactEvent
    from atomic_host.contract.host import HostAPI

PROMPT_VERSION = 3


@hookimpl(trylast=True)
async def compact(event: CompactEvent, api: HostAPI) -> Any:
    """The built-in strategy: rank the region's lines with the model and delete the least useful."""
    from builtin_plugins.compaction.strategy import run  # import-time: loads on the first compaction

    return await run(event, api.settings)
