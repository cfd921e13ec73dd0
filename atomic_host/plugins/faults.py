"""What a plugin's failure becomes: its text, its place, and the rule that plugin code never ends the host.

Every ``BaseException`` plugin code raises is that plugin's error: ``sys.exit()`` (``SystemExit``),
``KeyboardInterrupt``, ``GeneratorExit``, an exception group, a class of its own. The one exception
is ``asyncio.CancelledError``: the host's own cancellation (``abort``, a hook's time bound, shutdown)
must reach the code it stops. The host's signal handlers only schedule work on the loop, so a
``KeyboardInterrupt`` inside plugin code is the plugin's own, never the user's Ctrl-C. The catch
sites (hook calls, tool handlers, slash commands, provider streams, imports) read::

    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
        ...

``os._exit`` cannot be caught; :func:`guard_exit` replaces it for the life of a host process, so a
call from plugin code (or a library it uses) raises :class:`ExitRefused` instead. What no Python code
can stop: a signal the process sends itself (``os.kill(os.getpid(), SIGKILL)``; SIGTERM/SIGINT and
``_thread.interrupt_main()`` end the host as a signal does), ``os.abort()``, C code calling ``exit()``
(``ctypes``), a crash of the interpreter, and a reference to ``os._exit`` taken before the host
started (the standard library and the host's own modules: none of them call it).
"""

from __future__ import annotations

import asyncio
import logging
import os
import posix
import sys
import traceback
from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from atomic_host.kit.log import log

T = TypeVar("T")

HOST_SURVIVES = "a plugin cannot end the host"

_real_exit = os._exit


class ExitRefused(SystemExit):
    """Raised in place of ``os._exit(status)`` called in a host process (see :func:`guard_exit`)."""


class PluginFault(Exception):
    """A ``BaseException`` from plugin code that ran as its own task, carried as an ordinary error
    (``original``): a ``SystemExit`` escaping a task leaves the event loop and ends the process."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(type(original).__name__)  # not str(original): a plugin's __str__ may raise
        self.original = original


class HookFailed:
    """What a fail-closed implementation that failed yields in place of a result: its extensionPath
    and what went wrong (the hook's ``on_failure`` rule turns it into the result it stands for)."""

    __slots__ = ("path", "why")

    def __init__(self, path: str, why: str) -> None:
        self.path, self.why = path, why


async def contained(awaitable: Awaitable[T]) -> T:
    """Await plugin code that is about to become a task of its own (``asyncio.ensure_future``):
    a ``BaseException`` that is no cancellation leaves as :class:`PluginFault`."""
    try:
        return await awaitable
    except (Exception, asyncio.CancelledError):
        raise
    except BaseException as exc:
        raise PluginFault(exc) from exc


def original(exc: BaseException) -> BaseException:
    """The exception plugin code raised (unwrapping :class:`PluginFault`)."""
    return exc.original if isinstance(exc, PluginFault) else exc


def fault_text(exc: BaseException) -> str:
    """What the plugin did, in words: the message of an ordinary exception (its type name when it
    has none); for an exit, an interrupt or another ``BaseException``, its type, what was called or
    raised, and that the host goes on."""
    exc = original(exc)
    text = _shown(str, exc)
    if isinstance(exc, Exception):
        return text or type(exc).__name__
    if isinstance(exc, ExitRefused):  # the host's stand-in: the call is the news, not the type
        return f"os._exit({_shown(repr, exc.code)}) called, refused; {HOST_SURVIVES}"
    if isinstance(exc, SystemExit):
        done = f"sys.exit({'' if exc.code is None else _shown(repr, exc.code)}) called"
    else:
        done = f"{text} raised" if text else "raised"
    return f"{type(exc).__name__}: {done}; {HOST_SURVIVES}"


def _shown(show: Any, value: Any) -> str:
    """``str``/``repr`` of a plugin's object, which may itself raise (a hostile ``__str__``)."""
    try:
        return show(value)
    except BaseException:  # whatever it raises (even SystemExit) is not the report's to propagate
        return f"<unprintable {type(value).__name__}>"


def fault_report(exc: BaseException, roots: Iterable[Path] = ()) -> str:
    """``path:line: Type: message``: :func:`fault_text` with the type and the place it was raised
    (:func:`fault_place`); just the text when no frame is known."""
    exc = original(exc)
    where = fault_place(exc, roots)
    message = str(exc.msg) if isinstance(exc, SyntaxError) and exc.msg else fault_text(exc)
    text = f"{type(exc).__name__}: {message}" if isinstance(exc, Exception) else message  # else it names it
    return f"{where}: {text}" if where else fault_text(exc)


def fault_place(exc: BaseException, roots: Iterable[Path] = ()) -> str | None:
    """``path:line`` where plugin code raised ``exc``: a syntax error's own place, else the deepest
    frame of its traceback in a file under one of ``roots`` (the plugin's file or package), else
    the deepest frame outside the import machinery."""
    exc = original(exc)
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{exc.filename}:{exc.lineno}"
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not f.filename.startswith("<frozen") and f.filename != __file__  # not the os._exit guard's frame
    ]
    prefixes = tuple(str(r) for r in roots)
    own = [f for f in frames if prefixes and f.filename.startswith(prefixes)]
    frame = (own or frames or [None])[-1]
    return f"{frame.filename}:{frame.lineno}" if frame is not None else None


def plugin_roots(module: Any, file: Path | None = None) -> list[Path]:
    """Where a plugin's own code lives: a local extension's directory (its helper modules beside
    it), a package's directory, or a module's file."""
    if file is not None:
        return [file.parent]
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return []
    p = Path(path)
    return [p.parent if p.name == "__init__.py" else p]


def traceback_text(exc: BaseException) -> str:
    """The full traceback (``ATOMIC_LOG_LEVEL=DEBUG`` prints it with each plugin error)."""
    return "".join(traceback.format_exception(original(exc))).rstrip()


def debug_traceback(exc: BaseException) -> None:
    """Log the traceback at DEBUG; formatted only then (a hook may fail on every event)."""
    if log.isEnabledFor(logging.DEBUG):
        log.debug(traceback_text(exc))


def guard_exit() -> None:
    """From now on, ``os._exit`` in this process raises :class:`ExitRefused` (a ``SystemExit``,
    so ``except Exception`` in a library does not swallow it) and says who called it on stderr; the
    host leaves through :func:`host_exit`. A forked child (another pid) exits as asked."""
    pid = os.getpid()

    def refuse(status: int) -> NoReturn:
        if os.getpid() != pid:
            _real_exit(status)
        caller = sys._getframe(1)
        where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
        log.warning(f"os._exit({status!r}) called at {where}; refused: {HOST_SURVIVES}")
        raise ExitRefused(status)

    os._exit = posix._exit = refuse


def host_exit(status: int) -> NoReturn:
    """The host's own immediate exit (after a signal, or with the client gone)."""
    _real_exit(status)
