"""Scripted replies: exact turns, rendered natively and signed, then the brain resumes."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from thinkagent.emulator import Emulator, Reply, ReplyUsage, ToolCallSpec

from .tools import ANTHROPIC_TOOLS, BEDROCK_TOOLS, QUESTION

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

REQUEST: dict[str, Any] = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 4096,
    "thinking": {"type": "adaptive"},
    "tools": ANTHROPIC_TOOLS,
}
USER = {"role": "user", "content": QUESTION}


async def test_scripted_turns_then_the_brain(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.script(
        "anthropic",
        [
            Reply(
                thinking="Rome, not Paris.",
                text="Checking Rome.",
                tool_calls=[ToolCallSpec("get_weather", {"city": "Rome"})],
            ),
            Reply(text="Rome is warm.", usage=ReplyUsage(input_tokens=7, output_tokens=3)),
        ],
    )
    first = await anthropic_client.messages.create(messages=[USER], **REQUEST)
    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    assert first.content[0].thinking == "Rome, not Paris."
    assert first.content[0].signature
    assert first.content[2].input == {"city": "Rome"}
    assert first.content[2].id.startswith("toolu_01")
    assert first.stop_reason == "tool_use"
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": first.content[2].id, "content": "hot"}],
    }
    second = await anthropic_client.messages.create(
        messages=[USER, first.to_param(), result], **REQUEST
    )
    assert [b.type for b in second.content] == ["text"]
    assert second.content[0].text == "Rome is warm."
    assert (second.usage.input_tokens, second.usage.output_tokens) == (7, 3)
    third = await anthropic_client.messages.create(messages=[USER], **REQUEST)
    assert third.content[-1].input == {
        "city": "Paris"
    }  # the script is exhausted: the brain answers


async def test_scripted_reply_is_signed_like_any_other(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.script(
        "anthropic",
        [
            Reply(
                thinking="scripted",
                tool_calls=[
                    ToolCallSpec("get_time", {"city": "Oslo", "format": "12h"}, id="toolu_01custom")
                ],
            )
        ],
    )
    first = await anthropic_client.messages.create(messages=[USER], **REQUEST)
    assert first.content[-1].id == "toolu_01custom"
    forged = [b.model_dump(exclude_none=True) for b in first.content]
    forged[0]["thinking"] = "edited"
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01custom", "content": "9pm"}],
    }
    with pytest.raises(anthropic.BadRequestError):
        await anthropic_client.messages.create(
            messages=[USER, {"role": "assistant", "content": forged}, result], **REQUEST
        )
    ok = await anthropic_client.messages.create(
        messages=[USER, first.to_param(), result], **REQUEST
    )
    assert ok.stop_reason in ("tool_use", "end_turn")


async def test_scripts_are_per_api_and_skip_failed_requests(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, bedrock_client: Any
) -> None:
    emu.script("bedrock", [Reply(text="from the bedrock script", stop_reason="max_tokens")])
    emu.script("anthropic", [Reply(thinking="redacted on purpose", redacted=True, text="scripted")])
    with pytest.raises(anthropic.BadRequestError):
        await anthropic_client.messages.create(
            messages=[USER],
            **{**REQUEST, "max_tokens": 10, "thinking": {"type": "enabled", "budget_tokens": 2048}},
        )
    reply = await anthropic_client.messages.create(messages=[USER], **REQUEST)
    assert [b.type for b in reply.content] == ["redacted_thinking", "text"]
    response = bedrock_client.converse(
        modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
        messages=[{"role": "user", "content": [{"text": QUESTION}]}],
        toolConfig=BEDROCK_TOOLS,
    )
    assert response["stopReason"] == "max_tokens"
    assert response["output"]["message"]["content"] == [{"text": "from the bedrock script"}]


async def test_a_script_for_any_api(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic, bedrock_client: Any
) -> None:
    emu.script(None, [Reply(text="shared one"), Reply(text="shared two")])
    first = await anthropic_client.messages.create(messages=[USER], **REQUEST)
    response = bedrock_client.converse(
        modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
        messages=[{"role": "user", "content": [{"text": "hi"}]}],
    )
    assert first.content[0].text == "shared one"
    assert response["output"]["message"]["content"][0]["text"] == "shared two"
