"""The credentials this process knows, and the one function that masks them in everything it writes.

Whoever learns a credential registers it — the model registry (env vars, ``auth.json``,
``models.json`` after ``$VAR``/``!command`` resolution), ``--api-key``, ``login_provider`` — and
every sink masks with it: the stdout writer, ``sys.stdout``/``sys.stderr``, session entries,
compaction backups, HTML exports, tool results and shell output. A registered value is replaced by
``[REDACTED:<label>]`` (the label says where it came from, e.g. ``ANTHROPIC_API_KEY``).

Cost: with nothing registered every entry point returns after one ``None`` check. With secrets it
is one C-level substring search per known form (``str.__contains__``), and ``str.replace`` only for
the forms actually present — measured faster than one alternation regex for the handful of keys a
host knows (a regex is ~6x slower on 50 KB of tool output). Values shorter than
:data:`MIN_SECRET_LENGTH` are ignored: they are placeholders (``"ollama"``, ``"dummy"``, ``"none"``,
``"EMPTY"``), not credentials, and masking them would rewrite ordinary words everywhere.

Each value is searched in the forms it takes in our outputs: as is, JSON-escaped (ASCII and UTF-8
flavours) and HTML-escaped. For ordinary tokens (letters, digits, ``-_.~+/=``) these are one string.

Markers are made of ``[]:``, letters, digits and ``_.-/``; a registered value never survives
:meth:`SecretSet.mask` unless it could be assembled from marker text plus its neighbours, i.e. a
"credential" that itself contains ``[REDACTED:``-like text.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

__all__ = ["active", "mask", "mask_json", "mask_obj", "register", "register_url", "url_credentials"]

MIN_SECRET_LENGTH = 8
"""Shorter values are placeholders, not credentials (see the module docstring)."""

_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/-]")
_CONTAINERS = (dict, list, tuple)


def marker(label: str) -> str:
    """The replacement text for a value registered under ``label``."""
    return f"[REDACTED:{_LABEL_UNSAFE.sub('_', label) or 'secret'}]"


class _Compiled:
    """An immutable snapshot of the registered forms; replaced whole on every registration so
    readers on other threads (the stderr wrapper) never see a half-built one."""

    __slots__ = ("by_first", "json", "json_bytes", "json_bytes_used", "text")

    def __init__(self, text: tuple[tuple[str, str], ...], json_forms: tuple[tuple[str, str], ...]) -> None:
        self.text = text
        """``(form, marker)`` for plain text, longest form first (a value that extends another wins)."""
        self.json = json_forms
        """The JSON-escaped forms only: masking encoded JSON never touches its syntax."""
        self.json_bytes = tuple((form.encode(), mark.encode()) for form, mark in json_forms if _utf8(form))
        """:attr:`json` in UTF-8, for lines kept as bytes. UTF-8 is self-synchronising, so each
        replacement matches exactly where it matches in the text; a form with a lone surrogate
        has no UTF-8 and never occurs in an encoded line (both encoders escape surrogates)."""
        self.json_bytes_used = frozenset(b for form, _mark in self.json_bytes for b in form)
        """Every byte value of those forms: a seam between two bytes outside it cannot be inside a match."""
        groups: dict[str, list[str]] = {}
        for form, _mark in text:
            groups.setdefault(form[0], []).append(form)
        self.by_first = tuple((first, len(forms[0]), tuple(forms)) for first, forms in groups.items())
        """``(first character, longest length, forms)``: one ``find`` per distinct first character
        decides whether a stream tail can start a value at all (keys mostly share theirs, e.g. ``s``)."""


def _utf8(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _forms(value: str) -> tuple[set[str], set[str]]:
    """(plain-text forms, JSON-text forms) of one value."""
    # lazy: html and json only once a credential is registered to be masked
    import html
    import json

    ascii_json = json.dumps(value)[1:-1]
    utf8_json = json.dumps(value, ensure_ascii=False)[1:-1]
    # the protocol writer's (core.jsonfast with orjson): UTF-8, but the line breaks a client
    # could split on escaped (without this form a value with both "é" and U+2028 went out unmasked)
    line_json = utf8_json.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029").replace("\x85", "\\u0085")
    json_forms = {ascii_json, utf8_json, line_json}
    text_forms = {value, *json_forms, html.escape(value), html.escape(utf8_json)}
    return text_forms, json_forms


class SecretSet:
    """A set of known credentials and the masking functions over it (the host uses one, module-level)."""

    def __init__(self, min_length: int = MIN_SECRET_LENGTH) -> None:
        self.min_length = min_length
        self._labels: dict[str, str] = {}  # value -> label (first registration wins)
        self._compiled: _Compiled | None = None

    # -- registration ---------------------------------------------------------------------------

    def register(self, value: Any, label: str) -> bool:
        """Remember ``value`` (surrounding whitespace stripped) as a credential; True when it is new.

        Non-strings and values shorter than ``min_length`` are ignored. Registrations last for the
        life of the process (a logged-out key is still a key that was seen).
        """
        if not isinstance(value, str):
            return False
        value = value.strip()
        if len(value) < self.min_length or value in self._labels:
            return False
        self._labels[value] = label
        self._rebuild()
        return True

    def _rebuild(self) -> None:
        text: dict[str, str] = {}
        json_forms: dict[str, str] = {}
        for value, label in self._labels.items():
            mark = marker(label)
            plain, encoded = _forms(value)
            for form in plain:
                text.setdefault(form, mark)
            for form in encoded:
                json_forms.setdefault(form, mark)

        def ordered(forms: dict[str, str]) -> tuple[tuple[str, str], ...]:
            return tuple(sorted(forms.items(), key=lambda item: (-len(item[0]), item[0])))

        self._compiled = _Compiled(ordered(text), ordered(json_forms))

    @property
    def active(self) -> bool:
        """True once anything is registered."""
        return self._compiled is not None

    def __len__(self) -> int:
        return len(self._labels)

    # -- masking --------------------------------------------------------------------------------

    def mask(self, text: str) -> str:
        """``text`` with every registered value replaced by its marker (the same object when clean)."""
        compiled = self._compiled
        if compiled is None or not isinstance(text, str):
            return text
        return _replace(text, compiled.text)

    def mask_json(self, text: str) -> str:
        """Mask encoded JSON text; valid JSON stays valid (only escaped forms, inside strings, match)."""
        compiled = self._compiled
        if compiled is None:
            return text
        return _replace(text, compiled.json)

    def mask_json_bytes(self, data: bytes) -> bytes:
        """:meth:`mask_json` of UTF-8 encoded JSON: ``mask_json(data.decode()).encode()``, and
        ``data`` itself when clean."""
        compiled = self._compiled
        if compiled is None:
            return data
        for form, mark in compiled.json_bytes:
            if form in data:
                data = data.replace(form, mark)
        return data

    def splice_safe(self, pieces: list[bytes]) -> bool:
        """True when masking each piece alone (:meth:`mask_json_bytes`) gives the bytes masking
        their concatenation gives: no registered form contains a byte next to a seam. Such a byte
        is never replaced, and a match across the seam would have to contain it (a JSON line's
        seams sit between punctuation such as ``:[`` and ``],``, which no ordinary key holds)."""
        compiled = self._compiled
        if compiled is None:
            return True
        used = compiled.json_bytes_used
        previous = None
        for piece in pieces:
            if not piece:
                continue
            if previous is not None and (previous[-1] in used or piece[0] in used):
                return False
            previous = piece
        return True

    def token(self) -> object | None:
        """The current registrations as an opaque value, a new one after every registration (None
        before the first): what a cache of masked text is kept for."""
        return self._compiled

    def mask_obj(self, obj: Any) -> Any:
        """A JSON-like value (dicts, lists, tuples, strings; keys too) with secrets masked.

        Returns ``obj`` itself when nothing needs masking — the common case costs one walk and no
        copies; otherwise a masked deep copy. Iterative, so nesting depth is no limit.
        """
        compiled = self._compiled
        if compiled is None:
            return obj
        if isinstance(obj, str):
            return _replace(obj, compiled.text)
        if not isinstance(obj, _CONTAINERS) or not _contains(obj, compiled.text):
            return obj
        return _rebuild_masked(obj, compiled.text)

    def stream(self) -> StreamMasker:
        """A masker for one stream of text pieces (deltas, pipe reads): see :class:`StreamMasker`."""
        return StreamMasker(self)

    def held_length(self, text: str) -> int:
        """Length of the longest suffix of ``text`` that is a proper prefix of a registered form."""
        compiled = self._compiled
        if compiled is None:
            return 0
        size = len(text)
        best = 0
        for first, longest, forms in compiled.by_first:
            start = text.find(first, max(0, size - longest + 1))
            if start == -1:
                continue
            for form in forms:
                pos = text.find(first, max(start, size - len(form) + 1))
                while pos != -1 and size - pos > best:
                    if form.startswith(text[pos:]):
                        best = size - pos
                        break
                    pos = text.find(first, pos + 1)
        return best


def _replace(text: str, forms: tuple[tuple[str, str], ...]) -> str:
    for form, mark in forms:
        if form in text:
            text = text.replace(form, mark)
    return text


def _dirty(text: str, forms: tuple[tuple[str, str], ...]) -> bool:
    return any(form in text for form, _mark in forms)


def _contains(root: Any, forms: tuple[tuple[str, str], ...]) -> bool:
    stack = [root]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else ((None, v) for v in node)
        for key, value in items:
            if isinstance(key, str) and _dirty(key, forms):
                return True
            if isinstance(value, str):
                if _dirty(value, forms):
                    return True
            elif isinstance(value, _CONTAINERS):
                stack.append(value)
    return False


def _rebuild_masked(root: Any, forms: tuple[tuple[str, str], ...]) -> Any:
    """A deep copy of ``root`` with every string masked, built post-order with an explicit stack."""

    def fix(value: Any) -> Any:
        return _replace(value, forms) if isinstance(value, str) else value

    def frame(node: Any) -> list[Any]:
        return [node, list(node.items()) if isinstance(node, dict) else list(node), 0, []]

    def finish(node: Any, out: list[Any]) -> Any:
        if isinstance(node, dict):
            return dict(out)
        return tuple(out) if isinstance(node, tuple) else out

    stack = [frame(root)]
    while True:
        top = stack[-1]
        node, items, index, out = top
        if index == len(items):
            stack.pop()
            built = finish(node, out)
            if not stack:
                return built
            parent = stack[-1]
            if isinstance(parent[0], dict):
                parent[3].append((fix(parent[1][parent[2] - 1][0]), built))
            else:
                parent[3].append(built)
            continue
        top[2] = index + 1
        item = items[index]
        value = item[1] if isinstance(node, dict) else item
        if isinstance(value, _CONTAINERS):
            stack.append(frame(value))  # its result is appended when it finishes
        elif isinstance(node, dict):
            out.append((fix(item[0]), fix(value)))
        else:
            out.append(fix(value))


class StreamMasker:
    """Masks a text stream that arrives in pieces, so a secret split across two pieces is still caught.

    :meth:`feed` masks what it can and holds back the longest tail that could be the start of a
    registered value; :meth:`flush` releases that tail at the end of the stream. Nothing a caller
    joins from the returned pieces ever contains a registered value, and nothing is lost.
    """

    __slots__ = ("_held", "_secrets")

    def __init__(self, secrets: SecretSet) -> None:
        self._secrets = secrets
        self._held = ""

    def feed(self, piece: str) -> str:
        """The part of ``held + piece`` that is safe to emit now (may be ``""``)."""
        text = self._held + piece if self._held else piece
        if not self._secrets.active:
            self._held = ""
            return text
        text = self._secrets.mask(text)
        keep = self._secrets.held_length(text)
        if keep:
            self._held = text[-keep:]
            return text[:-keep]
        self._held = ""
        return text

    def flush(self) -> str:
        """The held-back tail (a partial value cannot be masked: it is emitted as it is)."""
        held, self._held = self._held, ""
        return held

    @property
    def pending(self) -> bool:
        return bool(self._held)


class MaskedTextStream:
    """A text stream wrapper (``sys.stdout``/``sys.stderr``) that masks every ``write``.

    Everything else is the wrapped stream's own (``fileno``, ``isatty``, ``flush``, ``buffer``…).
    Bytes written to ``.buffer`` or straight to the file descriptor bypass it.
    """

    def __init__(self, inner: TextIO, secrets: SecretSet | None = None) -> None:
        self._inner = inner
        self._secrets = secrets or _default

    def write(self, text: str) -> int:
        self._inner.write(self._secrets.mask(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


_default = SecretSet()
"""The host's one set (module functions below use it)."""


