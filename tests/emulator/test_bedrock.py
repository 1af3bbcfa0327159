"""The Bedrock Converse / ConverseStream wire API through the unmodified boto3 client."""

from __future__ import annotations

import base64
import copy
import http.client
import json
from typing import Any

import anthropic
import pytest
from botocore.exceptions import ClientError

from thinkagent.emulator import Emulator
from thinkagent.emulator.brain import MAGIC_REDACTED_PROMPT
from thinkagent.emulator.claude.bedrock import claude_name

from .tools import BEDROCK_TOOLS, QUESTION, TOOL_OUTPUT

MODEL = "us.anthropic.claude-sonnet-4-6"
BUDGET = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
ADAPTIVE = {"thinking": {"type": "adaptive"}}


def converse(
    client: Any, messages: list[Any], *, stream: bool = False, **kw: Any
) -> dict[str, Any]:
    """One Converse call; a stream is assembled into the Converse response shape."""
    options: dict[str, Any] = {
        "modelId": MODEL,
        "toolConfig": BEDROCK_TOOLS,
        "inferenceConfig": {"maxTokens": 4096},
    }
    options.update(kw)
    if not stream:
        return client.converse(messages=messages, **options)
    response = client.converse_stream(messages=messages, **options)
    blocks: dict[int, dict[str, Any]] = {}
    result: dict[str, Any] = {"events": []}
    for event in response["stream"]:
        result["events"].append(event)
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            index = event["contentBlockDelta"]["contentBlockIndex"]
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                block = blocks.setdefault(index, {"text": ""})
                block["text"] += delta["text"]
            elif "toolUse" in delta:
                blocks[index]["toolUse"]["input"] += delta["toolUse"]["input"]
            else:
                reasoning = delta["reasoningContent"]
                if "redactedContent" in reasoning:
                    blocks[index] = {
                        "reasoningContent": {"redactedContent": reasoning["redactedContent"]}
                    }
                else:
                    block = blocks.setdefault(
                        index, {"reasoningContent": {"reasoningText": {"text": ""}}}
                    )
                    text_block = block["reasoningContent"]["reasoningText"]
                    if "text" in reasoning:
                        text_block["text"] += reasoning["text"]
                    if "signature" in reasoning:
                        text_block["signature"] = reasoning["signature"]
        elif "messageStop" in event:
            result["stopReason"] = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            result["usage"] = event["metadata"]["usage"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    result["output"] = {
        "message": {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}
    }
    return result


def results_for(response: dict[str, Any]) -> dict[str, Any]:
    uses = [b["toolUse"] for b in response["output"]["message"]["content"] if "toolUse" in b]
    return {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": u["toolUseId"],
                    "content": [{"text": TOOL_OUTPUT[u["name"]]}],
                    "status": "success",
                }
            }
            for u in uses
        ],
    }


