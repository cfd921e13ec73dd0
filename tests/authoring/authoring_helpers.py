"""Helpers for the extension-author kit tests (template, docs, examples)."""

from __future__ import annotations

from pathlib import Path

from atomic_host.protocol import validate_output_line
from atomic_host.testing import Host

REPO = Path(__file__).resolve().parents[2]


def assert_protocol_lines(host: Host) -> None:
    """Every stdout line the host printed is one valid protocol record."""
    assert host.client.lines, "host printed nothing"
    for line in host.client.lines:
        validate_output_line(line)
