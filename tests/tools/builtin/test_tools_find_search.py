from __future__ import annotations

from pathlib import Path

from tools_helpers import call, call_err, text_of

from atomic_host.contract.tools import ToolContext
from builtin_plugins.tools._gitignore import parse, walk


def tree(root: Path, files: list[str]) -> None:
    for f in files:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {f}\n")


def rel_walk(root: Path, **kw) -> list[str]:
    return [str(Path(p).relative_to(root)) for p, _ in walk(root, **kw)]


def test_gitignore_rules(work: Path) -> None:
    (work / ".git").mkdir()
    tree(
        work,
        [
            "a.log",
            "keep.log",
            "build/out.txt",
            "src/build/x.txt",
            "src/main.py",
            "docs/build",
            "root_only.txt",
            "src/root_only.txt",
            "deep/a/b/c.tmp",
            "node_modules/pkg/index.js",
            "src/.env",
        ],
    )
    (work / ".gitignore").write_text("# comment\n*.log\n!keep.log\nbuild/\n/root_only.txt\n**/b/*.tmp\n\\#literal\n")
    (work / "src" / ".gitignore").write_text(".env\n")
    got = set(rel_walk(work))
    assert "keep.log" in got and "a.log" not in got
    assert "build/out.txt" not in got and "src/build/x.txt" not in got
    assert "docs/build" in got  # a file named build: "build/" only matches directories
    assert "root_only.txt" not in got and "src/root_only.txt" in got
    assert "deep/a/b/c.tmp" not in got
    assert not any(p.startswith(("node_modules", ".git/")) for p in got)
    assert "src/.env" not in got and "src/main.py" in got
    # Parent .gitignore applies when walking a subdirectory of the repository.
    assert set(rel_walk(work / "src")) == {".gitignore", "main.py", "root_only.txt"}


def test_gitignore_negation_cannot_reinclude_from_ignored_dir(work: Path) -> None:
    (work / ".git").mkdir()
    tree(work, ["logs/a.txt", "logs/keep.txt"])
    (work / ".gitignore").write_text("logs/\n!logs/keep.txt\n")
    assert "logs/keep.txt" not in rel_walk(work)


def test_parse_escapes_and_classes() -> None:
    rules = parse("file[0-9].txt\n!important\n\\!bang\n  \n")
    assert [r.pattern for r in rules] == ["file[0-9].txt", "important", "!bang"]
    assert rules[0].regex.match("file7.txt") and not rules[0].regex.match("filex.txt")
    assert rules[1].negate and not rules[2].negate


async def test_find_globs(ctx: ToolContext, work: Path) -> None:
    (work / ".git").mkdir()
    tree(
        work,
        ["a.py", "src/b.py", "src/sub/c.py", "src/d.ts", "ignored/e.py", ".hidden/f.py", "node_modules/g.py"],
    )
    (work / ".gitignore").write_text("ignored/\n")
    text = text_of(await call("find", ctx, pattern="*.py"))
    assert text.split("\n") == [".hidden/f.py", "a.py", "src/b.py", "src/sub/c.py"]
    text = text_of(await call("find", ctx, pattern="*.py", hidden=False))
    assert ".hidden/f.py" not in text
    text = text_of(await call("find", ctx, pattern="src/**/*.py"))
    assert text.split("\n") == ["src/b.py", "src/sub/c.py"]
    text = text_of(await call("find", ctx, pattern="*.py", path="src"))
    assert text.split("\n") == ["src/b.py", "src/sub/c.py"]
    assert text_of(await call("find", ctx, pattern="sub/")) == "src/sub/"


async def test_find_limit_and_errors(ctx: ToolContext, work: Path) -> None:
    tree(work, [f"f{i:03}.txt" for i in range(30)])
    r = await call("find", ctx, pattern="*.txt", limit=10)
    assert len(text_of(r).split("\n\n")[0].split("\n")) == 10 and "first 10 results" in text_of(r)
    assert "No files found" in text_of(await call("find", ctx, pattern="*.rs"))
    assert "Directory not found" in await call_err("find", ctx, pattern="*", path="nope")


async def test_search_basic_context_and_case(ctx: ToolContext, work: Path) -> None:
    (work / "a.py").write_text("one\ntwo\nTARGET here\nthree\nfour\nfive\nsix\n")
    (work / "b.bin").write_bytes(b"TARGET\x00\x01")
    text = text_of(await call("search", ctx, pattern="target", ignoreCase=True))
    assert text == "a.py\n  2- two\n  3: TARGET here\n  4- three\n  5- four\n  6- five"
    assert "No matches" in text_of(await call("search", ctx, pattern="target"))
    text = text_of(await call("search", ctx, pattern="TARGET", context=0))
    assert text == "a.py\n  3: TARGET here"


async def test_search_gitignore_glob_and_long_lines(ctx: ToolContext, work: Path) -> None:
    (work / ".git").mkdir()
    tree(work, ["src/x.py", "src/y.ts", "dist/x.py"])
    (work / ".gitignore").write_text("dist\n")
    (work / "src" / "long.py").write_text("content " + "z" * 2000 + "\n")
    text = text_of(await call("search", ctx, pattern="content", glob="*.py", context=0))
    assert "src/x.py" in text and "src/y.ts" not in text and "dist" not in text
    long_line = next(line for line in text.split("\n") if "zzz" in line)
    assert len(long_line) < 560 and long_line.endswith("[line truncated]")


async def test_search_paging(ctx: ToolContext, work: Path) -> None:
    tree(work, [f"f{i:02}.txt" for i in range(25)])
    r = await call("search", ctx, pattern="content", context=0)
    text = text_of(r)
    headers = [line for line in text.split("\n") if line.endswith(".txt") and not line.startswith(" ")]
    assert headers == [f"f{i:02}.txt" for i in range(20)] and "Continue with skip=20" in text
    text = text_of(await call("search", ctx, pattern="content", context=0, skip=20))
    headers = [line for line in text.split("\n") if line.endswith(".txt") and not line.startswith(" ")]
    assert headers == [f"f{i:02}.txt" for i in range(20, 25)] and "skip=" not in text


async def test_search_matches_per_file_cap(ctx: ToolContext, work: Path) -> None:
    (work / "many.txt").write_text("hit\n" * 50)
    text = text_of(await call("search", ctx, pattern="hit", context=0, path="."))
    assert text.count(": hit") == 20 and "[30 more matches in this file]" in text
    text = text_of(await call("search", ctx, pattern="hit", context=0, path="many.txt"))
    assert text.count(": hit") == 50


async def test_search_errors(ctx: ToolContext, work: Path) -> None:
    assert "whitespace" in await call_err("search", ctx, pattern="   ")
    assert "Invalid regular expression" in await call_err("search", ctx, pattern="(")
    assert "Path not found" in await call_err("search", ctx, pattern="x", path="nope")


async def test_ls(ctx: ToolContext, work: Path) -> None:
    tree(work, ["b.txt", "a/x.txt", ".env"])
    assert text_of(await call("ls", ctx)) == ".env\na/\nb.txt"
    r = await call("ls", ctx, limit=1)
    assert text_of(r).startswith(".env\n\n[Showing 1 of 3 entries")
    assert "Not a directory" in await call_err("ls", ctx, path="b.txt")
    assert "Path not found" in await call_err("ls", ctx, path="zzz")
