"""A bash command as permission rules see it: its subcommands, and the prefix a session approval
remembers. Not a shell parser: enough to keep ``Bash(npm test:*)`` from allowing ``npm test && rm -rf ~``.

One pass over the text (linear in its length): quotes and backslashes are followed, unquoted
whitespace collapses to one space, and the command splits at ``&&``, ``||``, ``;``, ``|``, ``&``,
newlines, parentheses, ``$(`` and backticks. A command with a substitution (``$(…)``, backticks,
``<(…)``) or an unclosed quote is *opaque*: allow rules never cover it (it is asked about), deny and
ask rules still see every piece.
"""

from __future__ import annotations

import re

from atomic_host.contract.records import record

_SEPARATORS = frozenset(";|&\n()`")
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
"""A word that names a subcommand (``test`` in ``npm test``): no path, no flag, no value."""

WRAPPERS = frozenset(
    {
        "sudo", "su", "doas", "env", "xargs", "exec", "eval", "command", "builtin", "nohup", "nice", "time", "timeout",
        "watch", "strace", "bash", "sh", "zsh", "fish", "dash", "ksh", "python", "python3", "node", "deno", "bun",
        "ruby", "perl", "php", "lua", "npx", "pnpx", "uvx", "bunx", "ssh", "docker", "podman", "kubectl", "rm", "dd",
        "mkfs", "shred", "chmod", "chown", "chgrp", "kill", "pkill", "killall", "find",
    }
)
"""Commands remembered only exactly, never by prefix: they run other commands or code
(``sudo``, ``xargs``, interpreters), reach other machines, or destroy (``rm``, ``dd``)."""


@record
class Subcommand:
    text: str
    """Normalised: unquoted whitespace collapsed, quotes kept as written."""
    writes: bool = False
    """It redirects output into a file (``>`` or ``>>`` to anything but ``/dev/null`` or a descriptor)."""


@record
class Command:
    whole: str
    parts: list[Subcommand]
    opaque: bool
    """A substitution or an unclosed quote: allow rules do not cover it."""


def parse(command: str) -> Command:
    """Split ``command`` into its subcommands (see the module docstring). What a substitution runs
    is a subcommand of its own, inside double quotes too (``echo "$(rm -rf x)"``)."""
    parts: list[Subcommand] = []
    buf: list[str] = []
    writes = opaque = False
    quote = ""
    nested: list[tuple[str, str]] = []
    """Open ``(``, ``$(`` and backticks: (what closes it, the quote to go back to)."""
    i, n = 0, len(command)

    def flush() -> None:
        nonlocal writes
        text = "".join(buf).strip()
        if text:
            parts.append(Subcommand(text, writes))
        buf.clear()
        writes = False

    while i < n:
        c = command[i]
        if quote == "'":
            buf.append(c)
            quote = "" if c == "'" else quote
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            buf.append(command[i : i + 2])
            i += 2
            continue
        substitution = c == "$" and command.startswith("$(", i)
        if c == "`" and nested and nested[-1][0] == "`" and quote == "":
            flush()
            quote = nested.pop()[1]  # the backtick that closes one
        elif c == "`" or substitution:
            opaque = True  # a substitution runs, inside double quotes too
            flush()
            nested.append(("`" if c == "`" else ")", quote))
            quote = ""
            i += 2 if substitution else 1
            continue
        elif quote == '"':
            quote = "" if c == '"' else quote
            buf.append(c)
        elif c in "'\"":
            quote = c
            buf.append(c)
        elif c in " \t":
            if buf and buf[-1] != " ":
                buf.append(" ")
        elif c in "<>":
            end, into_file = _redirect(command, i)
            buf.append(command[i:end])
            writes = writes or into_file
            i = end
            continue
        elif c in _SEPARATORS:
            after_redirect = bool(buf) and buf[-1].endswith(("<", ">"))
            if c == "&" and (command.startswith("&>", i) or after_redirect):
                buf.append(c)  # &> and >& redirect, they do not separate
            else:
                flush()
                if c == "(":
                    opaque = opaque or after_redirect  # <(…) and >(…) run a command too
                    nested.append((")", ""))
                elif c == ")" and nested and nested[-1][0] == ")":
                    quote = nested.pop()[1]
        else:
            buf.append(c)
        i += 1
    flush()
    return Command(command.strip(), parts, opaque or quote != "" or bool(nested))


def _redirect(command: str, i: int) -> tuple[int, bool]:
    """The redirection operator at ``i`` (``>``, ``>>``, ``>|``, ``<``, ``<<``): where it ends, and
    whether it sends output into a file (not ``/dev/null``, not a descriptor as in ``>&2``)."""
    end = i + 1
    if end < len(command) and command[end] in "><|":
        end += 1
    if command[i] != ">" or (end < len(command) and command[end] in "&("):
        return end, False
    start = end
    while start < len(command) and command[start] in " \t":
        start += 1
    stop = start
    while stop < len(command) and command[stop] not in " \t;|&\n()<>`":
        stop += 1
    return end, command[start:stop] != "/dev/null"


def prefix(sub: Subcommand) -> str | None:
    """What "Allow for this session" remembers of ``sub``: ``npm test`` (``Bash(npm test:*)``) when
    it names a command and a subcommand word, else None (only the exact subcommand is remembered):
    one word alone, a flag or path as second word, an assignment, or one of :data:`WRAPPERS`."""
    words = sub.text.split(" ")
    if len(words) < 2 or "=" in words[0] or words[0] in WRAPPERS or not _SUBCOMMAND.fullmatch(words[1]):
        return None
    return f"{words[0]} {words[1]}"