def assistant(response: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": response["output"]["message"]["content"]}


def validation_message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    error = exc.value.response["Error"]
    assert error["Code"] == "ValidationException"
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    return error["Message"]


USER = {"role": "user", "content": [{"text": QUESTION}]}


INTERLEAVED = {**BUDGET, "anthropic_beta": ["interleaved-thinking-2025-05-14"]}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
@pytest.mark.parametrize(
    ("thinking", "interleaved"),
    [(BUDGET, False), (INTERLEAVED, True), (ADAPTIVE, True)],
    ids=["budget", "budget-interleaved", "adaptive"],
)
def test_three_turn_thinking_tool_loop(
    emu: Emulator, bedrock_client: Any, stream: bool, thinking: dict[str, Any], interleaved: bool
) -> None:
    messages: list[Any] = [USER]
    first = converse(bedrock_client, messages, stream=stream, additionalModelRequestFields=thinking)
    content = first["output"]["message"]["content"]
    assert first["stopReason"] == "tool_use"
    assert [next(iter(b)) for b in content] == ["reasoningContent", "text", "toolUse"]
    reasoning = content[0]["reasoningContent"]["reasoningText"]
    assert QUESTION in reasoning["text"]
    assert len(reasoning["signature"]) >= 200
    assert content[2]["toolUse"]["name"] == "get_weather"
    assert content[2]["toolUse"]["input"] == {"city": "Paris"}
    assert content[2]["toolUse"]["toolUseId"].startswith("tooluse_")

    messages += [assistant(first), results_for(first)]
    second = converse(
        bedrock_client, messages, stream=stream, additionalModelRequestFields=thinking
    )
    second_content = second["output"]["message"]["content"]
    assert second_content[-1]["toolUse"]["input"] == {"city": "Paris", "format": "24h"}
    assert ("reasoningContent" in second_content[0]) == interleaved

    messages += [assistant(second), results_for(second)]
    third = converse(bedrock_client, messages, stream=stream, additionalModelRequestFields=thinking)
    assert third["stopReason"] == "end_turn"
    text = third["output"]["message"]["content"][-1]["text"]
    assert "sunny, 21 C" in text
    assert "14:05" in text
    assert (
        third["usage"]["totalTokens"]
        == third["usage"]["inputTokens"] + third["usage"]["outputTokens"]
    )

    sent = [r for r in emu.requests if r.api == "bedrock"]
    assert len(sent) == 3
    assert sent[0].path.endswith("/converse-stream" if stream else "/converse")
    assert (
        sent[2].body["messages"][1]["content"][0]["reasoningContent"]["reasoningText"]["signature"]
        == reasoning["signature"]
    )
    assert sent[0].auth == "AWS4-HMAC-SHA256"


def test_stream_follows_the_service_shapes(bedrock_client: Any) -> None:
    events = converse(bedrock_client, [USER], stream=True, additionalModelRequestFields=BUDGET)[
        "events"
    ]
    names = [next(iter(e)) for e in events]
    assert names[0] == "messageStart"
    assert names[-2:] == ["messageStop", "metadata"]
    starts = [e["contentBlockStart"] for e in events if "contentBlockStart" in e]
    assert len(starts) == 1
    assert "toolUse" in starts[0]["start"]
    reasoning = [
        e["contentBlockDelta"]["delta"]["reasoningContent"]
        for e in events
        if "reasoningContent" in e.get("contentBlockDelta", {}).get("delta", {})
    ]
    assert all("text" in r for r in reasoning[:-1])
    assert list(reasoning[-1]) == ["signature"]
    assert events[-1]["metadata"]["metrics"]["latencyMs"] > 0


def test_stream_and_json_agree(bedrock_client: Any) -> None:
    plain = converse(bedrock_client, [USER], additionalModelRequestFields=BUDGET)
    streamed = converse(bedrock_client, [USER], stream=True, additionalModelRequestFields=BUDGET)
    assert plain["output"] == streamed["output"]
    assert plain["usage"]["outputTokens"] == streamed["usage"]["outputTokens"]


@pytest.mark.parametrize("stream", [False, True], ids=["json", "eventstream"])
def test_redacted_content_is_bytes_and_replays(bedrock_client: Any, stream: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": [{"text": MAGIC_REDACTED_PROMPT}]}]
    first = converse(bedrock_client, messages, stream=stream, additionalModelRequestFields=BUDGET)
    redacted = first["output"]["message"]["content"][0]["reasoningContent"]["redactedContent"]
    assert isinstance(redacted, bytes)
    assert len(redacted) > 400
    second = converse(
        bedrock_client,
        [*messages, assistant(first), results_for(first)],
        additionalModelRequestFields=BUDGET,
    )
    assert second["stopReason"] == "end_turn"
    tampered = copy.deepcopy(assistant(first))
    tampered["content"][0]["reasoningContent"]["redactedContent"] = redacted[:-1] + bytes(
        [redacted[-1] ^ 1]
    )
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            [*messages, tampered, results_for(first)],
            additionalModelRequestFields=BUDGET,
        )
    assert validation_message(exc) == (
        "The model returned the following errors: messages.1.content.0: Invalid `data` in `redacted_thinking` block"
    )


def test_display_omitted(bedrock_client: Any) -> None:
    omitted = {"thinking": {"type": "enabled", "budget_tokens": 2048, "display": "omitted"}}
    first = converse(bedrock_client, [USER], additionalModelRequestFields=omitted)
    reasoning = first["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]
    assert reasoning["text"] == ""
    assert reasoning["signature"]
    again = converse(
        bedrock_client,
        [USER, assistant(first), results_for(first)],
        additionalModelRequestFields=omitted,
    )
    assert again["stopReason"] == "tool_use"


def flip(text: str) -> str:
    i = len(text) // 2
    return text[:i] + ("A" if text[i] != "A" else "B") + text[i + 1 :]


def test_altered_signature_is_rejected(bedrock_client: Any) -> None:
    first = converse(bedrock_client, [USER], additionalModelRequestFields=BUDGET)
    bad = copy.deepcopy(assistant(first))
    text_block = bad["content"][0]["reasoningContent"]["reasoningText"]
    text_block["signature"] = flip(text_block["signature"])
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client, [USER, bad, results_for(first)], additionalModelRequestFields=BUDGET
        )
    assert validation_message(exc) == (
        "The model returned the following errors: messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    with pytest.raises(ClientError) as exc:  # a stream refuses before it starts, as a 400
        converse(
            bedrock_client,
            [USER, bad, results_for(first)],
            stream=True,
            additionalModelRequestFields=BUDGET,
        )
    assert "Invalid `signature` in `thinking` block" in validation_message(exc)
    del text_block["signature"]
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client, [USER, bad, results_for(first)], additionalModelRequestFields=BUDGET
        )
    assert validation_message(exc) == (
        "The model returned the following errors: messages.1.content.0.thinking.signature: Field required"
    )


def test_dropped_thinking_is_rejected(bedrock_client: Any) -> None:
    first = converse(bedrock_client, [USER], additionalModelRequestFields=BUDGET)
    dropped = {"role": "assistant", "content": first["output"]["message"]["content"][1:]}
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client, [USER, dropped, results_for(first)], additionalModelRequestFields=BUDGET
        )
    assert validation_message(exc).startswith(
        "The model returned the following errors: messages.1.content.0.type: Expected `thinking` or "
        "`redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start "
        "with a thinking block"
    )


