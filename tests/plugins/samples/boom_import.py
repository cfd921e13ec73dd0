"""Raises while being imported."""

raise RuntimeError("boom at import")
