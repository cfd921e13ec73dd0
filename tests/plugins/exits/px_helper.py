"""Helpers for the tests of plugin code that tries to end the host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_host.testing import Host

HERE = Path(__file__).parent
HOWS = ["sys.exit", "SystemExit", "KeyboardInterrupt", "GeneratorExit", "os._exit"]

SURVIVES = "a plugin cannot end the host"
TEXTS = {
    "sys.exit": f"SystemExit: sys.exit(3) called; {SURVIVES}",
    "SystemExit": f"SystemExit: sys.exit('leaving') called; {SURVIVES}",
    "KeyboardInterrupt": f"KeyboardInterrupt: raised; {SURVIVES}",
    "GeneratorExit": f"GeneratorExit: raised; {SURVIVES}",
    "os._exit": f"os._exit(4) called, refused; {SURVIVES}",
}
"""What each way of ending the code becomes (the tool result; after ``path:line: `` in an extension_error)."""

RAISING_LINE = {
    "sys.exit": "sys.exit(3)",
    "SystemExit": 'raise SystemExit("leaving")',
    "KeyboardInterrupt": "raise KeyboardInterrupt",
    "GeneratorExit": "raise GeneratorExit",
    "os._exit": "os._exit(status)",
}


def ext(name: str) -> str:
    """Path of one of the extension files next to this module."""
    return str(HERE / f"{name}.py")


def where(how: str, file: str = "px_exits") -> str:
    """``path:line`` of the line of ``file`` that ends the code the way ``how`` says."""
    path = ext(file)
    lines = Path(path).read_text().splitlines()
    return f"{path}:{next(i for i, line in enumerate(lines, 1) if line.strip() == RAISING_LINE[how])}"


def report(how: str, file: str = "px_exits") -> str:
    """The ``error`` of the extension_error for ``how`` raised in ``file``."""
    return f"{where(how, file)}: {TEXTS[how]}"


def errors(host: Host, after: int = 0) -> list[tuple[str, str, str]]:
    return [
        (e["extensionPath"], e["event"], e["error"])
        for e in host.client.events[after:]
        if e.get("type") == "extension_error"
    ]


def px_call(fail: str, call_id: str = "t1") -> dict[str, Any]:
    """A faux step whose assistant calls ``px_tool`` with ``{"fail": fail}``."""
    return {"content": [{"type": "toolCall", "name": "px_tool", "arguments": {"fail": fail}, "id": call_id}]}
