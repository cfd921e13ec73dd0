"""The codemode sandbox worker: runs one JavaScript program in a fresh QuickJS context.

Started by the host as ``python -I <this file>`` (by path, so the package ``__init__`` and
pluggy are not imported) once per codemode call, and killed when it is done, times out or
is aborted. The JS gets no filesystem, network or process access: QuickJS has none of its
own and nothing is added except ``console`` and ``tools``.

Wire (JSON lines). The host writes one init line on stdin::

    {"code": str, "tools": [str], "memoryLimit": int, "stackLimit": int}

The worker then writes to stdout, in any order::

    {"type": "log", "level": "log", "text": str}
    {"type": "call", "id": int, "name": str, "args": object}
    {"type": "done", "value": str | null}        # final; value already stringified
    {"type": "error", "message": str}            # final

and reads ``{"id": int, "result": {text, content, isError, details}}`` lines on stdin, one per
call. Calls do not block the JS: ``tools.x()`` returns a pending promise, so
``Promise.all`` runs tool calls concurrently on the host.
"""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any

# Runs before the user's code: console capture, the tools Proxy and the promise bookkeeping.
# ``__send`` and ``__toolNames`` are provided from Python.
PRELUDE = r"""
(() => {
  const send = globalThis.__send;
  const names = JSON.parse(globalThis.__toolNames);
  delete globalThis.__send;
  delete globalThis.__toolNames;
  const fmt = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack ? `${v.name}: ${v.message}\n${v.stack}`.trimEnd() : String(v);
    if (v === undefined || typeof v === "function" || typeof v === "symbol" || typeof v === "bigint")
      return String(v);
    try { return JSON.stringify(v, null, 2) ?? String(v); } catch { return String(v); }
  };
  const log = (level) => (...args) =>
    send(JSON.stringify({type: "log", level, text: args.map(fmt).join(" ")}));
  globalThis.console = Object.freeze({
    log: log("log"), info: log("info"), warn: log("warn"), error: log("error"), debug: log("debug"),
  });
  const pending = new Map();
  let seq = 0;
  const call = (name, args) => new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, {resolve, reject});
    let payload;
    try {
      payload = JSON.stringify({type: "call", id, name, args: args ?? {}});
    } catch (e) {
      pending.delete(id);
      reject(new TypeError(`tools.${name}: arguments are not JSON-serializable (${e})`));
      return;
    }
    send(payload);
  });
  const known = new Set(names);
  globalThis.tools = new Proxy(Object.create(null), {
    get(_t, name) {
      if (typeof name !== "string" || name === "then") return undefined;
      if (!known.has(name)) {
        return () => Promise.reject(new Error(
          `Unknown tool "${name}". Callable tools: ${names.join(", ") || "(none)"}`));
      }
      return (args) => call(name, args);
    },
    has(_t, name) { return known.has(name); },
    ownKeys() { return [...names]; },
    getOwnPropertyDescriptor(_t, name) {
      return known.has(name)
        ? {value: (args) => call(name, args), enumerable: true, configurable: true, writable: false}
        : undefined;
    },
  });
  globalThis.__settle = (id, json) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    p.resolve(JSON.parse(json));
  };
  globalThis.__pendingCount = () => pending.size;
  globalThis.__state = {done: false, failed: false, value: undefined, error: null};
  globalThis.__finish = (promise) => promise.then(
    (v) => { __state.done = true; __state.value = v === undefined ? null : fmt(v); },
    (e) => { __state.done = true; __state.failed = true; __state.error = e === null ? null : fmt(e); },
  );
})();
"""

# A final expression statement cannot start with these, so there is nothing to return.
_STATEMENT_KEYWORDS = (
    "const",
    "let",
    "var",
    "if",
    "for",
    "while",
    "do",
    "function",
    "class",
    "return",
    "throw",
    "try",
    "switch",
    "break",
    "continue",
    "import",
    "export",
    "async function",
    "debugger",
)
# A line starting with one of these continues the previous statement.
# (A newline before "(", "[" or "`" does not end a statement in JS either.)
_CONTINUATION_START = tuple("+-*/%.?:,)]}=&|^<>([`")
_CONTINUATION_END = tuple("+-*/%.?:,([{=&|^<>!~")


def _last_statement_split(code: str) -> int | None:
    """Index where the last top-level statement starts, or None if it can't be found.

    A small scanner that skips strings, template literals and comments and tracks bracket
    depth; a boundary is a ``;`` or a newline at depth 0 that doesn't look like a continuation.
    """
    depth = 0
    boundary: int | None = 0
    i, n = 0, len(code)
    while i < n:
        ch = code[i]
        if ch in "\"'`":
            i = _skip_string(code, i)
            continue
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and ch == "}":
                boundary = i + 1  # a block/function body ends a statement
        elif depth == 0 and ch == ";":
            boundary = i + 1
        elif depth == 0 and ch == "\n":
            before = code[:i].rstrip()
            after = code[i + 1 :].lstrip()
            if (
                before
                and after
                and not before.endswith(_CONTINUATION_END)
                and not after.startswith(_CONTINUATION_START)
            ):
                boundary = i + 1
        i += 1
    return boundary if depth == 0 else None


