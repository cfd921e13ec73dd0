"""Workflow definitions: TOML files and ``register_workflows`` (Python), checked before any run.

A TOML file ``<name>.toml`` lives in ``<agentDir>/workflows/`` or, in a trusted project only,
``<cwd>/.atomic/workflows/`` (project files win by name)::

    description = "Plan, then review the plan"
    [[stages]]
    name = "plan"
    prompt = "Make a short plan for: {input}"
    [[stages]]
    name = "review"
    prompt = "Review this plan:\\n{stages.plan.output}"
    models = ["anthropic/claude-sonnet-4-5", "openai/gpt-5.1"]   # fallback tiers
    thinking = "low"
    tools = ["read", "search"]

Placeholders: ``{input}`` and ``{stages.<earlier stage>.output}``; ``{{`` and ``}}`` are literal
braces. Anything else in braces is an error, reported with the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
STAGE_REF = re.compile(r"stages\.([A-Za-z0-9_-]+)\.output")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
THINKING = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


class DefinitionError(ValueError):
    """A definition that cannot run; ``str()`` names the file and line when there is one."""

    def __init__(self, message: str, path: str = "", line: int | None = None) -> None:
        where = f"{path}:{line}" if path and line else path
        super().__init__(f"{where}: {message}" if where else message)
        self.path, self.line = path, line


@dataclass
class Stage:
    name: str
    prompt: str | None = None
    run: Any = None
    """Python step: ``async (ctx) -> str`` or a ``"module:function"`` string."""
    models: list[str] = field(default_factory=list)
    thinking: str | None = None
    tools: list[str] | None = None

    def to_spec(self) -> dict[str, Any]:
        """The stage as stored with a run (JSON): a Python step is stored by reference."""
        spec: dict[str, Any] = {"name": self.name, "models": list(self.models)}
        if self.prompt is not None:
            spec["prompt"] = self.prompt
        else:
            spec["python"] = True
        if self.thinking:
            spec["thinking"] = self.thinking
        if self.tools is not None:
            spec["tools"] = list(self.tools)
        return spec


@dataclass
class Definition:
    name: str
    description: str = ""
    stages: list[Stage] = field(default_factory=list)
    source: str = ""
    """The TOML path, or ``plugin:<name>`` for a Python definition."""


def render(template: str, run_input: str, outputs: dict[str, str]) -> str:
    """Fill in a checked prompt template."""

    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if text in ("{{", "}}"):
            return text[0]
        key = m.group(1).strip()
        if key == "input":
            return run_input
        ref = STAGE_REF.fullmatch(key)
        return outputs.get(ref.group(1), "") if ref else text

    return PLACEHOLDER.sub(sub, template)


def _line_of(text: str, needle: str, after: int = 0) -> int | None:
    at = text.find(needle, after)
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def _check_prompt(prompt: str, earlier: list[str], stage: str, where: tuple[str, str, int]) -> None:
    path, text, offset = where
    for m in PLACEHOLDER.finditer(prompt):
        if m.group(1) is None:
            continue
        key = m.group(1).strip()
        if key == "input":
            continue
        ref = STAGE_REF.fullmatch(key)
        if ref and ref.group(1) in earlier:
            continue
        why = f'stage "{ref.group(1)}" is not an earlier stage' if ref else "use {input} or {stages.<name>.output}"
        raise DefinitionError(
            f'stage "{stage}": unknown placeholder {m.group(0)} ({why})', path, _line_of(text, m.group(0), offset)
        )


def build(name: str, description: Any, steps: Any, source: str, text: str = "") -> Definition:
    """Check one definition (from TOML or Python) and return it; raises DefinitionError."""
    path = source if not source.startswith("plugin:") else ""
    if not NAME.match(name):
        raise DefinitionError(f"invalid workflow name {name!r}", path)
    if description is not None and not isinstance(description, str):
        raise DefinitionError("description must be a string", path, _line_of(text, "description"))
    if not isinstance(steps, list) or not steps:
        raise DefinitionError("a workflow needs at least one [[stages]] entry", path)
    stages: list[Stage] = []
    offset = 0
    for index, raw in enumerate(steps):
        if not isinstance(raw, dict):
            raise DefinitionError(f"stage {index + 1} must be a table", path)
        at = text.find("[[stages]]", offset)
        offset = at + 1 if at >= 0 else offset
        line = _line_of(text, "[[stages]]", max(at, 0)) if at >= 0 else None
        stage_name = raw.get("name")
        if not isinstance(stage_name, str) or not NAME.match(stage_name):
            raise DefinitionError(f"stage {index + 1} needs a name (letters, digits, . _ -)", path, line)
        if stage_name in (s.name for s in stages):
            raise DefinitionError(f'duplicate stage name "{stage_name}"', path, line)
        unknown = sorted(set(raw) - {"name", "prompt", "run", "models", "thinking", "tools"})
        if unknown:
            raise DefinitionError(f'stage "{stage_name}": unknown key {unknown[0]!r}', path, line)
        prompt, run = raw.get("prompt"), raw.get("run")
        if (prompt is None) == (run is None):
            raise DefinitionError(f'stage "{stage_name}" needs exactly one of prompt or run', path, line)
        if prompt is not None and not isinstance(prompt, str):
            raise DefinitionError(f'stage "{stage_name}": prompt must be a string', path, line)
        if run is not None and path:
            raise DefinitionError(f'stage "{stage_name}": run (Python code) is for register_workflows', path, line)
        models = raw.get("models", [])
        if not isinstance(models, list) or not all(isinstance(m, str) and "/" in m for m in models):
            raise DefinitionError(f'stage "{stage_name}": models must be a list of "provider/model"', path, line)
        thinking = raw.get("thinking")
        if thinking is not None and thinking not in THINKING:
            raise DefinitionError(f'stage "{stage_name}": thinking must be one of {", ".join(THINKING)}', path, line)
        tools = raw.get("tools")
        if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)):
            raise DefinitionError(f'stage "{stage_name}": tools must be a list of tool names', path, line)
        if prompt is not None:
            _check_prompt(prompt, [s.name for s in stages], stage_name, (path, text, max(at, 0)))
        stages.append(Stage(stage_name, prompt, run, list(models), thinking, tools))
    return Definition(name, description or "", stages, source)


def load_toml(path: Path) -> Definition:
    # lazy: tomllib only for a TOML definition
    import tomllib

    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+)", str(exc))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
        raise DefinitionError(f"invalid TOML: {message}", str(path), int(m.group(1)) if m else None) from None
    unknown = sorted(set(data) - {"description", "stages", "name"})
    if unknown:
        raise DefinitionError(f"unknown key {unknown[0]!r}", str(path), _line_of(text, unknown[0]))
    return build(path.stem, data.get("description"), data.get("stages"), str(path), text)


def workflow_dirs(agent_dir: str, cwd: str, trusted: bool) -> list[Path]:
    dirs = [Path(agent_dir) / "workflows"]
    if trusted:
        dirs.append(Path(cwd) / ".atomic" / "workflows")
    return dirs


def discover(
    agent_dir: str, cwd: str, trusted: bool, registered: list[Any]
) -> tuple[dict[str, Definition], list[DefinitionError]]:
    """Every definition by name (Python first, then agent-dir TOML, then project TOML: later
    wins), plus the errors of those that could not be loaded."""
    found: dict[str, Definition] = {}
    errors: list[DefinitionError] = []
    for item in registered:
        try:
            found[item.name] = build(item.name, item.description, item.steps, f"plugin:{item.plugin}")
        except DefinitionError as exc:
            errors.append(DefinitionError(f"workflow {item.name!r} of {item.plugin}: {exc}"))
    for directory in workflow_dirs(agent_dir, cwd, trusted):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                found[path.stem] = load_toml(path)
            except DefinitionError as exc:
                errors.append(exc)
            except OSError as exc:
                errors.append(DefinitionError(f"cannot read: {exc.strerror}", str(path)))
    return found, errors
