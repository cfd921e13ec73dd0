"""SQLite databases: the schema, a table's rows page by page, a read-only query.

Opened with a ``mode=ro`` URI, ``PRAGMA query_only``, and an authorizer that allows reading only
(no ATTACH, no writes, no schema changes), so no statement the model writes can change the file
or open another one. A progress handler checks the deadline and the abort flag while a query
runs, so ``WITH RECURSIVE`` without end stops too.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

from builtin_plugins.tools.sources.limits import Budget, SourceError

PAGE_ROWS = 100
MAX_QUERY_ROWS = 1000
MAX_CELL_CHARS = 500
_READ_OK = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}
_READ_PRAGMAS = {"table_info", "table_xinfo", "index_list", "index_info", "foreign_key_list", "query_only"}


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _authorizer(action: int, arg1: str | None, _arg2: str | None, _db: str | None, _src: str | None) -> int:
    if action in _READ_OK:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and (arg1 or "").lower() in _READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


class _Connection(sqlite3.Connection):
    stopped: list[BaseException]
    """What made the progress handler interrupt a statement (time up, abort)."""


def connect(path: str, budget: Budget) -> sqlite3.Connection:
    """A read-only connection to ``path`` that stops queries when ``budget`` runs out."""
    uri = "file:" + path.replace("%", "%25").replace("?", "%3F").replace("#", "%23") + "?mode=ro"
    try:
        con = sqlite3.connect(uri, uri=True, timeout=1, check_same_thread=False, factory=_Connection)
        con.execute("PRAGMA query_only = ON")
    except sqlite3.Error as e:
        raise SourceError(f"Cannot open SQLite database {budget.what}: {e}") from e
    stopped: list[BaseException] = []

    def progress() -> int:
        try:
            budget.tick()
        except BaseException as e:  # handed back after sqlite interrupts the statement
            stopped.append(e)
            return 1
        return 0

    con.set_progress_handler(progress, 10_000)
    con.set_authorizer(_authorizer)
    con.stopped = stopped
    return con


@contextlib.contextmanager
def _errors(con: sqlite3.Connection) -> Iterator[None]:
    """sqlite3 errors as :class:`SourceError`; an interrupt as what stopped it (time up, abort)."""
    try:
        yield
    except sqlite3.Warning as e:  # several statements in one query
        raise SourceError(f"One statement per query: {e}") from e
    except sqlite3.Error as e:
        stopped: list[BaseException] = con.stopped  # type: ignore[attr-defined]
        if stopped:
            raise stopped[0] from None
        if "not authorized" in str(e):
            raise SourceError("Only reading queries are allowed (SELECT, WITH … SELECT); nothing is written") from e
        raise SourceError(f"SQLite error: {e}") from e


def _run(con: sqlite3.Connection, sql: str, params: tuple[object, ...] = ()) -> sqlite3.Cursor:
    with _errors(con):
        return con.execute(sql, params)


def _cell(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes):
        return f"<blob {len(value)} bytes>"
    text = str(value).replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= MAX_CELL_CHARS else text[:MAX_CELL_CHARS] + "…"


def table_text(columns: list[object], rows: list[tuple[object, ...]] | list[list[object]]) -> str:
    """A markdown table (cells escaped and cut at 500 characters; short rows padded)."""
    width = max([len(columns), *(len(r) for r in rows)])

    def line(row: tuple[object, ...] | list[object]) -> str:
        return "| " + " | ".join([_cell(v) for v in row] + [""] * (width - len(row))) + " |"

    return "\n".join([line(list(columns)), "|" + " --- |" * width, *(line(r) for r in rows)])


def tables(con: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(type, name)`` of every user table and view."""
    sql = (
        "SELECT type, name FROM sqlite_master WHERE type IN ('table','view') "
        "AND name NOT LIKE 'sqlite_%' ORDER BY type, name"
    )
    return [(kind, name) for kind, name in _run(con, sql).fetchall()]


def summary(path: str, label: str, budget: Budget) -> str:
    con = connect(path, budget)
    try:
        found = tables(con)
        out = [f"[{label}] SQLite database, {len(found)} tables/views"]
        for kind, name in found:
            qname = quote_ident(name)
            cols = _run(con, f"PRAGMA table_info({qname})").fetchall()
            coldesc = ", ".join(f"{c[1]} {c[2]}".strip() + (" PK" if c[5] else "") for c in cols)
            try:
                count = f"{_run(con, f'SELECT count(*) FROM {qname}').fetchone()[0]} rows"
            except SourceError:
                count = "rows unknown"
            out.append(f"{kind} {name} ({count}): {coldesc}")
    finally:
        con.close()
    out.append(
        f"Rows: read {label}:<table> (pages of {PAGE_ROWS}, e.g. {label}:<table>:101-200). "
        f"Query: read {label}?q=SELECT … (read-only)."
    )
    return "\n".join(out)


def table_rows(
    path: str, label: str, table: str, first: int, last: int | None, budget: Budget
) -> tuple[str, dict[str, object]]:
    """Rows ``first``..``last`` (1-based, in rowid order when there is one) of ``table``."""
    con = connect(path, budget)
    try:
        names = [name for _, name in tables(con)]
        if table not in names:
            import difflib

            close = difflib.get_close_matches(table, names, n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else f" Tables: {', '.join(names) or '(none)'}."
            raise SourceError(f"No table or view {table!r} in {label}.{hint}")
        qname = quote_ident(table)
        total = _run(con, f"SELECT count(*) FROM {qname}").fetchone()[0]
        last = min(last if last is not None else first + PAGE_ROWS - 1, first + MAX_QUERY_ROWS - 1)
        cur = _run(con, f"SELECT * FROM {qname} LIMIT ? OFFSET ?", (last - first + 1, first - 1))
        with _errors(con):
            rows = cur.fetchall()
        columns = [d[0] for d in cur.description or ()]
    finally:
        con.close()
    head = f"[{label}:{table}] {total} rows"
    if not rows:
        return f"{head}; none from row {first}.", {"rows": 0, "totalRows": total}
    shown_last = first + len(rows) - 1
    text = f"{head}, showing {first}-{shown_last}\n{table_text(columns, rows)}"
    if shown_last < total:
        nxt = shown_last + 1
        more = f"{label}:{table}:{nxt}-{nxt + PAGE_ROWS - 1}"
        text += f"\n\n[Showing rows {first}-{shown_last} of {total}. Continue with {more}.]"
    return text, {"rows": len(rows), "totalRows": total, "firstRow": first}


def query(path: str, label: str, sql: str, budget: Budget) -> tuple[str, dict[str, object]]:
    """The first :data:`MAX_QUERY_ROWS` rows of a read-only query."""
    if not sql.strip():
        raise SourceError("Empty query after ?q=")
    con = connect(path, budget)
    try:
        cur = _run(con, sql)
        rows: list[tuple[object, ...]] = []
        with _errors(con):
            while len(rows) <= MAX_QUERY_ROWS:
                batch = cur.fetchmany(200)
                if not batch:
                    break
                rows += batch
        columns = [d[0] for d in cur.description or ()]
    finally:
        con.close()
    more = len(rows) > MAX_QUERY_ROWS
    rows = rows[:MAX_QUERY_ROWS]
    text = (
        f"[{label}?q] {len(rows)}{'+' if more else ''} rows\n{table_text(columns, rows)}"
        if columns
        else (f"[{label}?q] no result columns")
    )
    if more:
        text += f"\n\n[Showing the first {MAX_QUERY_ROWS} rows. Add LIMIT/OFFSET to the query for more.]"
    return text, {"rows": len(rows), "truncated": more}
