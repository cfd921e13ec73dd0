"""Properties of the tool environment filter (kit/tool_env.py) and of its ``shellEnv`` setting,
with hostile input: any names and values, malformed settings, and a cost linear in the size."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_host.kit import secrets, tool_env

NAMES = st.text(alphabet=st.sampled_from("ABKEYSCRTOKNPWDSaeikn_0"), min_size=1, max_size=14)
VALUES = st.text(min_size=0, max_size=30).filter(lambda v: "\0" not in v)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@pytest.fixture
def fresh_secrets(monkeypatch: pytest.MonkeyPatch) -> secrets.SecretSet:
    """The host's credential set replaced by an empty one for the test (registrations stay local)."""
    fresh = secrets.SecretSet()
    monkeypatch.setattr(secrets, "_default", fresh)
    return fresh


def _named_like_a_credential(name: str) -> bool:
    return any(part in name.upper() for part in tool_env.SCRUBBED_NAME_PARTS)


@settings(max_examples=300, deadline=None)
@given(
    environ=st.dictionaries(NAMES, VALUES, max_size=25),
    keep=st.lists(NAMES | st.sampled_from(["*", "A*", "*KEY*", "?"]), max_size=4),
    registered=st.lists(st.text(min_size=8, max_size=12), max_size=3),
)
def test_filter_properties(environ: dict[str, str], keep: list[str], registered: list[str]) -> None:
    known = secrets.SecretSet()
    for value in registered:
        known.register(value, "test")
    original = secrets._default
    secrets._default = known
    try:
        env = tool_env.tool_environment({"EXTRA_TOKEN": "set by the caller"}, keep=keep, environ=environ)
    finally:
        secrets._default = original
    assert env.pop("EXTRA_TOKEN") == "set by the caller"  # explicit variables always arrive
    for name, value in env.items():
        assert environ[name] == value
        if not tool_env._passed(name, tuple(keep)):
            assert not _named_like_a_credential(name)
            assert known.mask(value) == value
    for name, value in environ.items():
        clean = not _named_like_a_credential(name) and known.mask(value) == value and name not in tool_env._declared
        if clean or (keep and tool_env._passed(name, tuple(keep))):
            assert env.get(name) == value


def test_a_value_holding_a_known_credential_is_left_out_whatever_its_name(fresh_secrets: secrets.SecretSet) -> None:
    fresh_secrets.register("credential-value-0123", "auth.json:x")
    environ = {"HARMLESS": "prefix credential-value-0123 suffix", "OTHER": "credential-value", "PATH": "/bin"}
    assert tool_env.tool_environment(environ=environ) == {"OTHER": "credential-value", "PATH": "/bin"}
    assert tool_env.tool_environment(environ=environ, keep=["HARM*"])["HARMLESS"].startswith("prefix")


@settings(max_examples=300, deadline=None)
@given(setting=JSON)
def test_pass_through_setting_never_raises_and_keeps_only_names(setting: Any) -> None:
    names = tool_env.pass_through(setting)
    assert isinstance(names, tuple) and all(isinstance(n, str) and n for n in names)
    if not (isinstance(setting, dict) and isinstance(setting.get("passThrough"), list)):
        assert names == ()


@given(setting=st.dictionaries(st.just("passThrough"), st.lists(JSON, max_size=10), min_size=1))
def test_pass_through_keeps_the_strings_of_the_list_in_order(setting: dict[str, Any]) -> None:
    assert list(tool_env.pass_through(setting)) == [n for n in setting["passThrough"] if isinstance(n, str) and n]


def test_cost_is_linear_in_the_environment_size(fresh_secrets: secrets.SecretSet) -> None:
    fresh_secrets.register("a-registered-credential", "x")
    keep = ["AWS_*", "GITHUB_TOKEN", "MY_?AR"]

    def cpu(n: int) -> float:
        environ = {f"VAR_{i}": "v" * 40 + str(i) for i in range(n)}
        environ.update({f"SECRET_{i}": "x" for i in range(n // 10)})
        start = time.process_time()
        for _ in range(max(1, 20_000 // n)):
            env = tool_env.tool_environment(environ=environ, keep=keep)
        assert len(env) == n
        return (time.process_time() - start) / max(1, 20_000 // n)

    small, ten, hundred = cpu(200), cpu(2_000), cpu(20_000)
    # per call: x10 / x100 the variables cost about x10 / x100, never the square
    assert ten < small * 10 * 4 and hundred < small * 100 * 4, (small, ten, hundred)