def test_thinking_while_disabled_and_forced_tool_choice(bedrock_client: Any) -> None:
    first = converse(bedrock_client, [USER], additionalModelRequestFields=BUDGET)
    prefill = copy.deepcopy(assistant(first))
    prefill["content"] = [b for b in prefill["content"] if "toolUse" not in b]
    with pytest.raises(ClientError) as exc:  # thinking in the final (prefill) position
        converse(bedrock_client, [USER, prefill])
    assert validation_message(exc) == (
        "The model returned the following errors: messages.1.content.0: When thinking is disabled, an "
        "`assistant` message in the final position cannot contain `thinking`. To use thinking blocks, "
        "enable `thinking` in your request."
    )
    # Earlier in the conversation it is accepted (the service strips it).
    later = converse(bedrock_client, [USER, assistant(first), results_for(first)])
    assert "reasoningContent" not in later["output"]["message"]["content"][0]
    forced = {**BEDROCK_TOOLS, "toolChoice": {"any": {}}}
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, [USER], toolConfig=forced, additionalModelRequestFields=BUDGET)
    assert validation_message(exc) == (
        "The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use."
    )
    assert (
        "toolUse"
        in converse(bedrock_client, [USER], toolConfig=forced)["output"]["message"]["content"][-1]
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
async def test_an_anthropic_signature_is_valid_on_bedrock(
    bedrock_client: Any, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    reply = await anthropic_client.messages.create(
        model="claude-sonnet-4-5",
        max_tokens=4096,
        thinking={"type": "enabled", "budget_tokens": 2048},
        tools=[
            {
                "name": "get_weather",
                "description": "Current weather for a city.",
                "input_schema": BEDROCK_TOOLS["tools"][0]["toolSpec"]["inputSchema"]["json"],
            }
        ],
        messages=[{"role": "user", "content": QUESTION}],
    )
    thinking, use = reply.content[0], reply.content[-1]
    forged = {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {"text": thinking.thinking, "signature": thinking.signature}
                }
            },
            {"toolUse": {"toolUseId": use.id, "name": use.name, "input": use.input}},
        ],
    }
    result = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": use.id, "content": [{"text": "sunny"}]}}],
    }
    # Claude's signatures are compatible across its platforms (TH).
    moved = converse(bedrock_client, [USER, forged, result], additionalModelRequestFields=BUDGET)
    assert moved["stopReason"] == "tool_use"
    reasoning = forged["content"][0]["reasoningContent"]["reasoningText"]
    reasoning["signature"] = reasoning["signature"][:-4] + "AAAA"
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, [USER, forged, result], additionalModelRequestFields=BUDGET)
    assert validation_message(exc) == (
        "The model returned the following errors: messages.1.content.0: Invalid `signature` in `thinking` block"
    )


