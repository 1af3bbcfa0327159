"""Conformance on a real recorded Bedrock Converse exchange (see recorded/README.md): the real
response, parsed by botocore exactly as boto3 parses it, gives the blocks with their exact
signature; and the next request we build, serialised by botocore exactly as boto3 sends it,
carries the same messages the real service accepted."""

from __future__ import annotations

import base64
import json
from typing import Any

import botocore.session
from botocore import parsers, serialize

from tests.support import recorded
from tests.support.claude import without_cache
from thinkagent import (
    Message,
    ModelRequest,
    ThinkingBlock,
    ToolDefinition,
    ToolResult,
    dump_messages,
    load_messages,
)
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

MODEL_ID = "us.anthropic.claude-3-7-sonnet-20250219-v1:0"
_SERVICE = botocore.session.get_session().get_service_model("bedrock-runtime")
CONVERSE = _SERVICE.operation_model("Converse")


def interactions() -> list[dict[str, Any]]:
    return recorded.interactions("test_bedrock_anthropic_tool_with_thinking.yaml")


def botocore_parse(body: dict[str, Any]) -> dict[str, Any]:
    """What `client.converse` returns for this JSON body (blobs decoded to bytes)."""
    parser = parsers.create_parser("rest-json")
    raw = {"status_code": 200, "headers": {}, "body": json.dumps(body).encode()}
    return parser.parse(raw, CONVERSE.output_shape)


def botocore_body(params: dict[str, Any]) -> dict[str, Any]:
    """The JSON body boto3 sends for these `converse` parameters."""
    request = serialize.create_serializer("rest-json").serialize_to_request(params, CONVERSE)
    return json.loads(request["body"])


def test_parse_and_replay() -> None:
    first, second = interactions()
    sent = json.loads(first["request"]["body"])
    thinking = sent["additionalModelRequestFields"]["thinking"]
    model = BedrockModel(
        MODEL_ID,
        client=object(),
        thinking=ClaudeThinking.budget(thinking["budget_tokens"]),
    )
    response = botocore_parse(first["response"]["parsed_body"])
    message = model.parse_response(response).message
    real = first["response"]["parsed_body"]["output"]["message"]["content"]
    text = real[0]["reasoningContent"]["reasoningText"]
    assert message.parts[0] == ThinkingBlock.signed(text["text"], text["signature"])
    assert [p.kind for p in message.parts] == ["thinking", "text", "tool_call"]
    call = message.tool_calls[0]
    assert (call.id, call.name, call.arguments) == (
        "tooluse_W9DaUFg4Tj2cRPpndqxWSg",
        "get_user_country",
        {},
    )
    assert message.finish_reason == "tool_call"
    assert message.usage is not None
    assert (message.usage.input_tokens, message.usage.output_tokens) == (397, 130)

    accepted = json.loads(second["request"]["body"])
    result = accepted["messages"][2]["content"][0]["toolResult"]
    history = [
        Message.user(sent["messages"][0]["content"][0]["text"]),
        load_messages(dump_messages([message]))[0],
        Message.user_results(
            [
                ToolResult(
                    call_id=result["toolUseId"],
                    name=call.name,
                    content=result["content"][0]["text"],
                )
            ]
        ),
    ]
    spec = sent["toolConfig"]["tools"][0]["toolSpec"]
    tools = [ToolDefinition(spec["name"], spec.get("description", ""), spec["inputSchema"]["json"])]
    sent = model.build_request(ModelRequest(history, tools=tools))
    # the accepted request, with a cache point after each user turn and after the tools
    assert [m["content"][-1] for m in sent["messages"][::2]] == [
        {"cachePoint": {"type": "default"}}
    ] * 2
    assert sent["toolConfig"]["tools"][-1] == {"cachePoint": {"type": "default"}}
    body = botocore_body(without_cache(sent))
    assert body["messages"][1] == accepted["messages"][1]  # the assistant turn, exactly
    assert body["messages"] == accepted["messages"]
    assert body["toolConfig"] == accepted["toolConfig"]
    assert body["additionalModelRequestFields"] == accepted["additionalModelRequestFields"]


def test_redacted_bytes_round_trip_through_botocore() -> None:
    # The recording has no redacted block; one with bytes that are not UTF-8, as some models
    # send, goes through botocore's own parser and serialiser unchanged.
    raw = bytes(range(256))
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"redactedContent": base64.b64encode(raw).decode()}},
                    {"text": "Done."},
                ],
            }
        },
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3},
        "metrics": {"latencyMs": 1},
    }
    model = BedrockModel(MODEL_ID, client=object(), thinking=ClaudeThinking.budget(1024))
    message = model.parse_response(botocore_parse(body)).message
    assert message.parts[0] == ThinkingBlock.redacted_payload(base64.b64encode(raw).decode())
    loaded = load_messages(dump_messages([Message.user("q"), message]))
    params = model.build_request(ModelRequest([*loaded, Message.user("again")]))
    assert params["messages"][1]["content"][0] == {"reasoningContent": {"redactedContent": raw}}
    assert (
        botocore_body(params)["messages"][1]["content"][0]
        == body["output"]["message"]["content"][0]
    )
