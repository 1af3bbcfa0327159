"""The emulator's responses have the keys and value types of real recorded responses for
the same kind of turn, and it accepts the real recorded requests.

The recordings in ``recorded/`` come from the pydantic-ai project's test cassettes (MIT
licence, see ``recorded/LICENSE``)."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from tests.support.recorded import interactions, request_body
from thinkagent.emulator import Emulator
from thinkagent.emulator.brain import MAGIC_REDACTED_PROMPT

SIGV4 = "AWS4-HMAC-SHA256 Credential=AKIAEXAMPLE/20250101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=00"


def post(emu: Emulator, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(
        "POST", path, body=json.dumps(body), headers={"Content-Type": "application/json", **headers}
    )
    response = connection.getresponse()
    payload = json.loads(response.read())
    connection.close()
    return response.status, payload


def anthropic_post(emu: Emulator, body: Any) -> tuple[int, Any]:
    return post(emu, "/v1/messages", body, {"x-api-key": "k", "anthropic-version": "2023-06-01"})


def bedrock_post(emu: Emulator, model: str, body: Any) -> tuple[int, Any]:
    return post(emu, f"/model/{model}/converse", body, {"Authorization": SIGV4})


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def block_key(block: Any) -> str:
    """Content blocks are matched by their ``type`` (Anthropic) or single key (Bedrock)."""
    if isinstance(block, dict):
        return str(block.get("type") or next(iter(block), ""))
    return kind(block)


def assert_same_shape(real: Any, ours: Any, path: str = "$") -> None:
    """Every key of ``real`` is in ``ours`` with a value of the same JSON type, recursively;
    list elements are matched by block kind."""
    assert kind(ours) == kind(real), f"{path}: {kind(ours)} instead of {kind(real)}"
    if isinstance(real, dict):
        for key, value in real.items():
            assert key in ours, f"{path}.{key} is missing"
            assert_same_shape(value, ours[key], f"{path}.{key}")
    elif isinstance(real, list):
        by_key = {block_key(b): b for b in ours}
        for index, item in enumerate(real):
            assert block_key(item) in by_key, (
                f"{path}[{index}]: no {block_key(item)!r} element in {list(by_key)}"
            )
            assert_same_shape(item, by_key[block_key(item)], f"{path}[{index}]")


def test_anthropic_tool_turn_and_answer_turn(emu: Emulator) -> None:
    recorded = interactions("test_anthropic_tool_with_thinking.yaml")
    first_request = request_body(recorded[0])
    status, first = anthropic_post(emu, first_request)
    assert status == 200
    assert [b["type"] for b in first["content"]] == ["thinking", "text", "tool_use"]
    assert_same_shape(recorded[0]["response"]["parsed_body"], first)

    use = first["content"][-1]
    follow_up = {
        **first_request,
        "messages": [
            *first_request["messages"],
            {"role": "assistant", "content": first["content"]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": use["id"],
                        "content": "Mexico",
                        "is_error": False,
                    }
                ],
            },
        ],
    }
    status, second = anthropic_post(emu, follow_up)
    assert status == 200
    assert second["stop_reason"] == "end_turn"
    assert "Mexico" in second["content"][-1]["text"]
    real_answer = recorded[1]["response"]["parsed_body"]
    assert_same_shape(
        real_answer, {**second, "content": [b for b in second["content"] if b["type"] == "text"]}
    )


def test_anthropic_redacted_turn(emu: Emulator) -> None:
    recorded = interactions("test_anthropic_model_thinking_part_redacted.yaml")
    status, first = anthropic_post(emu, request_body(recorded[0]))
    assert status == 200
    assert [b["type"] for b in first["content"]] == ["redacted_thinking", "text"]
    assert_same_shape(recorded[0]["response"]["parsed_body"], first)
    real_data = recorded[0]["response"]["parsed_body"]["content"][0]["data"]
    assert first["content"][0]["data"][:1] == real_data[:1] == "E"
    # The follow-up question (without the trigger) is answered redacted too, as recorded.
    real_follow_up = request_body(recorded[1])
    follow_up = {
        **real_follow_up,
        "messages": [
            real_follow_up["messages"][0],
            {"role": "assistant", "content": first["content"]},
            real_follow_up["messages"][2],
        ],
    }
    assert MAGIC_REDACTED_PROMPT not in json.dumps(follow_up["messages"][2])
    status, second = anthropic_post(emu, follow_up)
    assert status == 200
    real_second = recorded[1]["response"]["parsed_body"]
    assert [b["type"] for b in real_second["content"]] == ["redacted_thinking", "text"]
    assert [b["type"] for b in second["content"]] == ["redacted_thinking", "text"]
    assert_same_shape(real_second, second)


def test_bedrock_tool_turn_and_answer_turn(emu: Emulator) -> None:
    recorded = interactions("test_bedrock_anthropic_tool_with_thinking.yaml")
    model = recorded[0]["request"]["uri"].split("/model/")[1].split("/")[0]
    first_request = request_body(recorded[0])
    status, first = bedrock_post(emu, model, first_request)
    assert status == 200
    content = first["output"]["message"]["content"]
    assert [next(iter(b)) for b in content] == ["reasoningContent", "text", "toolUse"]
    assert_same_shape(recorded[0]["response"]["parsed_body"], first)

    use = content[-1]["toolUse"]
    follow_up = {
        **first_request,
        "messages": [
            *first_request["messages"],
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": use["toolUseId"],
                            "content": [{"text": "Mexico"}],
                            "status": "success",
                        }
                    }
                ],
            },
        ],
    }
    status, second = bedrock_post(emu, model, follow_up)
    assert status == 200
    assert second["stopReason"] == "end_turn"
    assert_same_shape(recorded[1]["response"]["parsed_body"], second)


@pytest.mark.parametrize(
    "name",
    ["test_anthropic_tool_with_thinking.yaml", "test_anthropic_model_thinking_part_redacted.yaml"],
)
def test_real_signatures_are_foreign_to_the_emulator(emu: Emulator, name: str) -> None:
    """The recorded second requests replay real proofs: valid for the real service,
    signed with another key here, so refused (the tool-loop one) or ignored (the one
    before a new user question, as the service strips it)."""
    second_request = request_body(interactions(name)[1])
    status, body = anthropic_post(emu, second_request)
    if name.startswith("test_anthropic_tool"):
        assert status == 400
        assert (
            body["error"]["message"]
            == "messages.1.content.0: Invalid `signature` in `thinking` block"
        )
    else:
        assert status == 200
        assert [b["type"] for b in body["content"]] == ["redacted_thinking", "text"]
