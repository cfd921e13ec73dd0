"""``$VAR``/``${VAR}`` interpolation of config values (values.py): a value without a ``$`` is its own
expansion, returned before the reference pattern is compiled; with one, the pattern decides (the
escapes, set and unset variables, a lone reference)."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from atomic_host.core.models.values import _REF, env_refs, interpolate

ENV = {"KEY": "sk-live", "EMPTY": ""}


def _reference(value: str) -> str | None:
    whole = re.fullmatch(_REF, value)
    if whole and (whole.group(1) or whole.group(2)):
        return ENV.get(whole.group(1) or whole.group(2)) or None
    escapes = {"$$": "$", "$!": "!"}
    return re.sub(_REF, lambda m: escapes.get(m.group(0)) or ENV.get(m.group(1) or m.group(2), ""), value)


@given(st.text(alphabet=st.sampled_from(list("ab!{}_ $KEYEMPTY")), max_size=12) | st.text(max_size=12))
def test_interpolate_and_env_refs_match_the_pattern(value: str) -> None:
    assert interpolate(value, ENV) == _reference(value)
    assert env_refs(value) == [m.group(1) or m.group(2) for m in re.finditer(_REF, value) if m.group(1) or m.group(2)]


def test_known_forms() -> None:
    assert interpolate("sk-plain!", ENV) == "sk-plain!" and env_refs("sk-plain") == []
    assert interpolate("$KEY", ENV) == "sk-live" and interpolate("${KEY}", ENV) == "sk-live"
    assert interpolate("$EMPTY", ENV) is None and interpolate("$UNSET", ENV) is None
    assert interpolate("Bearer ${KEY}/$UNSET $$ $!x", ENV) == "Bearer sk-live/ $ !x"
    assert env_refs("a $KEY ${EMPTY} $$ $!") == ["KEY", "EMPTY"]


def test_a_value_without_a_dollar_compiles_no_pattern() -> None:
    code = (
        "import re\nfrom atomic_host.core.models.values import interpolate\n"
        "re.purge()\nprint(interpolate('dummy-key', {}), len(re._cache))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["dummy-key", "0"]
