"""Helpers for the extension-author kit tests (template, docs, examples)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
