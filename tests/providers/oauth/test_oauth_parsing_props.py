"""Property tests of ``builtin_plugins.oauth.parsing`` with hostile server and user input: wrong
types, missing fields, huge values, invalid JSON and bytes that are not UTF-8. Every parser either
returns a value that keeps its promises or raises :class:`OAuthError`; nothing else escapes."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builtin_plugins.oauth import common
from builtin_plugins.oauth.parsing import (
    MAX_DEVICE_LIFETIME_S,
    MAX_LIFETIME_S,
    MAX_POLL_INTERVAL_S,
    MAX_TOKEN_CHARS,
    OAuthError,
    decode_body,
    error_code,
    jwt_claims,
    parse_authorization_input,
    parse_callback_target,
    parse_copilot_token,
    parse_device_code_response,
    parse_device_poll,
    parse_token_response,
)

pytestmark = pytest.mark.slow  # hypothesis over every OAuth parser

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

huge_int = st.integers(min_value=10**300, max_value=10**310)
scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), huge_int,
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=40),
    st.sampled_from(["3600", "-1", "1e400", "nan", "", " ", "tok\x00en", "tök€n", "a b", "\ud800x" * 3]),
    st.just("x" * (MAX_TOKEN_CHARS + 1)),
)
value = st.recursive(scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                     max_leaves=8)
FIELDS = ["access_token", "refresh_token", "expires_in", "id_token", "token_type", "error", "error_description",
          "device_code", "user_code", "verification_uri", "verification_url", "interval", "token", "expires_at"]
field_objects = st.dictionaries(st.sampled_from(FIELDS), value, max_size=8)
good_token = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~+/=",
                     min_size=1, max_size=64)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, allow_nan=True)


bodies = st.one_of(
    field_objects.map(_dumps),
    st.builds(lambda token, rest: _dumps({"access_token": token, "refresh_token": token + "r", **rest}),
              good_token, field_objects),
    st.builds(lambda n: "[" * n + "]" * n, st.integers(min_value=1, max_value=5000)),  # deep nesting
    st.sampled_from(['{"expires_in": 1' + "0" * 5000 + "}", "null", "[]", '"str"', "{", "", "   ", "1e999",
                     '{"access_token": "a", "expires_in": 1e999}']),
    st.text(max_size=200),
    st.binary(max_size=200).map(decode_body),  # not UTF-8: decoded as the host decodes bodies
)
statuses = st.one_of(st.sampled_from([200, 201, 204, 400, 401, 403, 429, 500, 502]), st.integers(-1, 1000))


def check_token(token: Any) -> None:
    for text in (token.access_token, token.refresh_token, token.id_token):
        if text is not None:
            assert isinstance(text, str) and text and len(text) <= MAX_TOKEN_CHARS
            assert text.isascii() and text.isprintable() and " " not in text
    if token.expires_in is not None:
        assert math.isfinite(token.expires_in) and 0 <= token.expires_in <= MAX_LIFETIME_S
    # what the flows compute from it never overflows
    assert common.expires_at(token) >= int(time.time() * 1000) - 1000


@SETTINGS
@given(statuses, bodies, st.text(max_size=20))
def test_token_responses_give_a_valid_token_or_an_oauth_error(status: int, body: str, what: str) -> None:
    try:
        token = parse_token_response(status, body, what or "Token request")
    except OAuthError as exc:
        assert str(exc)
        assert len(str(exc)) < 1200  # a hostile body is quoted, never whole
        return
    assert status < 400
    check_token(token)


@SETTINGS
@given(statuses, bodies)
def test_device_code_responses_are_valid_or_an_oauth_error(status: int, body: str) -> None:
    try:
        device = parse_device_code_response(status, body)
    except OAuthError as exc:
        assert str(exc)
        return
    assert device.device_code and device.user_code and device.user_code.isprintable()
    assert device.verification_uri.startswith(("http://", "https://"))
    assert 0 <= device.expires_in <= MAX_DEVICE_LIFETIME_S
    assert device.interval is None or 0 <= device.interval <= MAX_POLL_INTERVAL_S


@SETTINGS
@given(statuses, bodies)
def test_device_polls_are_classified_or_an_oauth_error(status: int, body: str) -> None:
    try:
        poll = parse_device_poll(status, body)
    except OAuthError:
        return
    assert poll.status in ("complete", "pending", "slow_down", "failed")
    if poll.status == "complete":
        assert poll.token is not None
        check_token(poll.token)
    if poll.status == "failed":
        assert poll.message
    if poll.interval is not None:
        assert 0 <= poll.interval <= MAX_POLL_INTERVAL_S


@SETTINGS
@given(statuses, bodies)
def test_copilot_token_answers_are_valid_or_an_oauth_error(status: int, body: str) -> None:
    try:
        answer = parse_copilot_token(status, body)
    except OAuthError as exc:
        assert str(exc)
        return
    assert answer.token.isascii() and answer.token.isprintable()
    assert math.isfinite(answer.expires_at) and answer.expires_at >= 0
    assert int(answer.expires_at * 1000) >= 0  # the stored expiry is computable


@SETTINGS
@given(bodies)
def test_error_code_is_a_string_or_none(body: str) -> None:
    code = error_code(body)
    assert code is None or (isinstance(code, str) and code)


targets = st.one_of(
    st.text(max_size=120),
    st.builds(lambda q: "/callback?" + q, st.text(max_size=120)),
    st.sampled_from(["/callback?code=a&state=b", "/callback?" + "&".join(f"k{i}=v" for i in range(60)),
                     "http://[::1", "/callback?code=%ff%fe&state=%00", "//[", "/callback?error=x&error_description="]),
)


@SETTINGS
@given(targets)
def test_callback_targets_are_read_or_ignored(target: str) -> None:
    callback = parse_callback_target(target, "/callback")
    if callback is not None:
        for part in (callback.code, callback.state, callback.error):
            assert part is None or (isinstance(part, str) and part)


@SETTINGS
@given(st.one_of(targets, st.text(max_size=200), st.binary(max_size=100).map(decode_body),
                 st.sampled_from(["http://x/cb?code=c&state=s", "c#s", "#", "code=c&state=s", "http://[", "  \n"])))
def test_pasted_codes_give_strings_or_nothing(text: str) -> None:
    code, state = parse_authorization_input(text)
    assert code is None or isinstance(code, str)
    assert state is None or isinstance(state, str)


@SETTINGS
@given(st.one_of(st.text(max_size=100), st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.text(max_size=30),
                                                  st.text(max_size=60), st.text(max_size=10))))
def test_jwt_claims_is_always_a_dict(token: str) -> None:
    assert isinstance(jwt_claims(token), dict)


def test_known_hostile_values_get_clear_errors() -> None:
    """The cases the properties above found (each used to raise something other than OAuthError)."""
    big = parse_token_response(200, '{"access_token": "at-1", "expires_in": 1' + "0" * 400 + "}")
    assert big.expires_in == MAX_LIFETIME_S  # an int too big for a float: capped, not OverflowError
    assert parse_token_response(200, '{"access_token": "at-1", "expires_in": "120"}').expires_in == 120
    for body, message in [
        ('{"access_token": "t\\u00f6ken"}', "characters a token cannot have"),
        ('{"access_token": "' + "a" * (MAX_TOKEN_CHARS + 1) + '"}', "at most"),
        ('{"access_token": 12345}', "returned no access_token"),
        ("\ufffd\ufffd not json", "Token request failed (200)"),
        ('{"error": "invalid_grant", "error_description": "' + "x" * 5000 + '"}', "invalid_grant"),
    ]:
        try:
            parse_token_response(200, body)
        except OAuthError as exc:
            assert message in str(exc), str(exc)
            assert len(str(exc)) < 1200
        else:
            raise AssertionError(body)
    assert decode_body(b"\xff\xfe{") == "\ufffd\ufffd{"
    try:
        parse_copilot_token(200, '{"token": "tid=1", "expires_at": 1e999}')
    except OAuthError as exc:
        assert "Invalid Copilot token response fields" in str(exc)
    else:
        raise AssertionError("an infinite expires_at was accepted")