def register(value: Any, label: str) -> bool:
    """Register a credential with the host's set (see :meth:`SecretSet.register`)."""
    return _default.register(value, label)


_URL_CREDENTIAL_NAME = re.compile(r"(?i)key|token|secret|pass|pwd|auth|cred|sig|session|private|code|(^|_)pat($|_)")
"""Query parameters named like this carry a credential (``key``, ``api_key``, ``access_token``, a
SAS ``sig``, ``password``, …)."""


def url_credentials(url: str) -> list[str]:
    """The credentials ``url`` carries, as written in it and percent-decoded: the userinfo's
    password (or its user name when there is no password: a token used as user) and the values of
    query parameters named like credentials. Each also comes as the text around it in the URL
    (``user:password``, ``key=value``), so a value too short to be masked on its own is still
    masked where the URL shows it."""
    # lazy: urllib.parse only for a URL that may carry credentials
    from urllib.parse import unquote

    found: list[str] = []
    rest = url.split("#", 1)[0]
    scheme, sep, rest = rest.partition("://")
    if not sep:
        rest = scheme
    netloc, _, path = rest.partition("/")
    if "@" in netloc:
        userinfo = netloc.rsplit("@", 1)[0]
        user, colon, password = userinfo.partition(":")
        secret = password if colon else user
        found += [userinfo, secret, unquote(secret)]
    query = (netloc + path).partition("?")[2]
    for pair in query.split("&"):
        name, equals, value = pair.partition("=")
        if equals and value and _URL_CREDENTIAL_NAME.search(unquote(name)):
            found += [pair, value, unquote(value)]
    return list(dict.fromkeys(v for v in found if v))


