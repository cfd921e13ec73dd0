"""RpcClient's event memory and run results (issue 14): bounded, cursors keep working."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from atomic_host.client import EventLog, RunResult


@given(limit=st.integers(1, 50), count=st.integers(0, 400), cursor=st.integers(0, 400))
def test_a_bounded_log_keeps_the_newest_and_cursors_stay_absolute(limit: int, count: int, cursor: int) -> None:
    log = EventLog(limit)
    for i in range(count):
        log.append(i)
    assert len(log) == count
    retained = list(log)
    assert retained == list(range(count - len(retained), count))
    assert len(retained) <= limit + limit // 4 and (count <= limit or len(retained) >= limit)
    assert log[cursor:] == [i for i in retained if i >= cursor]
    if retained:
        assert log[-1] == count - 1 and log[retained[0]] == retained[0]
        assert log.index(retained[-1]) == count - 1
    if count > len(retained):
        with pytest.raises(IndexError):
            log[0]


def test_clear_keeps_the_count() -> None:
    log = EventLog(None)
    for i in range(5):
        log.append(i)
    start = len(log)
    del log[:]
    log.append("new")
    assert len(log) == 6 and log[start:] == ["new"] and list(log) == ["new"]


def test_run_result_says_how_the_run_ended() -> None:
    ok = RunResult([{"type": "message_end", "message": {"role": "assistant", "stopReason": "stop",
                                                        "content": [{"type": "text", "text": "hi"}]}}])  # fmt: skip
    assert ok.ok and ok.error is None and ok.text == "hi"
    bad = {"role": "assistant", "stopReason": "error", "errorMessage": "401 bad key", "content": []}
    failed = RunResult([{"type": "message_end", "message": bad}])
    assert not failed.ok and failed.error == "401 bad key"
    assert RunResult([]).ok is False and RunResult([]).final_message is None
