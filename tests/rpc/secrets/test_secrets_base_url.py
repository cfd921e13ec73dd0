"""Credentials in a model's ``baseUrl`` (``http://alice:<pw>@host/v1?key=<k>``) are masked like every
other credential: ``get_state``, ``get_available_models``, ``set_model``, the session file, the
HTML export and stderr showed them as written. Plus the URL parser's properties."""

from __future__ import annotations

import json
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit import secrets
from atomic_host.testing import start_host

PASSWORD = "s3cr3t-pass-word"
QUERY_KEY = "query-key-0123456789"
LOCAL = f"http://alice:{PASSWORD}@127.0.0.1:9/v1?key={QUERY_KEY}&api-version=2024-10-21"
SHORT = "http://bob:hunter2@127.0.0.1:9/v1?token=t0k"  # each value too short to be masked alone
TOKEN_USER = "https://ghp_tokenAsUserName0123@127.0.0.1:9/v1"


async def test_base_url_credentials_never_leave_the_host(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    providers = {
        name: {"baseUrl": url, "api": "openai-completions", "apiKey": "dummy", "models": [{"id": "m1"}]}
        for name, url in (("local", LOCAL), ("short", SHORT), ("tokenuser", TOKEN_USER))
    }
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("wb") as err:
        settings = {"retry": {"enabled": False}, "sessionSummary": {"enabled": False}}
        async with start_host(
            "--model", "local/m1", base=tmp_path, faux=False, stderr=err.fileno(), settings=settings
        ) as host:
            state = await host.client.get_state()
            assert state["model"]["baseUrl"] == (
                "http://[REDACTED:baseUrl:local]@127.0.0.1:9/v1?[REDACTED:baseUrl:local]&api-version=2024-10-21"
            )
            models = {m["provider"]: m["baseUrl"] for m in (await host.client.get_available_models()).models}
            assert models["short"] == "http://[REDACTED:baseUrl:short]@127.0.0.1:9/v1?[REDACTED:baseUrl:short]"
            assert models["tokenuser"] == "https://[REDACTED:baseUrl:tokenuser]@127.0.0.1:9/v1"
            await host.client.set_model("short", "m1")
            await host.client.prompt_and_wait("hello")  # fails: nothing listens on port 9
            export = tmp_path / "export.html"
            await host.client.call("export_html", outputPath=str(export))
            stdout = "\n".join(host.client.lines)
    written = {
        "stdout": stdout,
        "stderr": stderr_path.read_text(),
        "export": export.read_text(),
        **{str(p): p.read_text() for p in (agent / "sessions").rglob("*.jsonl")},
    }
    assert len(written) > 3  # a session file was written
    for where, text in written.items():
        for secret in (PASSWORD, QUERY_KEY, "hunter2", "t0k", "ghp_tokenAsUserName0123"):
            assert secret not in text, (secret, where)
    assert "api-version=2024-10-21" in stdout  # what is not a credential stays readable


# -- the parser ------------------------------------------------------------------------------------

SAFE = st.text(alphabet=st.characters(codec="ascii", exclude_characters="@:/?#&=%"), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(url=st.text(max_size=200))
def test_any_text_parses_without_error(url: str) -> None:
    found = secrets.url_credentials(url)
    assert all(isinstance(v, str) and v for v in found)


@settings(max_examples=300, deadline=None)
@given(user=SAFE, password=st.one_of(st.none(), SAFE), name=st.sampled_from(["key", "api_key", "X-Token", "sig"]),
       value=SAFE, other=st.sampled_from(["page", "api-version", "model"]), plain=SAFE)
def test_userinfo_and_credential_parameters_are_found(
    user: str, password: str | None, name: str, value: str, other: str, plain: str
) -> None:
    userinfo = user if password is None else f"{user}:{password}"
    url = f"https://{userinfo}@example.com:8443/v1/x?{other}={plain}&{name}={value}#frag"
    found = secrets.url_credentials(url)
    assert userinfo in found and (password if password is not None else user) in found
    assert f"{name}={value}" in found and value in found
    assert f"{other}={plain}" not in found


def test_parser_cost_is_linear() -> None:
    def cpu(n: int) -> float:
        url = "http://u:p@h/v1?" + "&".join(f"key{i}=value{i}&page{i}=x" for i in range(n))
        start = time.process_time()
        for _ in range(max(1, 10_000 // n)):
            found = secrets.url_credentials(url)
        assert len(found) == 2 + 2 * n
        return (time.process_time() - start) / max(1, 10_000 // n)

    small, ten, hundred = cpu(100), cpu(1_000), cpu(10_000)
    assert ten < small * 10 * 4 and hundred < small * 100 * 4, (small, ten, hundred)
