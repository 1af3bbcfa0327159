"""The emulator's Responses API as of December, through the unmodified official SDK:
`reasoning.context` and `mode`, compaction items (server-side and `/responses/compact`), `phase`,
LM Studio's stream without argument deltas, and Bedrock Mantle's own scope."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from thinkagent.emulator import Emulator

from .tools import QUESTION, RESPONSES_TOOLS

USER = {"role": "user", "content": QUESTION}
KW: dict[str, Any] = {
    "tools": RESPONSES_TOOLS,
    "reasoning": {"effort": "low", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": False,
}


def items_of(response: Any) -> list[dict[str, Any]]:
    """The output items as a client sends them back (every field as it came)."""
    return [i.to_dict(mode="json", warnings=False) for i in response.output]


async def test_reasoning_context_is_echoed_as_the_mode_in_effect(
    openai_client: openai.AsyncOpenAI,
) -> None:
    new = await openai_client.responses.create(model="gpt-5.6", input=[USER], **KW)
    assert new.reasoning is not None and new.reasoning.context == "all_turns"
    asked = {"effort": "low", "context": "current_turn", "mode": "pro"}
    chosen = await openai_client.responses.create(
        model="gpt-5.6", input=[USER], **{**KW, "reasoning": asked}
    )
    assert chosen.reasoning is not None
    assert (chosen.reasoning.context, chosen.reasoning.mode) == ("current_turn", "pro")
    old = await openai_client.responses.create(model="gpt-5.2", input=[USER], **KW)
    assert old.reasoning is not None and old.reasoning.context == "current_turn"
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.responses.create(
            model="gpt-5.6", input=[USER], **{**KW, "reasoning": {"context": "everything"}}
        )
    assert exc.value.body["message"].startswith("Invalid value: 'everything'")


async def test_gpt_5_6_messages_carry_their_phase(openai_client: openai.AsyncOpenAI) -> None:
    first = await openai_client.responses.create(model="gpt-5.6", input=[USER], **KW)
    kinds = [(i.type, getattr(i, "phase", None)) for i in first.output]
    assert kinds[:2] == [("reasoning", None), ("message", "commentary")]
    assert kinds[2][0] == "function_call"
    older = await openai_client.responses.create(model="gpt-5", input=[USER], **KW)
    assert [i.type for i in older.output] == ["reasoning", "function_call"]


async def test_a_compaction_item_comes_first_past_the_threshold_and_must_verify(
    openai_client: openai.AsyncOpenAI,
) -> None:
    small = await openai_client.responses.create(
        model="gpt-5.6",
        input=[USER],
        context_management=[{"type": "compaction", "compact_threshold": 100_000}],
        **KW,
    )
    assert all(i.type != "compaction" for i in small.output)
    compacted = await openai_client.responses.create(
        model="gpt-5.6",
        input=[USER],
        context_management=[{"type": "compaction", "compact_threshold": 10}],
        **KW,
    )
    output = items_of(compacted)
    assert output[0]["type"] == "compaction" and output[0]["id"].startswith("cmp_")
    assert output[0]["encrypted_content"].startswith("gAAAAA")
    call = next(i for i in output if i["type"] == "function_call")
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}
    # what came before the compaction item may be left out: the item stands for it
    follow = await openai_client.responses.create(model="gpt-5.6", input=[*output, answer], **KW)
    assert follow.output_text
    altered = {**output[0], "encrypted_content": output[0]["encrypted_content"][:-6] + "AAAAAA"}
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.responses.create(
            model="gpt-5.6", input=[altered, *output[1:], answer], **KW
        )
    assert exc.value.code == "invalid_encrypted_content"
    assert exc.value.body["message"] == (
        f"The encrypted content for item {output[0]['id']} could not be verified. "
        "Reason: Encrypted content could not be decrypted or parsed."
    )
    with pytest.raises(openai.BadRequestError) as exc:
        await openai_client.responses.create(
            model="gpt-5.6",
            input=[USER],
            context_management=[{"type": "truncation"}],
            **KW,
        )
    assert exc.value.body["message"].startswith("Invalid value: 'truncation'")


async def test_compact_returns_the_user_messages_and_one_compaction_item(
    openai_client: openai.AsyncOpenAI,
) -> None:
    compacted = await openai_client.responses.compact(
        model="gpt-5.6", input=[USER, {"role": "assistant", "content": "Let me see."}]
    )
    assert compacted.object == "response.compaction"
    kinds = [(i.type, getattr(i, "role", None)) for i in compacted.output]
    assert kinds == [("message", "user"), ("compaction", None)]
    window = items_of(compacted)
    more = {"role": "user", "content": "And in Rome?"}
    answer = await openai_client.responses.create(model="gpt-5.6", input=[*window, more], **KW)
    assert any(i.type == "function_call" for i in answer.output)


async def test_lm_studio_sends_call_arguments_only_when_done(emu: Emulator) -> None:
    client = emu.openai_client(base_url=emu.url + "/lmstudio/v1", max_retries=0)
    events = await client.responses.create(
        model="qwen/qwen3-8b", input=[USER], tools=RESPONSES_TOOLS, stream=True
    )
    kinds = [e.type async for e in events]
    assert "response.function_call_arguments.delta" not in kinds
    assert "response.function_call_arguments.done" in kinds
    whole = await client.responses.create(
        model="qwen/qwen3-8b", input=[USER], tools=RESPONSES_TOOLS
    )
    reasoning = items_of(whole)[0]
    assert reasoning["type"] == "reasoning" and "encrypted_content" not in reasoning
    assert reasoning["content"][0]["type"] == "reasoning_text"
    assert [i.type for i in whole.output][1:] == ["message", "function_call"]


async def test_bedrock_mantle_seals_for_its_own_scope(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    mantle = emu.mantle_client(max_retries=0)
    first = await mantle.responses.create(model="openai.gpt-oss-120b", input=[USER], **KW)
    output = items_of(first)
    call = next(i for i in output if i["type"] == "function_call")
    answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "sunny"}
    replay = [USER, *output, answer]
    assert (await mantle.responses.create(model="openai.gpt-oss-120b", input=replay, **KW)).id
    with pytest.raises(openai.BadRequestError) as exc:  # OpenAI cannot read Bedrock's items
        await openai_client.responses.create(model="gpt-5", input=replay, **KW)
    assert exc.value.code == "invalid_encrypted_content"
