"""Lets the tests here import ``appr_helpers`` and the shared ``agent_helpers``, ``pm_helpers`` and ``acp_helpers``
(test dirs are not packages)."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "agent"))
sys.path.insert(0, str(HERE.parent / "print_mode"))
sys.path.insert(0, str(HERE.parent / "acp"))
sys.path.insert(0, str(HERE))
