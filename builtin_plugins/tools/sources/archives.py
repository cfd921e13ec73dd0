"""Archives as folders: list the members of zip/jar/whl, tar (plain, gz, bz2, xz) and ``.gz`` files,
and read one member's bytes. Standard library only (the search worker imports it too).

Nothing is ever extracted to disk, so a member named ``../../x`` or ``/etc/passwd`` is a name to
show, never a place written to. Every read goes through a :class:`~.limits.Budget`: a member that
declares more than :data:`~.limits.MAX_MEMBER_BYTES` is refused before a byte is decompressed, one
that lies about its size (a zip bomb) stops at the cap, and the compressed input is read in
chunks that check the deadline and the abort flag.
"""

from __future__ import annotations

import gzip
import lzma
import os
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from builtin_plugins.tools.sources.limits import (
    MAX_MEMBER_BYTES,
    Budget,
    LimitExceeded,
    SourceError,
    human_size,
    ticking_file,
)

_SUFFIXES = (
    (".tar.gz", "tar"),
    (".tgz", "tar"),
    (".tar.bz2", "tar"),
    (".tbz2", "tar"),
    (".tbz", "tar"),
    (".tar.xz", "tar"),
    (".txz", "tar"),
    (".tar", "tar"),
    (".zip", "zip"),
    (".jar", "zip"),
    (".whl", "zip"),
    (".gz", "gz"),
)
KINDS = tuple(suffix for suffix, _ in _SUFFIXES)
MAX_LISTED = 100_000
"""Members kept in a listing; the walk goes on counting past it."""


class MissingMember(SourceError):
    """The archive has no file of that name."""


@dataclass
class Member:
    name: str
    """As stored, with a leading ``./`` or ``/`` removed; directories end without ``/``."""
    size: int
    is_dir: bool = False
    link: str | None = None
    """A symlink's target (tar)."""


def archive_kind(path: str) -> str | None:
    """``"zip"``, ``"tar"`` or ``"gz"`` by the file name, else None."""
    lower = path.lower()
    for suffix, kind in _SUFFIXES:
        if lower.endswith(suffix):
            return kind
    return None


def clean_name(name: str) -> str:
    """A member name as matched against what the model asks for: no leading ``./`` or ``/``."""
    while name.startswith("./"):
        name = name[2:]
    return name.lstrip("/").rstrip("/")


def _gz_member_name(path: str) -> str:
    base = os.path.basename(path)
    return base[:-3] if base.lower().endswith(".gz") else base


def _zip_errors() -> tuple[type[BaseException], ...]:
    return (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError)


def _tar_errors() -> tuple[type[BaseException], ...]:
    return (tarfile.TarError, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)


def iter_members(path: str, kind: str, budget: Budget) -> Iterator[Member]:
    """The members in stored order (a ``.gz`` has one: its name without ``.gz``)."""
    label = os.path.basename(path)
    if kind == "gz":
        yield Member(_gz_member_name(path), -1)
        return
    try:
        with ticking_file(path, budget) as f:
            if kind == "zip":
                with zipfile.ZipFile(f) as zf:
                    for info in zf.infolist():
                        budget.tick()
                        yield Member(clean_name(info.filename), info.file_size, info.is_dir())
                return
            with tarfile.open(fileobj=f, mode="r:*") as tf:
                while (info := tf.next()) is not None:
                    budget.tick()
                    tf.members.clear()  # a huge tarball must not pile up TarInfo objects
                    yield Member(
                        clean_name(info.name), info.size, info.isdir(), info.linkname if info.issym() else None
                    )
    except LimitExceeded:
        raise
    except _zip_errors() + _tar_errors() as e:
        if isinstance(e, SourceError):
            raise
        raise SourceError(f"Cannot read archive {label}: {e}") from e


def read_member(path: str, kind: str, name: str, budget: Budget, cap: int = MAX_MEMBER_BYTES) -> bytes:
    """The bytes of member ``name`` (matched after :func:`clean_name`), at most ``cap`` of them."""
    label = f"{os.path.basename(path)}:{name}"
    want = clean_name(name)
    try:
        if kind == "gz":
            if want != _gz_member_name(path):
                raise SourceError(f"{os.path.basename(path)} holds only {_gz_member_name(path)}")
            with ticking_file(path, budget) as raw, gzip.GzipFile(fileobj=raw) as f:
                return budget.read_capped(f, cap, label)
        with ticking_file(path, budget) as f:
            if kind == "zip":
                return _read_zip(f, want, label, budget, cap)
            return _read_tar(f, want, label, budget, cap)
    except SourceError:
        raise
    except _zip_errors() + _tar_errors() as e:
        raise SourceError(f"Cannot read {label}: {e}") from e


