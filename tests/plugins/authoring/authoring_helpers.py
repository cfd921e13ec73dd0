"""Helpers for the extension-author kit tests (template, docs, examples)."""

from __future__ import annotations

from suite_paths import ROOT as ROOT_DIR

REPO = ROOT_DIR
