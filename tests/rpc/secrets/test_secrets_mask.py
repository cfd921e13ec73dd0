"""Unit and property tests of :mod:`atomic_host.kit.secrets`: the mask, the JSON and object forms, the
stream masker (secrets split across pieces), the stdio wrapper, and linear cost."""

from __future__ import annotations

import html
import io
import json
import time

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from atomic_host.kit.secrets import MIN_SECRET_LENGTH, MaskedTextStream, SecretSet, marker

# Secrets never contain "[" or "]": a marker then cannot combine with its neighbours into one.
SECRET_CHARS = st.characters(blacklist_characters="[]", blacklist_categories=("Cs",))
secret_st = st.text(SECRET_CHARS, min_size=MIN_SECRET_LENGTH, max_size=40).map(str.strip).filter(
    lambda s: len(s) >= MIN_SECRET_LENGTH)
plain_st = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


def make(*secrets: str) -> SecretSet:
    s = SecretSet()
    for i, value in enumerate(secrets):
        s.register(value, f"K{i}")
    return s


def markers_of(s: SecretSet, count: int) -> list[str]:
    return [marker(f"K{i}") for i in range(count)]


def no_secret_in(s: SecretSet, text: str, secrets: list[str]) -> bool:
    return not any(v in text for v in secrets)


# -- registration -----------------------------------------------------------------------------------

def test_short_and_non_string_values_are_not_credentials() -> None:
    s = SecretSet()
    assert not s.register("ollama", "x") and not s.register("1234567", "x")
    assert not s.register(None, "x") and not s.register(12345678901, "x") and not s.register("   ", "x")
    assert not s.active and s.mask("ollama 1234567") == "ollama 1234567"
    assert s.register("  sk-12345678\n", "ENV")  # stripped, then long enough
    assert s.mask("key=sk-12345678.") == "key=[REDACTED:ENV]."
    assert not s.register("sk-12345678", "OTHER")  # the first label wins
    assert len(s) == 1


def test_label_is_made_marker_safe() -> None:
    assert marker("auth.json:my provider\"x") == "[REDACTED:auth.json:my_provider_x]"
    assert marker("") == "[REDACTED:secret]"


def test_nothing_registered_returns_the_same_objects() -> None:
    s = SecretSet()
    obj = {"a": ["b", {"c": "d"}]}
    text = "anything"
    assert s.mask(text) is text and s.mask_json(text) is text and s.mask_obj(obj) is obj


# -- mask -------------------------------------------------------------------------------------------

@given(secret_st, plain_st, plain_st)
def test_secret_at_any_position_is_masked(secret: str, before: str, after: str) -> None:
    s = make(secret)
    masked = s.mask(before + secret + after)
    assume(secret not in marker("K0"))
    assert secret not in masked
    assert marker("K0") in masked


