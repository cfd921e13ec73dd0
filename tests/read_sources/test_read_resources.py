"""read of internal resources through the real host: skill://, and artifact:// for the full output of
a truncated bash call and of a tool result that was cut."""

from __future__ import annotations

from pathlib import Path

from read_helpers import model_sees, read

from atomic_host.testing import start_host

EXT = str(Path(__file__).parent.parent / "tools_rpc" / "ext_toolsrpc.py")


def make_skill(agent_dir: Path) -> Path:
    skill = agent_dir / "skills" / "deploy"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship the app.\n---\n# Deploy\nStep 1\nStep 2\n")
    (skill / "scripts" / "run.sh").write_text("#!/bin/sh\necho deploying\n")
    (agent_dir / "secret.txt").write_text("outside the skill\n")
    return skill


async def test_skill_resources(tmp_path: Path) -> None:
    base = tmp_path / "h"
    make_skill(base / "agent")
    async with start_host(base=base) as host:
        r = await read(
            host,
            "skill://deploy",
            "skill://deploy:6-7",
            "skill://deploy/scripts/run.sh",
            "skill://",
            "skill://nope",
            "skill://deploy/../../secret.txt",
            "memory://x",
        )
        host.assert_protocol_lines()
    skill_md = "---\nname: deploy\ndescription: Ship the app.\n---\n# Deploy\nStep 1\nStep 2"
    assert r[0]["text"] == f"[skill://deploy]\n{skill_md}"
    assert r[1]["text"] == "[skill://deploy]\nStep 1\nStep 2"
    assert r[2]["text"] == "[skill://deploy/scripts/run.sh]\n#!/bin/sh\necho deploying"
    assert r[3]["text"] == "skill://deploy: Ship the app."
    assert r[4]["isError"] and r[4]["text"] == "No skill named 'nope'. Skills: deploy"
    assert r[5]["isError"] and r[5]["text"] == "skill://deploy/../../secret.txt points outside its directory"
    assert r[6]["isError"] and r[6]["text"].startswith("Unknown scheme memory:// in 'memory://x'.")


async def test_artifacts_of_a_truncated_bash_call_and_a_cut_tool_result(tmp_path: Path) -> None:
    async with start_host("-e", EXT, base=tmp_path / "h") as host:
        bash = await model_sees(
            host,
            ("bash", {"command": "seq 1 20000"}),
            ("big_result", {}),
        )
        assert "Full output:" in bash[0]["text"] and "20000" in bash[0]["text"]
        assert "<persisted-output>" in bash[1]["text"]
        listing = (await read(host, "artifact://"))[0]["text"].split("\n")
        log_name = next(line.split("  ")[0] for line in listing if line.startswith("artifact://atomic-bash-"))
        r = await read(host, f"{log_name}:1-3", f"{log_name}:19999-20000", "artifact://call1", "artifact://nope")
    assert [line for line in listing if line.startswith("artifact://call1.txt  (")]
    assert r[0]["text"] == f"[{log_name}]\n1\n2\n3\n\n[Showing lines 1-3 of 20000. Continue with offset=4.]"
    assert r[1]["text"] == f"[{log_name}]\n19999\n20000"
    assert r[2]["text"].startswith("[artifact://call1]\n000000 é\n000001 é\n")
    assert (
        r[3]["isError"]
        and r[3]["text"] == "No saved output named 'nope' in this session; read artifact:// to list them"
    )
