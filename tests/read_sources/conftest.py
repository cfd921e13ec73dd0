"""Helpers for the read-sources tests: a scripted model calls tools through the real ``atomic --mode rpc``,
and the test looks at the tool results the model received on its next call."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
