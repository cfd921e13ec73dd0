"""Commands that print to stdout end quietly when its reader has left (``atomic schema | true``):
exit 141, as a writer killed by SIGPIPE, and nothing on stderr. Before: a BrokenPipeError
traceback and exit 1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_helper import atomic

KEY = {"ANTHROPIC_API_KEY": "sk-ant-test-not-real"}


@pytest.mark.parametrize(
    "args",
    [("schema",), ("--list-models",), ("sessions", "list"), ("plugins", "--json"), ("plugins",)],
    ids=lambda a: " ".join(a),
)
def test_a_reader_that_left_ends_the_command_quietly(args: tuple[str, ...], tmp_path: Path) -> None:
    if args == ("sessions", "list"):  # some sessions to list
        faux = tmp_path / "faux.jsonl"
        faux.write_text("\n".join(json.dumps(f"answer {i}") for i in range(3)) + "\n")
        for i in range(3):
            run = atomic(tmp_path, "--provider", "faux", "-p", f"q{i}", "-q", env={"ATOMIC_FAUX_SCRIPT": str(faux)})
            assert run.returncode == 0, run.stderr
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write fails with EPIPE
    try:
        proc = atomic(tmp_path, *args, env=KEY, stdout=write)
    finally:
        os.close(write)
    assert (proc.returncode, proc.stderr.decode()) == (141, "")
