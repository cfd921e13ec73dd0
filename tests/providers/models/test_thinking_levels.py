"""Thinking levels: supported lists, clamp and cycle tables (providers.md "Thinking levels")."""

from __future__ import annotations

import pytest

from atomic_host.core.models.thinking import LEVELS, clamp, map_value, next_level, supported_levels

PLAIN = {"id": "plain", "reasoning": True}
GPT5 = {"id": "gpt-5", "reasoning": True, "thinkingLevelMap": {"off": None}}
GPT52 = {"id": "gpt-5.2", "reasoning": True, "thinkingLevelMap": {"off": None, "xhigh": "xhigh"}}
GPT55 = {"id": "gpt-5.5", "reasoning": True, "thinkingLevelMap": {"off": None, "minimal": None, "xhigh": "xhigh"}}
OPUS46 = {"id": "claude-opus-4-6", "reasoning": True, "thinkingLevelMap": {"max": "max"}}
OPUS47 = {"id": "claude-opus-4-7", "reasoning": True, "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"}}
FABLE = {"id": "fable-5", "reasoning": True, "thinkingLevelMap": {"off": None, "xhigh": "xhigh", "max": "max"}}
NO_REASONING = {"id": "gpt-4o", "reasoning": False, "thinkingLevelMap": {"max": "max"}}
ALL_NULL = {"id": "odd", "reasoning": True, "thinkingLevelMap": dict.fromkeys(LEVELS)}


@pytest.mark.parametrize(
    ("model", "levels"),
    [
        (PLAIN, ["off", "minimal", "low", "medium", "high"]),
        (GPT5, ["minimal", "low", "medium", "high"]),
        (GPT52, ["minimal", "low", "medium", "high", "xhigh"]),
        (GPT55, ["low", "medium", "high", "xhigh"]),
        (OPUS46, ["off", "minimal", "low", "medium", "high", "max"]),
        (OPUS47, list(LEVELS)),
        (FABLE, ["minimal", "low", "medium", "high", "xhigh", "max"]),
        (NO_REASONING, ["off"]),
        (ALL_NULL, []),
    ],
)
def test_supported(model: dict, levels: list[str]) -> None:
    assert supported_levels(model) == levels


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        (GPT5, "off", "minimal"),
        (PLAIN, "max", "high"),
        (PLAIN, "xhigh", "high"),
        (PLAIN, "medium", "medium"),
        (OPUS46, "xhigh", "max"),
        (GPT55, "minimal", "low"),
        (GPT55, "off", "low"),
        (GPT52, "max", "xhigh"),
        (NO_REASONING, "high", "off"),
        (NO_REASONING, "off", "off"),
        (ALL_NULL, "medium", "off"),
    ],
)
def test_clamp(model: dict, level: str, expected: str) -> None:
    assert clamp(model, level) == expected


def test_clamp_unknown_level() -> None:
    with pytest.raises(ValueError):
        clamp(PLAIN, "ultra")


@pytest.mark.parametrize(
    ("model", "level", "expected"),
    [
        (PLAIN, "off", "minimal"),
        (PLAIN, "high", "off"),
        (GPT5, "high", "minimal"),
        (OPUS46, "high", "max"),
        (OPUS46, "max", "off"),
        (GPT5, "off", "minimal"),  # not in the list: starts the cycle
        (NO_REASONING, "off", None),
    ],
)
def test_next_level(model: dict, level: str, expected: str | None) -> None:
    assert next_level(model, level) == expected


def test_map_value() -> None:
    assert map_value(OPUS46, "max") == "max"
    assert map_value({"reasoning": True, "thinkingLevelMap": {"high": "very"}}, "high") == "very"
    assert map_value(PLAIN, "low") == "low"
