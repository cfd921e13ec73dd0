"""Shared by the ``px_*`` extensions (a helper module beside them, imported as ``from _px_how import end_it``):
ends the calling code the way ``PX_HOW`` says."""

import os
import sys

HOW = os.environ.get("PX_HOW", "sys.exit")


def end_it() -> None:
    if HOW == "sys.exit":
        sys.exit(3)
    if HOW == "SystemExit":
        raise SystemExit("leaving")
    if HOW == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if HOW == "GeneratorExit":
        raise GeneratorExit
    if HOW == "os._exit":
        _library_exit(4)


def _library_exit(status: int) -> None:
    """As a library would: the call is not in the plugin's own function."""
    os._exit(status)