def _skip_string(code: str, i: int) -> int:
    quote = code[i]
    i += 1
    while i < len(code):
        ch = code[i]
        if ch == "\\":
            i += 2
            continue
        if ch == quote:
            return i + 1
        if quote == "`" and code.startswith("${", i):
            # Skip a template substitution by brace depth (nested strings inside are rare).
            depth = 1
            i += 2
            while i < len(code) and depth:
                if code[i] in "\"'`":
                    i = _skip_string(code, i)
                    continue
                depth += {"{": 1, "}": -1}.get(code[i], 0)
                i += 1
            continue
        i += 1
    return i


def candidate_bodies(code: str) -> list[str]:
    """Async-function bodies to try, best first: last expression returned, then the code as is."""
    stripped = code.rstrip().rstrip(";").rstrip()
    out: list[str] = []
    split = _last_statement_split(stripped)
    if split is not None:
        head, tail = stripped[:split], stripped[split:]
        last = tail.lstrip()
        if last and not last.startswith(_STATEMENT_KEYWORDS_RE):
            # Keep the user's line numbers: "return (" goes where the expression starts.
            out.append(f"{head}{tail[: len(tail) - len(last)]}return ({last}\n);")
    out.append(code)
    return out


_STATEMENT_KEYWORDS_RE = tuple(f"{k}{sep}" for k in _STATEMENT_KEYWORDS for sep in (" ", "(", "{", "\n", ";"))


class Worker:
    """Drives one QuickJS context; talks to the host over the given streams."""

    def __init__(self, inp: IO[bytes], out: IO[bytes]) -> None:
        self.inp = inp
        self.out = out

    def send(self, line: str) -> None:
        self.out.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.out.flush()

    def run(self, init: dict[str, Any]) -> None:
        # the codemode extra, here: a missing quickjs becomes the error line main() sends
        import quickjs

        ctx = quickjs.Context()
        ctx.set_memory_limit(int(init.get("memoryLimit", 64 * 1024 * 1024)))
        ctx.set_max_stack_size(int(init.get("stackLimit", 1024 * 1024)))
        ctx.set("__toolNames", json.dumps(list(init.get("tools", []))))
        # Must never raise: a Python exception inside a callable corrupts the eval result.
        ctx.add_callable("__send", self._safe_send)
        ctx.eval(PRELUDE)

        main = None
        last_error = ""
        for body in candidate_bodies(str(init.get("code", ""))):
            try:
                main = ctx.eval(f"(async () => {{{body}\n}})")
                break
            except quickjs.JSException as exc:
                last_error = str(exc)
        if main is None:
            self.send(json.dumps({"type": "error", "message": _clean(last_error)}))
            return
        ctx.get("__finish")(main())
        settle = ctx.get("__settle")
        while True:
            while ctx.execute_pending_job():
                pass
            if ctx.eval("__state.done"):
                break
            if not ctx.eval("__pendingCount()"):
                self.send(
                    json.dumps(
                        {
                            "type": "error",
                            "message": "The program's promise never settled "
                            "(it awaits something that no tool call will resolve).",
                        }
                    )
                )
                return
            line = self.inp.readline()
            if not line:
                return  # host went away
            reply = json.loads(line)
            settle(int(reply["id"]), json.dumps(reply["result"]))
        if ctx.eval("__state.failed"):
            error = ctx.eval("__state.error")
            if error is None:
                # QuickJS throws null when it cannot even allocate the "out of memory" error.
                limit = int(init.get("memoryLimit", 0)) // (1024 * 1024)
                error = f"Uncaught null - most likely out of memory (the sandbox is limited to {limit} MiB)"
            self.send(json.dumps({"type": "error", "message": str(error)}))
        else:
            self.send(json.dumps({"type": "done", "value": ctx.eval("__state.value")}))

    def _safe_send(self, line: Any) -> None:
        try:
            self.send(str(line))
        except Exception:  # the host is gone; the process will be killed anyway
            pass


def _clean(message: str) -> str:
    return message.strip()


def main() -> int:
    # The protocol owns the real stdout; anything else printing to fd 1 would corrupt it.
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    inp = sys.stdin.buffer
    first = inp.readline()
    if not first:
        return 1
    worker = Worker(inp, proto_out)
    try:
        worker.run(json.loads(first))
    except Exception as exc:  # memory/stack exhaustion can surface from any eval/call
        try:
            worker.send(json.dumps({"type": "error", "message": _clean(f"{exc}")}))
        except Exception:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
