"""Writes ``<this dir>/ran.marker`` when imported: proves whether project code ran."""

from pathlib import Path

Path(__file__).with_name("ran.marker").write_text("ran")
