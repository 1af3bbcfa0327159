"""The OpenAI wires answer with the keys and value types of real recorded responses for
the same kind of turn, and accept the real recorded requests (their proofs aside).

The recordings in ``recorded/`` come from the pydantic-ai project's test cassettes (MIT
licence, see ``recorded/LICENSE``)."""

from __future__ import annotations

import copy
from typing import Any

from thinkagent.emulator import Emulator

from .test_recorded_shapes import interactions, kind, post, request_body

BEARER = {"Authorization": "Bearer k"}


def assert_same_shape(real: Any, ours: Any, path: str = "$") -> None:
    """Every key of ``real`` is in ``ours`` with a value of the same JSON type, recursively;
    list elements are matched by their ``type`` (output items, content parts), else by
    position (``choices``, ``tool_calls``, ``summary``)."""
    assert kind(ours) == kind(real), f"{path}: {kind(ours)} instead of {kind(real)}"
    if isinstance(real, dict):
        for key, value in real.items():
            assert key in ours, f"{path}.{key} is missing"
            assert_same_shape(value, ours[key], f"{path}.{key}")
    elif isinstance(real, list):
        assert ours or not real, f"{path} is empty"
        by_type = {b.get("type"): b for b in ours if isinstance(b, dict)}
        for index, item in enumerate(real):
            if isinstance(item, dict) and "type" in item:
                assert item["type"] in by_type, f"{path}[{index}]: no {item['type']!r} element"
                assert_same_shape(item, by_type[item["type"]], f"{path}[{index}]")
            else:
                assert_same_shape(item, ours[min(index, len(ours) - 1)], f"{path}[{index}]")


def chat_post(emu: Emulator, body: Any) -> tuple[int, Any]:
    return post(emu, "/v1/chat/completions", body, BEARER)


def responses_post(emu: Emulator, body: Any) -> tuple[int, Any]:
    return post(emu, "/v1/responses", body, BEARER)


def test_deepseek_tool_turns_and_answer(emu: Emulator) -> None:
    recorded = interactions("test_deepseek_deferred_capability_with_thinking.yaml")
    real_by_kind = {
        i["response"]["parsed_body"]["choices"][0]["finish_reason"]: i["response"]["parsed_body"]
        for i in recorded
    }
    assert set(real_by_kind) == {"tool_calls", "stop"}
    for interaction in recorded:  # every real request is accepted, with its real replays
        status, ours = chat_post(emu, request_body(interaction))
        assert status == 200, ours
        assert_same_shape(real_by_kind[ours["choices"][0]["finish_reason"]], ours)
    status, first = chat_post(emu, request_body(recorded[0]))
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert first["choices"][0]["message"]["tool_calls"][0]["id"].startswith("call_00_")


def test_deepseek_recorded_history_without_reasoning_content(emu: Emulator) -> None:
    body = request_body(interactions("test_deepseek_deferred_capability_with_thinking.yaml")[2])
    stripped = copy.deepcopy(body)
    del stripped["messages"][5]["reasoning_content"]  # the empty one the service accepted
    status, error = chat_post(emu, stripped)
    assert status == 400
    assert error["error"]["message"].startswith(
        "Missing `reasoning_content` field in the assistant message at message index 5."
    )


def test_responses_tool_turn_and_answer_turn(emu: Emulator) -> None:
    recorded = interactions("test_openai_responses_thinking_with_tool_calls.yaml")
    first_request = request_body(recorded[0])
    status, first = responses_post(emu, first_request)
    assert status == 200, first
    kinds = [i["type"] for i in first["output"]]
    assert kinds[0] == "reasoning"
    assert set(kinds[1:]) == {"function_call"}  # one plan per capitalised name: parallel calls
    assert first["output"][0]["encrypted_content"].startswith("gAAAAA")
    assert_same_shape(recorded[0]["response"]["parsed_body"], first)

    follow_up = {
        **first_request,
        "input": [
            *first_request["input"],
            *[{k: v for k, v in item.items() if k != "status"} for item in first["output"]],
            *[
                {"type": "function_call_output", "call_id": i["call_id"], "output": "plan updated"}
                for i in first["output"][1:]
            ],
        ],
    }
    status, second = responses_post(emu, follow_up)
    assert status == 200, second
    assert second["output"][-1]["type"] == "message"
    real_answer = recorded[1]["response"]["parsed_body"]
    assert_same_shape(
        real_answer, {**second, "output": [i for i in second["output"] if i["type"] == "message"]}
    )


def test_real_encrypted_content_is_foreign_to_the_emulator(emu: Emulator) -> None:
    """The recorded second request replays a real OpenAI token: sealed with another key,
    so it does not verify here."""
    body = request_body(interactions("test_openai_responses_thinking_with_tool_calls.yaml")[1])
    status, error = responses_post(emu, body)
    assert status == 400
    item_id = body["input"][1]["id"]
    assert error == {
        "error": {
            "message": f"The encrypted content for item {item_id} could not be verified. "
            "Reason: Encrypted content could not be decrypted or parsed.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_encrypted_content",
        }
    }
