"""One verbatim-lines compaction (semantics §4.2–4.5): prepare, consult, plan (or fall back), measure.

Rungs: ``planned`` (the model chose deletion ranges, the session's model first, then each
``fallbackModels`` entry), ``extension`` (``session_before_compact`` supplied the text) and
``fresh`` (the whole region deleted: nothing usable came back, which only an overflow or a mid-turn
compaction accepts).
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING, Any

from atomic_host.contract.results import Cancel, Compaction, CompactResult, Failure
from atomic_host.kit.compaction import setting
from atomic_host.kit.messages import convert_to_llm
from atomic_host.kit.transcript import serialize_conversation
from builtin_plugins.compaction import PROMPT_VERSION
from builtin_plugins.compaction.apply import Reconstruction, reconstruct, stats
from builtin_plugins.compaction.params import from_settings
from builtin_plugins.compaction.plan import PlanFailed, fresh, plan
from builtin_plugins.compaction.prepare import prepare

if TYPE_CHECKING:
    from atomic_host.contract.events import CompactEvent

TOO_SMALL = "Nothing to compact (session too small)"


async def run(event: CompactEvent, settings: dict[str, Any]) -> Compaction | Failure | Cancel:
    """The ``compact`` result for ``event``."""
    get = partial(setting, settings or {})
    reason, window = event.reason, event.context_window
    prep = prepare(event.branch_entries, from_settings(get, None).preserve_recent, event.tokens_before)
    params = from_settings(get, prep.last_user_text)
    # Overflow recovery and mid-turn compaction must not give up: the turn waits on them.
    load_bearing = reason == "overflow" or event.mid_turn
    # Mid-turn, a small region is compacted only when the context does not fit the window at all.
    over_limit = reason == "overflow" or (event.mid_turn and 0 < window < event.tokens_before)
    if not prep.compactable and not over_limit:
        return Failure(TOO_SMALL, nothing_to_do=True)

    entry: dict[str, Any] = {}
    planner: dict[str, Any] | None = None  # plannerModel, when a fallback model planned it
    decision = None
    if event.before_compact is not None:
        decision = await event.before_compact(
            lines=prep.lines,
            protected=prep.protected,
            first_kept_entry_id=prep.first_kept_entry_id,
            parameters=params.to_wire(),
        )
    if isinstance(decision, Cancel):
        return decision
    if isinstance(decision, CompactResult) and decision.compacted_text.strip():
        text, rung, range_count, deleted = decision.compacted_text, "extension", 0, 0
        entry["fromHook"] = True
    else:
        rung = "planned"
        rec = None
        if prep.compactable:
            failure: PlanFailed | None = None
            for requester in event.requesters:
                try:
                    planned = await plan(prep, params.compression_ratio, params.query, window, requester.request)
                    rec = reconstruct(prep.lines, planned.ranges, prep.protected)
                except PlanFailed as exc:
                    failure = failure or exc  # the session model's failure is the one to report
                    continue
                if requester.fallback:
                    model, level = requester.model, requester.thinking_level
                    planner = {"provider": model["provider"], "id": model["id"]}
                    planner |= {"thinkingLevel": level} if level else {}
                break
            if rec is None and failure is not None and not load_bearing:
                return Failure(str(failure))
        if rec is None:
            rec, rung = fresh(prep), "fresh"
        text, range_count, deleted = rec.text, rec.range_count, rec.lines_deleted

    tail_tokens = math.ceil(len(serialize_conversation(convert_to_llm(prep.tail_messages))) / 4)
    first_kept = prep.first_kept_entry_id
    if rung == "fresh" and window > 0 and tail_tokens > window:
        first_kept, tail_tokens = None, 0
    result_stats = stats(len(prep.lines), Reconstruction(text, deleted, range_count), prep.tokens_before, tail_tokens)
    return Compaction(
        text,
        first_kept,
        rung=rung,
        prompt_version=PROMPT_VERSION,
        parameters=params.to_wire(),
        stats=result_stats,
        planner_model=planner,
        entry=entry,
    )
