"""Lets the tests here import the shared ``host_helpers`` (test dirs are not packages)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "host"))
