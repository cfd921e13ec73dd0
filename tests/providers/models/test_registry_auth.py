"""API-key resolution order, auth.json writes, login/logout, availability, headers, stream functions."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from atomic_host.contract.providers import ApiImpl, ProviderInfo
from atomic_host.core.models.auth_store import AuthFileError
from atomic_host.core.models.registry import ModelRegistry
from builtin_plugins.catalog.data import builtin_providers


def make(tmp_path: Path, env: dict[str, str] | None = None, **kw: object) -> ModelRegistry:
    return ModelRegistry(tmp_path, builtin_providers(), {}, env=env or {}, **kw)  # type: ignore[arg-type]


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data))


def test_nothing_configured(tmp_path: Path) -> None:
    reg = make(tmp_path)
    assert reg.available() == []
    assert reg.auth_status("anthropic") == {"configured": False}
    assert reg.resolve_api_key("openai") is None
    assert len(reg.all_models()) == 19
    assert reg.errors == []


def test_env_order_and_empty_values(tmp_path: Path) -> None:
    env = {"ANTHROPIC_OAUTH_TOKEN": "", "ANTHROPIC_API_KEY": "sk-env"}
    reg = make(tmp_path, env)
    assert reg.resolve_api_key("anthropic") == "sk-env"
    assert reg.auth_status("anthropic") == {"configured": True, "source": "environment", "label": "ANTHROPIC_API_KEY"}
    env["ANTHROPIC_OAUTH_TOKEN"] = "sk-ant-oat-1"
    assert reg.resolve_api_key("anthropic") == "sk-ant-oat-1"
    assert {m["provider"] for m in reg.available()} == {"anthropic"}


def test_full_resolution_order(tmp_path: Path) -> None:
    write_json(tmp_path / "models.json", {"providers": {"openai": {"apiKey": "from-models-json"}}})
    env = {"OPENAI_API_KEY": "from-env"}
    reg = make(tmp_path, env)
    assert reg.resolve_api_key("openai") == "from-env"
    reg.login("openai", "from-auth")
    assert reg.resolve_api_key("openai") == "from-auth"
    assert reg.auth_status("openai")["source"] == "stored"
    cli = make(tmp_path, env, cli_api_key="from-cli")
    assert cli.resolve_api_key("openai") == "from-cli"
    assert cli.resolve_api_key("anthropic") == "from-cli"  # no --provider: every provider
    assert cli.auth_status("anthropic") == {"configured": True, "source": "cli", "label": "--api-key"}
    scoped = make(tmp_path, env, cli_api_key="from-cli", cli_provider="anthropic")
    assert scoped.resolve_api_key("anthropic") == "from-cli"
    assert scoped.resolve_api_key("openai") == "from-auth"
    reg.logout("openai")
    assert reg.resolve_api_key("openai") == "from-env"
    del env["OPENAI_API_KEY"]
    assert reg.resolve_api_key("openai") == "from-models-json"
    assert reg.auth_status("openai") == {"configured": True, "source": "models_json", "label": "models.json"}


def test_auth_json_mode_and_atomic_write(tmp_path: Path) -> None:
    reg = make(tmp_path)
    write_json(tmp_path / "auth.json", {"other": {"type": "api_key", "key": "keep"}})
    os.chmod(tmp_path / "auth.json", 0o644)
    before = (tmp_path / "auth.json").stat().st_ino
    reg.login("anthropic", "sk-stored")
    path = tmp_path / "auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.stat().st_ino != before  # replaced, not rewritten in place
    assert json.loads(path.read_text()) == {
        "other": {"type": "api_key", "key": "keep"},
        "anthropic": {"type": "api_key", "key": "sk-stored"},
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["auth.json"]  # no temp files left
    assert reg.auth_status("anthropic") == {"configured": True, "source": "stored", "label": "stored credential"}
    with pytest.raises(ValueError):
        reg.login("anthropic", "")


def test_login_creates_agent_dir(tmp_path: Path) -> None:
    reg = make(tmp_path / "deep" / "agent")
    reg.login("openai", "k")
    assert stat.S_IMODE((tmp_path / "deep" / "agent" / "auth.json").stat().st_mode) == 0o600


def test_logout_keeps_env_auth(tmp_path: Path) -> None:
    reg = make(tmp_path, {"OPENAI_API_KEY": "sk-env"})
    reg.login("openai", "sk-stored")
    status = reg.logout("openai")
    assert status == {"configured": True, "source": "environment", "label": "OPENAI_API_KEY"}
    assert json.loads((tmp_path / "auth.json").read_text()) == {}
    assert reg.logout("openai")["configured"] is True  # idempotent
    assert make(tmp_path).logout("openai") == {"configured": False}


def test_legacy_auth_file(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy" / "auth.json"
    legacy.parent.mkdir()
    write_json(legacy, {"openai": {"type": "api_key", "key": "legacy-key"}})
    reg = make(tmp_path / "agent", legacy_auth_path=legacy)
    assert reg.resolve_api_key("openai") == "legacy-key"
    reg.logout("openai")
    assert json.loads(legacy.read_text()) == {}
    assert reg.resolve_api_key("openai") is None


def test_stored_key_interpolation_and_command_cache(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    write_json(
        tmp_path / "auth.json",
        {
            "openai": {"type": "api_key", "key": f"!echo run >> {counter}; echo cmd-key"},
            "anthropic": {"type": "api_key", "key": "pre-${SECRET}-$$-$!x"},
            "groq": {"type": "api_key", "key": "$MISSING"},
            "xai": {"type": "oauth", "access": "tok", "refresh": "r", "expires": 1},
        },
    )
    reg = make(tmp_path, {"SECRET": "s3", "GROQ_API_KEY": "env-groq"})
    assert reg.resolve_api_key("openai") == "cmd-key"
    assert reg.resolve_api_key("openai") == "cmd-key"
    assert counter.read_text().count("run") == 1  # cached per process
    assert reg.resolve_api_key("anthropic") == "pre-s3-$-!x"
    # A stored credential owns the provider: no env fallback when it resolves to nothing.
    assert reg.resolve_api_key("groq") is None
    assert reg.auth_status("xai") == {"configured": True, "source": "stored", "label": "OAuth"}
    assert reg.resolve_api_key("xai") == "tok"


def test_broken_auth_json_reported(tmp_path: Path) -> None:
    (tmp_path / "auth.json").write_text("{nope")
    reg = make(tmp_path, {"OPENAI_API_KEY": "k"})
    assert reg.errors and "auth.json" in reg.errors[0]
    assert reg.resolve_api_key("openai") == "k"
    with pytest.raises(AuthFileError):
        reg.login("openai", "x")
    assert (tmp_path / "auth.json").read_text() == "{nope"


def test_find_and_copies(tmp_path: Path) -> None:
    reg = make(tmp_path)
    model = reg.find("openai", "gpt-5")
    assert model is not None and model["provider"] == "openai" and model["api"] == "openai-responses"
    model["name"] = "changed"
    assert reg.find("openai", "gpt-5")["name"] == "GPT-5"  # type: ignore[index]
    assert reg.find("openai", "nope") is None
    assert reg.find("nope", "gpt-5") is None


def test_always_authenticated_and_extension_providers(tmp_path: Path) -> None:
    faux = ProviderInfo(
        id="faux", name="Faux", api="faux", always_authenticated=True, plugin="tests.faux", models=[{"id": "faux-1"}]
    )
    ext = ProviderInfo(
        id="acme",
        name="Acme",
        api="openai-completions",
        base_url="http://127.0.0.1:1/v1",
        env_keys=["ACME_KEY"],
        plugin="acme_plugin",
        models=[{"id": "acme-1"}],
    )
    env = {"ACME_KEY": "k"}
    reg = ModelRegistry(
        tmp_path, [*builtin_providers(), faux, ext], {}, env=env, builtin_plugins={"builtin_plugins.catalog"}
    )
    assert [m["id"] for m in reg.available()] == ["faux-1", "acme-1"]
    model = reg.find("faux", "faux-1")
    assert model == {
        "id": "faux-1",
        "name": "faux-1",
        "api": "faux",
        "provider": "faux",
        "baseUrl": "",
        "reasoning": False,
        "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }
    assert reg.auth_status("faux") == {"configured": True}
    assert reg.custom_auth_providers() == [{"id": "acme", "name": "Acme"}]
    assert reg.provider_auth_statuses() == [
        {"provider": "faux", "status": {"configured": True}},
        {"provider": "acme", "status": {"configured": True, "source": "environment", "label": "ACME_KEY"}},
    ]
    reg.login("acme", "stored")
    assert [s["provider"] for s in reg.provider_auth_statuses()] == ["faux"]
    assert reg.oauth_providers() == []


async def _fake_stream(model, context, options):  # type: ignore[no-untyped-def]
    yield {"type": "done"}


def test_stream_fn(tmp_path: Path) -> None:
    apis = {
        "direct": ApiImpl(api="direct", stream=_fake_stream),
        "lazy": ApiImpl(api="lazy", stream="json:dumps"),
        "broken": ApiImpl(api="broken", stream="no_such_module_xyz:stream"),
    }
    reg = ModelRegistry(tmp_path, [], apis, env={})
    assert reg.stream_fn("direct") is _fake_stream
    assert reg.stream_fn("lazy") is json.dumps
    assert reg.stream_fn("missing") is None
    assert reg.stream_fn("broken") is None
    assert any("no_such_module_xyz" in e for e in reg.errors)


def test_request_headers(tmp_path: Path) -> None:
    write_json(
        tmp_path / "models.json",
        {
            "providers": {
                "gw": {
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "api": "openai-completions",
                    "apiKey": "$GW_KEY",
                    "authHeader": True,
                    "headers": {"x-team": "${TEAM}", "x-cmd": "!printf hdr", "x-gone": "$UNSET"},
                    "models": [{"id": "m1", "headers": {"x-model": "one", "x-team": "override"}}],
                }
            }
        },
    )
    provider = ProviderInfo(id="gw", name="Gateway", api="openai-completions", headers={"x-base": "b"})
    reg = ModelRegistry(tmp_path, [provider], {}, env={"TEAM": "red", "GW_KEY": "sk-gw"})
    assert reg.errors == []
    model = reg.find("gw", "m1")
    assert model is not None
    assert reg.request_headers(model) == {
        "x-base": "b",
        "x-team": "override",
        "x-cmd": "hdr",
        "x-model": "one",
        "Authorization": "Bearer sk-gw",
    }