def register_url(url: Any, label: str) -> None:
    """Register the credentials a URL carries (:func:`url_credentials`) with the host's set; a
    non-string is ignored."""
    if isinstance(url, str) and ("@" in url or "?" in url):
        for value in url_credentials(url):
            _default.register(value, label)


def active() -> bool:
    """True once the host knows any credential."""
    return _default._compiled is not None


def mask(text: str) -> str:
    """Mask plain text with the host's set."""
    return _default.mask(text)


def mask_json(text: str) -> str:
    """Mask encoded JSON text with the host's set."""
    return _default.mask_json(text)


def mask_json_bytes(data: bytes) -> bytes:
    """Mask UTF-8 encoded JSON with the host's set (the same object when clean)."""
    return _default.mask_json_bytes(data)


def splice_safe(pieces: list[bytes]) -> bool:
    """Whether the pieces of one line can be masked one by one (see :meth:`SecretSet.splice_safe`)."""
    return _default.splice_safe(pieces)


def token() -> object | None:
    """The host's registrations as an opaque value (see :meth:`SecretSet.token`)."""
    return _default.token()


def mask_obj(obj: Any) -> Any:
    """Mask a JSON-like value with the host's set (the same object when clean)."""
    return _default.mask_obj(obj)


def stream() -> StreamMasker:
    """A :class:`StreamMasker` over the host's set."""
    return _default.stream()


def install_stdio() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` so every text write is masked (idempotent)."""
    for name in ("stdout", "stderr"):
        current = getattr(sys, name)
        if current is not None and not isinstance(current, MaskedTextStream):
            setattr(sys, name, MaskedTextStream(current))
