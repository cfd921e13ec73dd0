"""Writes a marker on stderr when the host loads it (for get_stderr)."""

import sys

print("client-stderr-marker: loaded", file=sys.stderr, flush=True)