def iter_contents(
    path: str, kind: str, budget: Budget, cap: int, wanted: Callable[[Member], bool]
) -> Iterator[tuple[Member, bytes]]:
    """``(member, bytes)`` of each regular member ``wanted`` accepts and no bigger than ``cap``, in one
    pass over the archive (reading them one by one would scan a tarball from its start each time)."""
    label = os.path.basename(path)
    try:
        if kind == "gz":
            member = Member(_gz_member_name(path), -1)
            if wanted(member):
                yield member, read_member(path, kind, member.name, budget, cap)
            return
        with ticking_file(path, budget) as f:
            if kind == "zip":
                with zipfile.ZipFile(f) as zf:
                    for info in zf.infolist():
                        member = Member(clean_name(info.filename), info.file_size, info.is_dir())
                        if member.is_dir or member.size > cap or not wanted(member):
                            continue
                        with zf.open(info) as data:
                            yield member, budget.read_capped(data, cap, f"{label}:{member.name}")
                return
            with tarfile.open(fileobj=f, mode="r:*") as tf:
                while (info := tf.next()) is not None:
                    budget.tick()
                    tf.members.clear()
                    member = Member(clean_name(info.name), info.size)
                    if not info.isfile() or info.size > cap or not wanted(member):
                        continue
                    data = tf.extractfile(info)
                    if data is not None:
                        with data:
                            yield member, budget.read_capped(data, cap, f"{label}:{member.name}")
    except SourceError:
        raise
    except _zip_errors() + _tar_errors() as e:
        raise SourceError(f"Cannot read archive {label}: {e}") from e


def _too_big(label: str, size: int, cap: int) -> SourceError:
    return LimitExceeded(
        f"{label} is {human_size(size)}, over the {human_size(cap)} read limit. "
        "Extract part of it with bash (e.g. unzip -p / tar -xOf … | head -c 100000)."
    )


def _read_zip(f: object, want: str, label: str, budget: Budget, cap: int) -> bytes:
    with zipfile.ZipFile(f) as zf:  # type: ignore[arg-type]
        info = next((i for i in zf.infolist() if clean_name(i.filename) == want and not i.is_dir()), None)
        if info is None:
            raise MissingMember(want)
        if info.file_size > cap:
            raise _too_big(label, info.file_size, cap)
        with zf.open(info) as member:
            return budget.read_capped(member, cap, label)


def _read_tar(f: object, want: str, label: str, budget: Budget, cap: int) -> bytes:
    with tarfile.open(fileobj=f, mode="r:*") as tf:  # type: ignore[call-overload]
        seen: dict[str, tarfile.TarInfo] = {}
        while (info := tf.next()) is not None:
            budget.tick()
            tf.members.clear()
            name = clean_name(info.name)
            if info.isfile() or info.islnk() or info.issym():
                seen[name] = info
            if name == want and not info.isdir():
                break
        else:
            raise MissingMember(want)
        for _ in range(8):  # links inside the archive, never outside it
            if info.issym() or info.islnk():
                target = clean_name(
                    os.path.normpath(os.path.join(os.path.dirname(name), info.linkname))
                    if info.issym()
                    else info.linkname
                )
                if target not in seen:
                    raise SourceError(f"{label} is a link to {info.linkname}, which is not in the archive")
                name, info = target, seen[target]
                continue
            break
        if not info.isfile():
            raise SourceError(f"{label} is not a regular file")
        if info.size > cap:
            raise _too_big(label, info.size, cap)
        member = tf.extractfile(info)
        if member is None:
            raise SourceError(f"{label} is not a regular file")
        with member:
            return budget.read_capped(member, cap, label)


def is_archive_dir(members: list[Member], want: str) -> bool:
    """Whether ``want`` names a folder of the archive (an entry of its own, or a prefix of some)."""
    prefix = want + "/"
    return any((m.name == want and m.is_dir) or m.name.startswith(prefix) for m in members)
