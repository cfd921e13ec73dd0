from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tools_helpers import call, call_err, make_ctx, text_of

from atomic_host.contract.tools import ToolContext


async def test_todo_lifecycle(ctx: ToolContext, work: Path) -> None:
    r = await call("todo", ctx, action="create", title="Fix bug", tags=["bug"], body="Details")
    assert r.details
    tid = r.details["todo"]["id"]
    assert tid.startswith("TODO-")
    hex_id = tid[5:]
    f = work / ".atomic" / "todos" / f"{hex_id}.md"
    meta, body = f.read_text().split("\n\n", 1)
    assert json.loads(meta) == {
        "id": hex_id,
        "title": "Fix bug",
        "tags": ["bug"],
        "status": "open",
        "created_at": json.loads(meta)["created_at"],
    }
    assert body == "Details\n"
    assert "Fix bug" in text_of(await call("todo", ctx, action="get", id=tid))
    await call("todo", ctx, action="append", id=hex_id, body="More")
    assert f.read_text().endswith("Details\n\nMore\n")
    assert "assigned" in text_of(await call("todo", ctx, action="claim", id=tid))
    other = make_ctx(work)
    other.session_id = "sess-2"
    assert "already assigned to session sess-1" in await call_err("todo", other, action="claim", id=tid)
    assert "sess-2" in text_of(await call("todo", other, action="claim", id=tid, force=True))
    assert "not this one" in await call_err("todo", ctx, action="release", id=tid)
    await call("todo", other, action="release", id=tid)
    await call("todo", ctx, action="update", id=tid, status="done")
    assert text_of(await call("todo", ctx, action="list")) == "No open todos."
    assert "[done] Fix bug" in text_of(await call("todo", ctx, action="list-all"))
    await call("todo", ctx, action="delete", id=tid)
    assert not f.exists()
    assert "not found" in await call_err("todo", ctx, action="get", id=tid)


async def test_todo_errors_and_env_path(ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "title required" in await call_err("todo", ctx, action="create")
    assert "id required" in await call_err("todo", ctx, action="update")
    assert "Invalid todo id" in await call_err("todo", ctx, action="get", id="TODO-xyz!")
    monkeypatch.setenv("ATOMIC_TODO_PATH", str(tmp_path / "elsewhere"))
    await call("todo", ctx, action="create", title="T")
    assert len(list((tmp_path / "elsewhere").glob("*.md"))) == 1
    assert not list((tmp_path / "elsewhere").glob("*.lock"))


async def test_todo_reads_body_without_front_matter(ctx: ToolContext, work: Path) -> None:
    d = work / ".atomic" / "todos"
    d.mkdir(parents=True)
    (d / "abcd1234.md").write_text("just text\n")
    assert "TODO-abcd1234 [open]" in text_of(await call("todo", ctx, action="list"))


class FakeUI:
    has_ui = True

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, list[str], Any]] = []

    async def select(self, title: str, options: list[str], *, timeout: float | None = None) -> str | None:
        self.calls.append((title, options, timeout))
        return self.answers.pop(0)

    async def input(self, title: str, placeholder: str = "", *, timeout: float | None = None) -> str | None:
        self.calls.append((title, [], timeout))
        return self.answers.pop(0)


QUESTIONS = [
    {
        "question": "Which database?",
        "header": "Database",
        "options": [{"label": "Postgres", "description": "robust"}, {"label": "SQLite", "description": ""}],
    },
    {
        "question": "Which extras?",
        "header": "Extras",
        "multiSelect": True,
        "options": [{"label": "Auth", "description": ""}, {"label": "Cache", "description": ""}],
    },
]


async def test_ask_user_question_answers(work: Path) -> None:
    ui = FakeUI(["Postgres — robust", "Cache", "Done"])
    ctx = make_ctx(work, ui=ui, settings={"askUserQuestion": {"timeoutSeconds": 42}})
    r = await call("ask_user_question", ctx, questions=QUESTIONS)
    assert not r.is_error and r.details
    assert r.details == {
        "cancelled": False,
        "answers": {"Which database?": "Postgres", "Which extras?": ["Cache"]},
    }
    assert '"Which database?" = "Postgres"' in text_of(r)
    assert ui.calls[0][0] == "Database: Which database?" and ui.calls[0][2] == 42
    assert ui.calls[0][1][-1].startswith("Other")


async def test_ask_user_question_other_and_declined(work: Path) -> None:
    ui = FakeUI(["Other (type your own answer)", "MySQL", None])
    ctx = make_ctx(work, ui=ui)
    r = await call("ask_user_question", ctx, questions=QUESTIONS)
    assert text_of(r) == "User declined to answer questions"
    assert r.details and r.details["cancelled"] is True and r.details["answers"] == {"Which database?": "MySQL"}
    assert ui.calls[0][2] == 300


async def test_ask_user_question_without_ui(ctx: ToolContext, work: Path) -> None:
    r = await call("ask_user_question", ctx, questions=QUESTIONS[:1])
    assert r.is_error and text_of(r) == "Error: UI not available (running in non-interactive mode)"
    ui = FakeUI([])
    ui.has_ui = False
    r = await call("ask_user_question", make_ctx(work, ui=ui), questions=QUESTIONS[:1])
    assert r.is_error


def test_ask_user_question_schema_limits() -> None:
    from pydantic import ValidationError

    from builtin_plugins.tools.ask_user_question import Params

    with pytest.raises(ValidationError):
        Params.model_validate({"questions": [{**QUESTIONS[0], "header": "x" * 17}]})
    with pytest.raises(ValidationError):
        Params.model_validate({"questions": [{**QUESTIONS[0], "options": QUESTIONS[0]["options"][:1]}]})
    with pytest.raises(ValidationError):
        Params.model_validate({"questions": QUESTIONS * 3})
