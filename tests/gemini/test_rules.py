"""The pure Gemini rules: thinking configuration, finish reasons, signature encoding, ids."""

from __future__ import annotations

import base64

import pytest

from thinkagent import ConfigurationError
from thinkagent.providers.gemini._rules import (
    GeminiThinking,
    check_missing_signature,
    check_replay_thoughts,
    decode_signature,
    encode_signature,
    finish_reason,
    gemini_version,
    generated_call_id,
    signature_generation,
    signatures_carry_over,
    thinking_for_model,
)

# Bytes whose standard and URL-safe base64 differ ("+/" against "-_").
TRICKY = b"\xfb\xff\xfe-sig-\xfa\xfb\xff\x00\x01"


@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("gemini-3-pro-preview", (3, 0, "pro-preview")),
        ("gemini-2.5-flash", (2, 5, "flash")),
        ("gemini-2.5-flash-lite", (2, 5, "flash-lite")),
        ("gemini-3.1-flash-lite-preview", (3, 1, "flash-lite-preview")),
        ("models/gemini-2.5-pro", (2, 5, "pro")),
        ("publishers/google/models/gemini-3-flash-preview", (3, 0, "flash-preview")),
        ("projects/p/locations/l/publishers/google/models/gemini-2.0-flash", (2, 0, "flash")),
        ("gemini-flash-latest", None),
        ("tunedModels/my-model-123", None),
        ("gemma-3-27b-it", None),
    ],
)
def test_gemini_version(name: str, version: tuple[int, int, str] | None) -> None:
    assert gemini_version(name) == version


def test_defaults_ask_for_thought_summaries_wherever_the_model_thinks() -> None:
    assert thinking_for_model("gemini-3-pro-preview", None) == GeminiThinking(include_thoughts=True)
    assert thinking_for_model("gemini-2.5-flash", None).include_thoughts is True
    assert thinking_for_model("gemini-flash-latest", None).include_thoughts is True
    assert thinking_for_model("gemini-2.0-flash", None).include_thoughts is False
    assert thinking_for_model("gemini-2.0-flash", None).to_param() is None
    assert thinking_for_model("gemini-3-pro-preview", None).to_param() == {"include_thoughts": True}


def test_level_is_case_insensitive_and_goes_on_the_wire_in_capitals() -> None:
    thinking = thinking_for_model("gemini-3-flash-preview", GeminiThinking(level="high"))
    assert thinking.level == "HIGH"
    assert thinking.to_param() == {"include_thoughts": True, "thinking_level": "HIGH"}
    assert (
        thinking_for_model("gemini-3-pro-preview", GeminiThinking(level="xHigh")).level == "XHIGH"
    )


def test_budget_settings() -> None:
    assert thinking_for_model("gemini-2.5-flash", GeminiThinking(budget=1024)).to_param() == {
        "include_thoughts": True,
        "thinking_budget": 1024,
    }
    assert thinking_for_model("gemini-2.5-pro", GeminiThinking(budget=-1)).budget == -1
    off = thinking_for_model("gemini-2.5-flash", GeminiThinking(budget=0))
    assert off.include_thoughts is False
    assert not off.thinks
    assert off.to_param() == {"thinking_budget": 0}
    quiet = thinking_for_model("gemini-3-pro-preview", GeminiThinking(include_thoughts=False))
    assert quiet.to_param() is None


