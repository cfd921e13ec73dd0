"""Fixtures for the tests of one session touched by several host processes (issue 24)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