@given(st.lists(secret_st, min_size=1, max_size=5), st.lists(st.integers(0, 4) | plain_st, max_size=12))
def test_overlapping_and_prefix_secrets_never_survive(secrets: list[str], parts: list[int | str]) -> None:
    # Text glued from whole secrets, their halves (overlaps across neighbours) and noise.
    pieces = []
    for part in parts:
        if isinstance(part, int):
            value = secrets[part % len(secrets)]
            pieces.append(value if part % 2 else value[: len(value) // 2 + 1])
        else:
            pieces.append(part)
    text = "".join(pieces) + secrets[0]
    s = make(*secrets)
    assume(not any(v in m for v in secrets for m in markers_of(s, len(secrets))))
    assert no_secret_in(s, s.mask(text), secrets)


def test_prefix_secrets_mask_the_longest() -> None:
    s = make("abcdefgh", "abcdefgh-longer")
    assert s.mask("x abcdefgh-longer y abcdefgh z") == "x [REDACTED:K1] y [REDACTED:K0] z"


def test_overlapping_secrets() -> None:
    s = make("aaaabbbbcccc", "ccccdddd1111")
    out = s.mask("aaaabbbbccccdddd1111")
    assert "aaaabbbbcccc" not in out and "ccccdddd1111" not in out


@given(st.lists(secret_st, min_size=1, max_size=4), plain_st)
def test_text_without_secrets_is_unchanged(secrets: list[str], text: str) -> None:
    s = make(*secrets)
    assume(not any(f in text for f, _m in s._compiled.text))  # type: ignore[union-attr]
    assert s.mask(text) is text


def test_unicode_secrets_in_plain_json_and_html_forms() -> None:
    secret = "clé-sécrète-日本-🔑-x"
    s = make(secret)
    for text in (secret, json.dumps(secret), json.dumps(secret, ensure_ascii=False), html.escape(secret)):
        assert "[REDACTED:K0]" in s.mask(f"<{text}>")
    assert secret not in s.mask(secret)


# -- mask_json / mask_obj ---------------------------------------------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), plain_st)


@given(st.lists(st.text(st.characters(blacklist_characters="[]", blacklist_categories=("Cs",)), min_size=8,
                        max_size=20).filter(lambda v: v == v.strip()), min_size=1, max_size=3),
       st.recursive(json_leaf, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(plain_st, kids, max_size=4),
                    max_leaves=20),
       st.booleans())
def test_mask_json_of_encoded_json_equals_mask_obj(secrets: list[str], tree: object, ascii_only: bool) -> None:
    # Secrets may hold quotes, backslashes, control characters and non-ASCII: the JSON form still matches.
    s = make(*secrets)
    doc = {"v": tree, "s": [f"x{v}y" for v in secrets], secrets[0]: 1}
    encoded = json.dumps(doc, ensure_ascii=ascii_only)
    masked = s.mask_json(encoded)
    assert json.loads(masked) == s.mask_obj(doc)
    for v in secrets:
        assume(not any(v in m for m in markers_of(s, len(secrets))))
        assert v not in json.dumps(json.loads(masked), ensure_ascii=False)


def test_mask_obj_copies_only_when_needed_and_keeps_types() -> None:
    s = make("sk-secret-value")
    clean = {"a": [1, 2.5, None, True, ("t", "u")], "b": {"c": "d"}}
    assert s.mask_obj(clean) is clean
    dirty = {"a": [1, ("sk-secret-value", 2)], "sk-secret-value": {"n": None}, "keep": clean}
    out = s.mask_obj(dirty)
    assert out == {"a": [1, ("[REDACTED:K0]", 2)], "[REDACTED:K0]": {"n": None}, "keep": clean}
    assert dirty["a"][1][0] == "sk-secret-value"  # the input is untouched


def test_mask_obj_handles_any_depth() -> None:
    s = make("sk-deep-secret")
    deep: object = "sk-deep-secret"
    for _ in range(20_000):
        deep = [deep]
    out = s.mask_obj(deep)
    for _ in range(20_000):
        out = out[0]  # type: ignore[index]
    assert out == "[REDACTED:K0]"


# -- stream ---------------------------------------------------------------------------------------

@given(st.lists(secret_st, min_size=1, max_size=3), st.lists(st.integers(0, 2) | plain_st, max_size=8),
       st.lists(st.integers(1, 15), min_size=1, max_size=30))
@settings(max_examples=300)
def test_stream_pieces_never_join_into_a_secret_and_lose_nothing(
    secrets: list[str], parts: list[int | str], cuts: list[int]
) -> None:
    text = "".join(secrets[p % len(secrets)] if isinstance(p, int) else p for p in parts) + secrets[-1]
    s = make(*secrets)
    assume(not any(v in m for v in secrets for m in markers_of(s, len(secrets))))
    masker = s.stream()
    out, pos, i = [], 0, 0
    while pos < len(text):
        size = cuts[i % len(cuts)]
        out.append(masker.feed(text[pos : pos + size]))
        pos, i = pos + size, i + 1
    out.append(masker.flush())
    joined = "".join(out)
    assert no_secret_in(s, joined, secrets)
    forms = [f for f, _m in s._compiled.text]  # type: ignore[union-attr]
    overlapping = any((a != b and a in b) or any(b.startswith(a[-k:]) for k in range(1, len(a)))
                      for a in forms for b in forms)
    if not overlapping:
        assert joined == s.mask(text)  # same text as masking it whole


@given(plain_st, st.lists(st.integers(1, 7), min_size=1, max_size=10))
def test_stream_without_secrets_in_it_is_passed_through(text: str, cuts: list[int]) -> None:
    s = make("zzzz-not-in-text-\x00")
    assume("zzzz-not-in-text-" not in text)
    masker = s.stream()
    out, pos, i = [], 0, 0
    while pos < len(text):
        out.append(masker.feed(text[pos : pos + cuts[i % len(cuts)]]))
        pos, i = pos + cuts[i % len(cuts)], i + 1
    assert "".join(out) + masker.flush() == text


def test_stream_holds_back_only_a_possible_start() -> None:
    s = make("sk-ant-api03-abcdef")
    m = s.stream()
    assert m.feed("the key is sk-a") == "the key is "
    assert m.pending
    assert m.feed("nt-api03-abcdef!") == "[REDACTED:K0]!"
    assert m.feed("ends with sk") == "ends with "
    assert m.flush() == "sk"


# -- stdio --------------------------------------------------------------------------------------------

def test_masked_text_stream_masks_writes_and_delegates_the_rest() -> None:
    s = make("sk-stderr-secret")
    inner = io.StringIO()
    stream = MaskedTextStream(inner, s)  # type: ignore[arg-type]
    print("leak:", "sk-stderr-secret", file=stream)  # type: ignore[arg-type]
    stream.writelines(["a sk-stderr-secret\n"])
    stream.flush()
    assert inner.getvalue() == "leak: [REDACTED:K0]\na [REDACTED:K0]\n"
    assert stream.getvalue() == inner.getvalue()  # delegated


# -- cost -----------------------------------------------------------------------------------------

def _best_of(fn: object, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        # CPU time of this process, not wall time: other work on a loaded machine does not inflate it
        t0 = time.process_time()
        fn()  # type: ignore[operator]
        best = min(best, time.process_time() - t0)
    return best


def test_cost_is_linear_in_text_size() -> None:
    secrets = [f"sk-cost-{i:02d}-Qx7Lm2Wp9Vb4Nk8Zr" for i in range(10)]
    s = make(*secrets)
    unit = ("ordinary output line with sk- prefixes but no key\n" * 200) + secrets[3]  # ~10 KB
    times = {n: _best_of(lambda n=n: s.mask(unit * n)) for n in (1, 10, 100)}
    assert times[100] < 300 * max(times[1], 1e-5), times  # ×100 text: ~×100 time, far from ×10,000
    assert times[10] < 40 * max(times[1], 1e-5), times


def test_stream_cost_is_linear_in_number_of_pieces() -> None:
    s = make(*[f"sk-stream-{i}-Hq2Lx9Vb4Nm8Kc1Z" for i in range(5)])

    def run(n: int) -> None:
        m = s.stream()
        for _ in range(n):
            m.feed("tok sk-str ")
            m.feed("eam-0-Hq2Lx9Vb4Nm8Kc1Z, more s")
        m.flush()

    times = {n: _best_of(lambda n=n: run(n)) for n in (200, 2000, 20000)}
    assert times[20000] < 300 * max(times[200], 1e-5), times


def test_held_back_tail_is_bounded_by_the_longest_secret() -> None:
    s = make("s" + "x" * 30)
    m = s.stream()
    out = m.feed("s" * 100_000)  # every position could start the secret; only the last can
    assert out == "s" * 99_999 and m.flush() == "s"