@pytest.mark.parametrize(
    ("model", "kwargs", "message"),
    [
        ("gemini-3-pro-preview", {"budget": 1024, "level": "low"}, "either budget or level"),
        ("gemini-2.5-flash", {"level": "high"}, "takes a thinking budget, not a level"),
        ("gemini-3-pro-preview", {"level": "maximal"}, "level must be one of"),
        ("gemini-2.5-pro", {"budget": 0}, "cannot turn thinking off"),
        ("gemini-3-pro-preview", {"budget": 0}, "cannot turn thinking off"),
        ("gemini-2.5-flash", {"budget": 0, "include_thoughts": True}, "budget=0 turns"),
        ("gemini-2.5-flash", {"budget": -2}, "budget must be"),
        ("gemini-2.5-flash", {"budget": True}, "budget must be"),
        ("gemini-2.5-flash", {"budget": 1.5}, "budget must be"),
        ("gemini-2.5-flash", {"include_thoughts": "yes"}, "include_thoughts must be"),
    ],
)
def test_conflicting_settings_are_refused(model: str, kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ConfigurationError, match=message):
        thinking_for_model(model, GeminiThinking(**kwargs))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 1024, "level": "low"}, "either budget or level"),
        ({"level": "maximal"}, "level must be one of"),
        ({"budget": 0, "include_thoughts": True}, "budget=0 turns"),
        ({"budget": -2}, "budget must be"),
        ({"include_thoughts": "yes"}, "include_thoughts must be"),
    ],
)
def test_conflicts_whatever_the_model_are_refused_when_the_config_is_built(
    kwargs: dict,
    message: str,  # type: ignore[type-arg]
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        GeminiThinking(**kwargs)


def test_the_model_dependent_checks_wait_for_the_model() -> None:
    level = GeminiThinking(level="high")  # a Gemini 2.5 model refuses it, not the config
    assert level.level == "HIGH"
    assert level.include_thoughts is None
    assert level.to_param() == {"thinking_level": "HIGH"}
    assert GeminiThinking(budget=0).to_param() == {"thinking_budget": 0}
    assert GeminiThinking() == GeminiThinking()  # frozen and compared by value
    with pytest.raises(ConfigurationError, match="takes a thinking budget"):
        thinking_for_model("gemini-2.5-flash", level)


def test_budget_zero_is_fine_where_thinking_can_be_turned_off() -> None:
    assert thinking_for_model("gemini-2.5-flash-lite", GeminiThinking(budget=0)).budget == 0
    assert thinking_for_model("gemini-3-flash-preview", GeminiThinking(budget=0)).budget == 0


def test_policies_are_checked() -> None:
    check_missing_signature("skip_validator")
    check_missing_signature("send")
    check_replay_thoughts("signed")
    check_replay_thoughts("all")
    with pytest.raises(ConfigurationError, match="missing_signature"):
        check_missing_signature("sentinel")
    with pytest.raises(ConfigurationError, match="replay_thoughts"):
        check_replay_thoughts("none")


@pytest.mark.parametrize(
    ("raw", "calls", "expected"),
    [
        ("STOP", False, "stop"),
        ("STOP", True, "tool_call"),
        ("MAX_TOKENS", False, "length"),
        ("MAX_TOKENS", True, "length"),
        ("SAFETY", False, "content_filter"),
        ("RECITATION", False, "content_filter"),
        ("BLOCKLIST", False, "content_filter"),
        ("PROHIBITED_CONTENT", False, "content_filter"),
        ("SPII", False, "content_filter"),
        ("IMAGE_SAFETY", False, "content_filter"),
        ("MODEL_ARMOR", False, "content_filter"),
        ("MALFORMED_FUNCTION_CALL", False, "error"),
        ("UNEXPECTED_TOOL_CALL", True, "error"),
        ("MISSING_THOUGHT_SIGNATURE", False, "error"),
        ("OTHER", False, "error"),
        ("SOMETHING_NEW", False, "error"),
        ("CONTINUATION", False, None),
        (None, False, None),
    ],
)
def test_finish_reasons(raw: str | None, calls: bool, expected: str | None) -> None:
    assert finish_reason(raw, tool_calls=calls) == expected


def test_signatures_are_stored_as_standard_base64_of_the_exact_bytes() -> None:
    stored = encode_signature(TRICKY)
    assert stored == base64.b64encode(TRICKY).decode()
    assert "+" in stored or "/" in stored  # the alphabets really differ for these bytes
    assert decode_signature(stored) == TRICKY


def test_both_alphabets_and_missing_padding_decode_to_the_same_bytes() -> None:
    urlsafe = base64.urlsafe_b64encode(TRICKY).decode()
    assert urlsafe != encode_signature(TRICKY)
    assert decode_signature(urlsafe) == TRICKY
    assert decode_signature(urlsafe.rstrip("=")) == TRICKY
    assert decode_signature(encode_signature(TRICKY).rstrip("=")) == TRICKY


def test_a_signature_that_is_not_base64_is_refused() -> None:
    with pytest.raises(ValueError, match="base64"):
        decode_signature("not base64!")


def test_generated_ids_are_stable_for_a_response_and_distinct_per_part() -> None:
    assert generated_call_id("resp-1", 2) == generated_call_id("resp-1", 2)
    assert generated_call_id("resp-1", 2) != generated_call_id("resp-1", 3)
    assert generated_call_id("resp-1", 2) != generated_call_id("resp-2", 2)
    assert generated_call_id(None, 0).startswith("gemini_call_")
    assert generated_call_id(None, 0) != generated_call_id(None, 0)


def test_signature_generations() -> None:
    assert signature_generation("gemini-3-pro-preview") == "3"
    assert signature_generation("gemini-3.1-flash-lite-preview") == "3"
    assert signature_generation("models/gemini-2.5-flash") == "2.5"
    assert signature_generation("gemini-flash-latest") is None
    assert signature_generation(None) is None


def test_signatures_carry_over_only_within_one_generation() -> None:
    assert signatures_carry_over("gemini-3-flash-preview", "gemini-3-pro-preview")
    assert signatures_carry_over("gemini-2.5-flash", "models/gemini-2.5-pro")
    assert not signatures_carry_over("gemini-2.5-flash", "gemini-3-pro-preview")
    assert not signatures_carry_over("gemini-3-pro-preview", "gemini-2.5-pro")
    assert signatures_carry_over(None, "gemini-3-pro-preview")  # a name that does not tell
    assert signatures_carry_over("gemini-2.5-flash", "gemini-flash-latest")