def test_thinking_config_errors_come_from_the_model(bedrock_client: Any) -> None:
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            [USER],
            additionalModelRequestFields={"thinking": {"type": "enabled", "budget_tokens": 100}},
        )
    assert validation_message(exc) == (
        "The model returned the following errors: thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    )
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            [USER],
            modelId="global.anthropic.claude-opus-5",
            additionalModelRequestFields=BUDGET,
        )
    assert '"thinking.type.enabled" is not supported for this model' in validation_message(exc)
    reply = converse(
        bedrock_client,
        [USER],
        modelId="global.anthropic.claude-opus-5",
        outputConfig={"effort": "high"},
    )
    assert (
        reply["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["text"] == ""
    )


def test_model_ids_and_conversation_shape(bedrock_client: Any) -> None:
    assert (
        claude_name("us.anthropic.claude-sonnet-4-5-20250929-v1:0") == "claude-sonnet-4-5-20250929"
    )
    assert claude_name("anthropic.claude-3-7-sonnet-20250219-v1:0") == "claude-3-7-sonnet-20250219"
    assert claude_name("global.anthropic.claude-opus-4-6-v1") == "claude-opus-4-6"
    assert claude_name(
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.anthropic.claude-haiku-4-5-20251001-v1:0"
    ) == ("claude-haiku-4-5-20251001")
    assert claude_name("amazon.nova-pro-v1:0") is None
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, [USER], modelId="amazon.nova-pro-v1:0")
    assert validation_message(exc) == "The provided model identifier is invalid."
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, [{"role": "assistant", "content": [{"text": "Hi"}]}])
    assert validation_message(exc).startswith("A conversation must start with a user message.")


def test_system_prompt_and_json_tool_results(bedrock_client: Any) -> None:
    first = converse(
        bedrock_client,
        [USER],
        system=[{"text": "Answer in one line."}],
        additionalModelRequestFields=BUDGET,
    )
    reasoning = first["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"][
        "text"
    ]
    assert "Answer in one line." in reasoning
    use = first["output"]["message"]["content"][-1]["toolUse"]
    result = {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"json": {"temp_c": 21}}]}}
        ],
    }
    second = converse(
        bedrock_client, [USER, assistant(first), result], additionalModelRequestFields=ADAPTIVE
    )
    assert (
        "temp_c"
        in second["output"]["message"]["content"][0]["reasoningContent"]["reasoningText"]["text"]
    )


def test_requests_without_authorization_are_refused(emu: Emulator) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=5)
    connection.request(
        "POST",
        "/model/anthropic.claude-sonnet-4-5-v1:0/converse",
        body=b"{}",
        headers={"Content-Type": "application/json"},
    )
    response = connection.getresponse()
    assert response.status == 403
    assert response.getheader("x-amzn-ErrorType", "").startswith(
        "MissingAuthenticationTokenException"
    )
    assert json.loads(response.read()) == {"message": "Missing Authentication Token"}
    connection.close()


def test_tool_ids_of_the_wrong_type_get_a_validation_error(
    emu: Emulator, bedrock_client: Any
) -> None:
    """botocore validates types itself; a raw request with a non-string id gets a 400."""
    first = converse(bedrock_client, [USER], additionalModelRequestFields=BUDGET)
    answers = results_for(first)
    answers["content"][0]["toolResult"]["toolUseId"] = ["not", "a", "string"]
    body = {
        "messages": [USER, assistant(first), answers],
        "toolConfig": BEDROCK_TOOLS,
        "additionalModelRequestFields": BUDGET,
    }
    connection = http.client.HTTPConnection("127.0.0.1", emu.port, timeout=10)
    connection.request(
        "POST",
        "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse",
        body=json.dumps(body, default=lambda b: base64.b64encode(b).decode()),
        headers={"content-type": "application/json", "authorization": "AWS4-HMAC-SHA256 x"},
    )
    response = connection.getresponse()
    payload = json.loads(response.read())
    connection.close()
    assert response.status == 400
    assert response.getheader("x-amzn-ErrorType", "").startswith("ValidationException")
    assert payload == {
        "message": "The value at messages.2.content.0.toolResult.toolUseId is invalid."
    }
