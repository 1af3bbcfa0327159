"""The emulator's Bedrock Converse beyond Claude, through the unmodified boto3 client: each model
family's reasoning shape and what it refuses; and Claude on Bedrock today (compatible
signatures, `input_transformations`, images and documents, JSON outputs)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from thinkagent.emulator import Emulator

from .tools import BEDROCK_TOOLS, QUESTION

USER = {"role": "user", "content": [{"text": QUESTION}]}


def converse(client: Any, model: str, messages: list[Any], **kw: Any) -> Any:
    return client.converse(modelId=model, messages=messages, **kw)


def message(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Message"])


def sunny(use: dict[str, Any]) -> dict[str, Any]:
    """The user turn answering `use` with a sunny forecast."""
    answered = {"toolUseId": use["toolUseId"], "content": [{"text": "sunny"}]}
    return {"role": "user", "content": [{"toolResult": answered}]}


def answer(response: Any) -> list[Any]:
    return response["output"]["message"]["content"]


def test_deepseek_reasons_in_text_and_refuses_it_back(bedrock_client: Any) -> None:
    first = converse(bedrock_client, "us.deepseek.r1-v1:0", [USER])
    content = answer(first)
    assert content[0]["reasoningContent"]["reasoningText"].keys() == {"text"}
    replay = [
        USER,
        {"role": "assistant", "content": content},
        {"role": "user", "content": [{"text": "More?"}]},
    ]
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "us.deepseek.r1-v1:0", replay)
    assert message(exc) == (
        "User messages cannot contain reasoning content. Please remove the reasoning content and try again."
    )
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "us.deepseek.r1-v1:0", [USER], toolConfig=BEDROCK_TOOLS)
    assert message(exc) == "This model doesn't support tool use."
    with pytest.raises(ClientError) as exc:
        bedrock_client.converse_stream(
            modelId="us.deepseek.r1-v1:0", messages=[USER], toolConfig=BEDROCK_TOOLS
        )
    assert message(exc) == "This model doesn't support tool use in streaming mode."


def test_gpt_oss_refuses_a_signature(bedrock_client: Any) -> None:
    first = answer(
        converse(bedrock_client, "openai.gpt-oss-120b-1:0", [USER], toolConfig=BEDROCK_TOOLS)
    )
    assert "signature" not in first[0]["reasoningContent"]["reasoningText"]
    use = first[-1]["toolUse"]
    result = sunny(use)
    ok = converse(
        bedrock_client,
        "openai.gpt-oss-120b-1:0",
        [USER, {"role": "assistant", "content": first}, result],
        toolConfig=BEDROCK_TOOLS,
    )
    assert ok["stopReason"] in ("tool_use", "end_turn")
    first[0]["reasoningContent"]["reasoningText"]["signature"] = "EqQB"
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            "openai.gpt-oss-120b-1:0",
            [USER, {"role": "assistant", "content": first}, result],
            toolConfig=BEDROCK_TOOLS,
        )
    assert "reasoningContent.reasoningText.signature" in message(exc)


def test_openai_models_reason_opaquely(bedrock_client: Any) -> None:
    first = answer(
        converse(bedrock_client, "openai.gpt-5-6-v1:0", [USER], toolConfig=BEDROCK_TOOLS)
    )
    data = first[0]["reasoningContent"]["redactedContent"]
    assert isinstance(data, bytes) and len(data) > 100
    use = first[-1]["toolUse"]
    result = sunny(use)
    replay = [USER, {"role": "assistant", "content": first}, result]
    assert converse(bedrock_client, "openai.gpt-5-6-v1:0", replay, toolConfig=BEDROCK_TOOLS)
    as_text = [
        USER,
        {
            "role": "assistant",
            "content": [{"reasoningContent": {"reasoningText": {"text": "hmm"}}}, first[-1]],
        },
        result,
    ]
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "openai.gpt-5-6-v1:0", as_text, toolConfig=BEDROCK_TOOLS)
    assert "reasoningContent.reasoningText.text field for assistant messages" in message(exc)
    foreign = [
        USER,
        {
            "role": "assistant",
            "content": [{"reasoningContent": {"redactedContent": b"\x12garbage"}}, first[-1]],
        },
        result,
    ]
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "xai.grok-4-7", foreign, toolConfig=BEDROCK_TOOLS)
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 500


def test_kimi_k2_thinks_inline(bedrock_client: Any) -> None:
    (block,) = answer(converse(bedrock_client, "moonshot.kimi-k2-thinking", [USER]))
    assert block["text"].startswith("<think>\n") and "</think>\n\n" in block["text"]


def test_kimi_k3s_reasoning_is_bound_to_its_region(emu: Emulator) -> None:
    east = emu.bedrock_client(region_name="us-east-1")
    west = emu.bedrock_client(region_name="us-west-2")
    first = answer(converse(east, "global.moonshotai.kimi-k3", [USER], toolConfig=BEDROCK_TOOLS))
    use = first[-1]["toolUse"]
    result = sunny(use)
    replay = [USER, {"role": "assistant", "content": first}, result]
    assert converse(east, "global.moonshotai.kimi-k3", replay, toolConfig=BEDROCK_TOOLS)
    with pytest.raises(ClientError) as exc:
        converse(west, "global.moonshotai.kimi-k3", replay, toolConfig=BEDROCK_TOOLS)
    assert "Encrypted content cannot be used in a different region" in message(exc)


def test_claude_returns_its_input_transformations_when_asked(bedrock_client: Any) -> None:
    model = "anthropic.claude-opus-5-5-v1:0"
    first = answer(
        converse(
            bedrock_client, model, [USER], toolConfig=BEDROCK_TOOLS, system=[{"text": "Be brief."}]
        )
    )
    use = first[-1]["toolUse"]
    result = sunny(use)
    binding = {
        "thinking": {
            "type": "adaptive",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"},
        },
        "anthropic_beta": ["thinking-binding-controls-2026-08-01"],
    }
    reply = converse(
        bedrock_client,
        model,
        [USER, {"role": "assistant", "content": first}, result],
        toolConfig=BEDROCK_TOOLS,
        system=[{"text": "Be brief. Use metric units."}],
        additionalModelRequestFields=binding,
        additionalModelResponseFieldPaths=["/input_transformations"],
    )
    assert reply["additionalModelResponseFields"]["input_transformations"] == [
        {
            "type": "thinking_dropped",
            "path": "messages.1.content.0",
            "reason": "prefix_binding_mismatch",
        }
    ]


PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 300


def test_claude_reads_images_and_documents(bedrock_client: Any) -> None:
    content = [
        {"text": "What are these?"},
        {"image": {"format": "png", "source": {"bytes": PNG}}},
        {"document": {"format": "txt", "name": "notes (v2)", "source": {"bytes": b"Hello"}}},
    ]
    reply = answer(
        converse(
            bedrock_client, "anthropic.claude-sonnet-4-6", [{"role": "user", "content": content}]
        )
    )
    assert "308 bytes" in reply[-1]["text"] and "5 bytes" in reply[-1]["text"]
    bad_name = [{"document": {"format": "txt", "name": "notes.txt", "source": {"bytes": b"Hello"}}}]
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client, "anthropic.claude-sonnet-4-6", [{"role": "user", "content": bad_name}]
        )
    assert "document name may contain only" in message(exc)
    big = [{"image": {"format": "png", "source": {"bytes": b"\x00" * 3_750_001}}}]
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "anthropic.claude-sonnet-4-6", [{"role": "user", "content": big}])
    assert "3.75 MB" in message(exc)


def test_claude_answers_json_for_a_text_format(bedrock_client: Any) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    text_format = {
        "type": "json_schema",
        "structure": {"jsonSchema": {"schema": json.dumps(schema), "name": "weather"}},
    }
    reply = answer(
        converse(
            bedrock_client,
            "anthropic.claude-sonnet-4-6",
            [{"role": "user", "content": [{"text": "What's the weather in Paris?"}]}],
            outputConfig={"textFormat": text_format},
        )
    )
    assert json.loads(reply[-1]["text"]) == {"city": "Paris"}


def test_nova_2_reasons_only_when_asked_and_shows_redacted_text(bedrock_client: Any) -> None:
    model = "us.amazon.nova-2-lite-v1:0"
    plain = answer(converse(bedrock_client, model, [USER]))
    assert not any("reasoningContent" in block for block in plain)
    asked = answer(
        converse(
            bedrock_client,
            model,
            [USER],
            additionalModelRequestFields={
                "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "high"}
            },
        )
    )
    assert asked[0] == {"reasoningContent": {"reasoningText": {"text": "[REDACTED]"}}}
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            model,
            [USER],
            additionalModelRequestFields={
                "reasoningConfig": {"type": "enabled", "maxReasoningEffort": "max"}
            },
        )
    assert "reasoningConfig.maxReasoningEffort" in message(exc)


def test_the_families_take_their_own_reasoning_fields(bedrock_client: Any) -> None:
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            "qwen.qwen3-32b-v1:0",
            [USER],
            additionalModelRequestFields={"reasoning_config": "medium"},
        )
    assert "reasoning_config" in message(exc)
    with pytest.raises(ClientError) as exc:
        converse(
            bedrock_client,
            "openai.gpt-5-6-v1:0",
            [USER],
            additionalModelRequestFields={"reasoning": {"effort": "none"}},
        )
    assert "'none'" in message(exc)
    nested = converse(
        bedrock_client,
        "openai.gpt-5-6-v1:0",
        [USER],
        additionalModelRequestFields={"reasoning": {"effort": "high"}},
    )
    assert "redactedContent" in answer(nested)[0]["reasoningContent"]
    with pytest.raises(ClientError) as exc:
        converse(bedrock_client, "amazon.titan-text-express-v1", [USER])
    assert message(exc) == "The provided model identifier is invalid."
