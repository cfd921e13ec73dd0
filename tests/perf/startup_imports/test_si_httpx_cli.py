"""httpx without its command-line client: atomic_host.kit.llm keeps httpx._main (click, rich,
pygments) out of the host, and httpx.main() still runs the real client when called."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

PROBE = r"""
import json, sys
import atomic_host.kit.llm
import httpx
loaded = {name: name in sys.modules for name in ("click", "rich.console", "pygments.lexers", "httpx._main")}
try:
    httpx.main(["--help"])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"before": loaded, "exit": code, "after": "click" in sys.modules}))
"""


@pytest.mark.skipif(importlib.util.find_spec("click") is None, reason="no click here: httpx skips its CLI anyway")
def test_httpx_loads_without_its_cli_and_the_cli_still_runs() -> None:
    env = {**os.environ, "ATOMIC_PLAIN": "0"}  # the stand-in is a tactic (kit/_fast/httpx_cli.py): on
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 0, run.stderr
    *help_text, last = run.stdout.splitlines()
    result = json.loads(last)
    assert result["before"] == {"click": False, "rich.console": False, "pygments.lexers": False, "httpx._main": True}
    assert result["exit"] == 0
    assert result["after"] is True  # the real client was imported to answer --help
    assert any("Usage" in line for line in help_text)


def test_a_process_that_imported_httpx_first_keeps_its_httpx() -> None:
    probe = "import httpx; import atomic_host.kit.llm; print(type(httpx.main).__name__)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    expected = "function" if importlib.util.find_spec("click") is None else "Command"
    assert run.stdout.strip() == expected


def test_without_the_cli_dependencies_httpx_main_says_what_httpx_says() -> None:
    """click missing (as in a plain install): httpx.main() prints httpx's own message and exits 1."""
    probe = "import sys; sys.modules['click'] = None; import atomic_host.kit.llm, httpx; httpx.main()"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("The httpx command line client could not run because the required dependencies")
    assert "pip install 'httpx[cli]'" in run.stdout
