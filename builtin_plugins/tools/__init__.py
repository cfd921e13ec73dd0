"""The built-in tools, registered as one pluggy plugin.

Only names, descriptions and ``"module:attr"`` strings live here, so registering costs no
imports; each tool module (and pydantic) loads on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_host import hookimpl

# name -> (label, description); ls is available but not in the default set (semantics §5.1).
TOOLS: dict[str, tuple[str, str]] = {
    "read": (
        "Read",
        (
            "Read files, directories, archives, SQLite databases, internal resources, images, documents, and URLs "
            "through one path string.\n"
            "- Text files come back as stored (at most 3000 lines / 50 KiB per call; use offset/limit or a "
            "selector: file.py:120-180, file.py:120+40, file.py:1-20,90-99). Directories: a depth-2 tree.\n"
            "- Archives (.zip .jar .whl .tar .tar.gz/.tgz .tar.bz2 .tar.xz .gz): a.zip lists members, "
            "a.zip:dir/f.txt (or a.zip/dir/f.txt) reads one; nothing is extracted.\n"
            "- SQLite: db.sqlite shows the schema, db.sqlite:table the rows (100 per page; db.sqlite:table:101-200), "
            "db.sqlite?q=SELECT ... runs a read-only query.\n"
            "- Documents as text: PDF (doc.pdf:2 or doc.pdf:2-3 select pages), DOCX, PPTX (:N selects slides), "
            "XLSX (book.xlsx:Sheet), EPUB (chapters), Jupyter notebooks (cells and outputs; :raw for the JSON), "
            "HTML as markdown with page.html:md.\n"
            "- Images (PNG, JPEG, GIF, WebP) as images, checked and shrunk to fit 2000x2000.\n"
            "- URLs: http:// and https:// pages as markdown (public addresses only unless allowed).\n"
            "- Internal resources: skill://NAME (its SKILL.md), skill://NAME/FILE, artifact:// (the session's "
            "saved full outputs: truncated bash logs, cut tool results) and artifact://NAME."
        ),
    ),
    "bash": (
        "Bash",
        (
            "Run a bash command in the working directory. Output (stdout and stderr interleaved) is "
            "truncated to the last 3000 lines / 50 KiB; the full output is saved to a file when longer. "
            "Default timeout 300 s (max 3600). Use background=true for servers and watchers: it returns "
            "an id and a log path at once; stop it later with the kill tool."
        ),
    ),
    "kill": (
        "Kill",
        (
            "Stop a background process started by bash with background=true (and everything it spawned). "
            "Without an id, list the background processes."
        ),
    ),
    "edit": (
        "Edit",
        (
            "Edit a file by exact text replacement. Each oldText must match the file exactly once (including "
            "whitespace and indentation; copy it from read output) and edits must not overlap. All edits are "
            "applied together or not at all."
        ),
    ),
    "write": (
        "Write",
        (
            "Write content to a file, creating it (and parent directories) or overwriting it entirely. "
            "Prefer edit for changes to existing files."
        ),
    ),
    "find": (
        "Find",
        (
            "Find files by glob pattern (e.g. '*.py', 'src/**/*.ts', '**/test_*') in a directory, or in several "
            "with paths (directories, archives, or globs such as 'src/**/*.py'). Respects .gitignore; never "
            "descends into .git or node_modules. The members of an archive in paths are listed as "
            "archive.zip:dir/file. Returns paths relative to the working directory; page with skip."
        ),
    ),
    "search": (
        "Search",
        (
            "Search file contents with a regular expression (Python re syntax, line by line) in a file, a "
            "directory or an archive, or several with paths (archive members are searched and shown as "
            "archive.zip:dir/file). Respects .gitignore, skips binary files; case: sensitive, insensitive or "
            "smart. Results are paged: 20 files per page (skip=N for more), 20 matches per file, with 1 line of "
            "context before and 3 after each match."
        ),
    ),
    "ls": ("List", "List the entries of a directory (sorted; directories end with '/')."),
    "ask_user_question": (
        "Ask user",
        (
            "Ask the user 1-4 multiple-choice questions when you need a decision or a preference you cannot "
            "infer. Each question has 2-4 options; the user may also type their own answer."
        ),
    ),
    "todo": (
        "Todo",
        (
            "Manage the project's todo list (files in .atomic/todos). Actions: list (open todos), list-all, "
            "get, create (title required), update, append (add to body), delete, claim (assign to this "
            "session), release. Status 'closed' or 'done' closes a todo."
        ),
    ),
}


OPT_IN = frozenset({"ls"})
NEEDS_UI = frozenset({"ask_user_question"})
READ_ONLY = frozenset({"read", "find", "search", "ls", "ask_user_question"})
"""Tools without side effects (``Tool.read_only``); bash, edit, write, kill and todo change things."""
SELF_BOUNDED = frozenset({"bash", "read"})
"""Tools that truncate their own output and save the full text to a file."""


def make_tools() -> list[object]:
    """The Tool objects, in registration order."""
    from atomic_host.contract.tools import Tool

    return [
        Tool(
            name=name,
            description=description,
            label=label,
            params=f"builtin_plugins.tools.{name}:Params",
            handler=f"builtin_plugins.tools.{name}:run",
            source="built-in",
            source_path=f"<builtin:{name}>",
            opt_in=name in OPT_IN,
            needs_ui=name in NEEDS_UI,
            read_only=name in READ_ONLY,
            max_result_chars=0 if name in SELF_BOUNDED else None,
        )
        for name, (label, description) in TOOLS.items()
    ]


@hookimpl
def register_tools(register: Callable[[object], None]) -> None:
    for tool in make_tools():
        register(tool)
