"""ask_user_question: ask the user 1–4 multiple-choice questions through the extension UI."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from atomic_host.contract.tools import ToolContext, ToolResult

DEFAULT_TIMEOUT = 300.0
NO_UI = "Error: UI not available (running in non-interactive mode)"
DECLINED = "User declined to answer questions"
OTHER = "Other (type your own answer)"
DONE = "Done"


class Option(BaseModel):
    label: str = Field(max_length=60, description="Short choice text (at most 60 characters)")
    description: str = Field("", description="What choosing this option means")
    preview: str | None = Field(None, description="Optional preview (code, mockup) shown with the option")


class Question(BaseModel):
    question: str = Field(description="The complete question, ending with '?'")
    header: str = Field(max_length=16, description="Very short label for the question (at most 16 characters)")
    options: list[Option] = Field(min_length=2, max_length=4, description="2-4 distinct choices")
    multiSelect: bool = Field(False, description="Allow choosing more than one option")


class Params(BaseModel):
    questions: list[Question] = Field(min_length=1, max_length=4, description="1-4 questions to ask")


def _timeout(ctx: ToolContext) -> float:
    cfg = ctx.settings.get("askUserQuestion")
    value = cfg.get("timeoutSeconds") if isinstance(cfg, dict) else None
    return float(value) if isinstance(value, (int, float)) and value > 0 else DEFAULT_TIMEOUT


def _choice(o: Option) -> str:
    return f"{o.label} — {o.description}" if o.description else o.label


async def _ask(ctx: ToolContext, q: Question, timeout: float) -> str | list[str] | None:
    assert ctx.ui is not None
    labels = {_choice(o): o.label for o in q.options}
    title = f"{q.header}: {q.question}"
    if not q.multiSelect:
        picked = await ctx.ui.select(title, [*labels, OTHER], timeout=timeout)
        if picked is None:
            return None
        if picked == OTHER:
            return await ctx.ui.input(title, "Your answer", timeout=timeout)
        return labels.get(picked, picked)
    chosen: list[str] = []
    remaining = dict(labels)
    while remaining:
        note = f" (chosen so far: {', '.join(chosen)})" if chosen else " (pick one at a time; choose Done to finish)"
        picked = await ctx.ui.select(title + note, [*remaining, OTHER, DONE], timeout=timeout)
        if picked is None:
            return None
        if picked == DONE:
            break
        if picked == OTHER:
            typed = await ctx.ui.input(title, "Your answer", timeout=timeout)
            if typed is None:
                return None
            chosen.append(typed)
            continue
        chosen.append(remaining.pop(picked, picked))
    return chosen


async def run(params: Params, ctx: ToolContext) -> ToolResult:
    if ctx.ui is None or not getattr(ctx.ui, "has_ui", False):
        return ToolResult.text(NO_UI, {"cancelled": True, "reason": "no-ui"}, is_error=True)
    timeout = _timeout(ctx)
    answers: dict[str, Any] = {}
    for q in params.questions:
        if ctx.signal.is_set():
            return ToolResult.text(DECLINED, {"cancelled": True, "answers": answers})
        answer = await _ask(ctx, q, timeout)
        if answer is None:
            return ToolResult.text(DECLINED, {"cancelled": True, "answers": answers})
        answers[q.question] = answer
    parts = []
    for question, answer in answers.items():
        shown = ", ".join(answer) if isinstance(answer, list) else answer
        parts.append(f'"{question}" = "{shown}"')
    text = "User has answered your questions: " + ". ".join(parts) + ". Continue with the user's answers in mind."
    return ToolResult.text(text, {"cancelled": False, "answers": answers})
