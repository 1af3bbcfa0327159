"""`OpenAIResponsesModel` through the official SDK against the emulator: 3-turn tool loops with
encrypted reasoning (streamed and not, and equal), the reasoning items that go back and where,
never orphaned (trimmed or processed histories too), tampering, persistence, other scopes'
histories and faults."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from tests.support.openai import (
    QUESTION,
    TOOLS,
    bodies,
    contains,
    get_weather,
    thinking,
    without_ids,
)
from thinkagent import (
    Agent,
    Message,
    ProviderError,
    StreamInterrupted,
    TextPart,
    ThinkingBlock,
    dump_messages,
    load_messages,
    trim_history,
    validate_history,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.openai_responses import OpenAIResponsesModel

API = "openai-responses"


def local_scope(emu: Emulator) -> str:
    """The scope of a plain client pointed at the emulator: a server on this machine, whatever
    its port."""
    assert emu.url.startswith("http://127.0.0.1:")
    return "openai-responses@localhost"


def make_model(client: openai.AsyncOpenAI, **kw: Any) -> OpenAIResponsesModel:
    """`gpt-5` on `client`, or the `my-gpt-5` deployment on an Azure one."""
    if isinstance(client, openai.AsyncAzureOpenAI):
        return OpenAIResponsesModel("my-gpt-5", client=client, **kw)
    return OpenAIResponsesModel("gpt-5", client=client, **kw)


async def run_streamed(agent: Agent, prompt: str | None, history: list[Message] | None = None):
    async with agent.run_stream(prompt, history=history or []) as stream:
        async for _ in stream:
            pass
    return stream.result


def check_reasoning_items(items: list[dict[str, Any]], messages: list[Message]) -> int:
    """Every reasoning item sent is a block of ours, byte for byte, right before the item that
    followed it; returns how many were sent."""
    blocks = {b.id: b for b in thinking(messages)}
    following: dict[str, str | None] = {}
    for m in messages:
        for part, after in zip(m.parts, (*m.parts[1:], None), strict=True):
            if isinstance(part, ThinkingBlock) and part.id is not None:
                details = (after.provider_details or {}) if after is not None else {}
                following[part.id] = details.get("item_id")  # type: ignore[assignment]
    sent = 0
    for i, item in enumerate(items):
        if item.get("type") != "reasoning":
            continue
        sent += 1
        block = blocks[item["id"]]
        assert item == {
            "type": "reasoning",
            "id": block.id,
            "summary": (block.provider_details or {})["summary"],
            "encrypted_content": block.signature,
        }
        assert items[i + 1].get("id") == following[item["id"]]
    return sent


@pytest.mark.parametrize("azure", [False, True], ids=["openai", "azure"])
async def test_three_turn_tool_loop_streamed_and_not(
    emu: Emulator,
    openai_client: openai.AsyncOpenAI,
    azure_client: openai.AsyncAzureOpenAI,
    azure: bool,
) -> None:
    model = make_model(azure_client if azure else openai_client)
    agent = Agent(model, tools=TOOLS, instructions="Be brief.")
    result = await agent.run(QUESTION)
    streamed = await run_streamed(agent, QUESTION)
    assert without_ids(streamed.messages) == without_ids(result.messages)

    messages = result.messages
    assert [c.name for m in messages for c in m.tool_calls] == ["get_weather", "get_time"]
    assert "sunny in Paris" in result.output
    replies = [m for m in messages if m.role == "assistant"]
    scope = "azure-responses" if azure else local_scope(emu)
    assert all(m.scope == scope for m in replies)
    blocks = thinking(replies)
    assert len(blocks) == 3
    assert all(b.id and b.id.startswith("rs_") and b.text and b.signature for b in blocks)
    assert all(b.signature is not None and b.signature.startswith("gAAAAA") for b in blocks)
    assert result.usage.thinking_tokens > 0

    requests = [r for r in emu.requests if r.api == API]
    assert len(requests) == 6
    if azure:
        assert all(r.path == "/openai/responses" for r in requests)
    sent = [check_reasoning_items(r.body["input"], messages) for r in requests]
    assert sent == [0, 1, 2, 0, 1, 2]
    for r in requests:
        assert r.body["store"] is False and r.body["include"] == ["reasoning.encrypted_content"]
        assert r.body["reasoning"] == {"summary": "auto"} and r.body["instructions"] == "Be brief."


async def test_a_tampered_encrypted_content_is_refused(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    agent = Agent(make_model(openai_client), tools=TOOLS)
    result = await agent.run(QUESTION)
    data = json.loads(dump_messages(result.messages[:3]))
    block = data[1]["parts"][0]
    block["signature"] = (
        block["signature"][:40]
        + ("A" if block["signature"][40] != "A" else "B")
        + block["signature"][41:]
    )
    with pytest.raises(ProviderError) as info:
        await agent.run(None, history=load_messages(json.dumps(data)))
    error = info.value
    assert error.status == 400 and not error.retryable
    assert "could not be verified" in error.message and error.scope == local_scope(emu)
    assert isinstance(error.__cause__, openai.BadRequestError)


@pytest.mark.parametrize("streamed", [False, True])
async def test_persisted_mid_loop_and_resumed(
    emu: Emulator, openai_client: openai.AsyncOpenAI, streamed: bool
) -> None:
    agent = Agent(make_model(openai_client), tools=TOOLS)
    result = await agent.run(QUESTION)
    saved = dump_messages(result.messages[:3])
    history = load_messages(saved)
    assert history == result.messages[:3]
    emu.clear()
    resumed = (
        await run_streamed(agent, None, history)
        if streamed
        else await agent.run(None, history=history)
    )
    assert without_ids(resumed.messages) == without_ids(result.messages)
    assert check_reasoning_items(bodies(emu, API)[0]["input"], result.messages) == 1


async def test_trimmed_histories_never_orphan_reasoning(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    agent = Agent(
        make_model(openai_client), tools=[get_weather], history_processors=[trim_history(3)]
    )
    history: list[Message] = []
    for city in ("Paris", "Lyon", "Rome", "Oslo"):
        history = (await agent.run(f"What's the weather in {city}?", history=history)).messages
    for body in bodies(emu, API):
        items = body["input"]
        assert items[-1].get("type") != "reasoning"
        for i, item in enumerate(items):
            if item.get("type") == "reasoning":
                assert items[i + 1].get("type") in ("function_call", "message")


async def test_an_item_removed_by_a_processor_takes_its_reasoning_with_it(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    def drop_old_answers(messages: list[Message]) -> list[Message]:
        """Keep earlier turns' calls but drop their answer text (a lossy processor)."""
        last_prompt = max(
            i for i, m in enumerate(messages) if m.role == "user" and not m.tool_results
        )
        return [
            m.model_copy(update={"parts": tuple(p for p in m.parts if not isinstance(p, TextPart))})
            if m.role == "assistant" and i < last_prompt
            else m
            for i, m in enumerate(messages)
        ]

    agent = Agent(
        make_model(openai_client), tools=[get_weather], history_processors=[drop_old_answers]
    )
    first = await agent.run("What's the weather in Paris?")
    emu.clear()
    second = await agent.run("What's the weather in Lyon?", history=first.messages)
    assert second.output
    items = bodies(emu, API)[0]["input"]
    answer_block = first.messages[-1].thinking[0]
    assert not any(i.get("id") == answer_block.id for i in items)  # its message was removed
    assert check_reasoning_items(items, first.messages) == 1  # the call's reasoning stays


async def test_other_scopes_send_no_proofs(
    emu: Emulator, azure_client: openai.AsyncAzureOpenAI, openai_client: openai.AsyncOpenAI
) -> None:
    deepseek = [
        Message.user("Say hello."),
        Message(
            role="assistant",
            parts=(ThinkingBlock.plain("greet them"), TextPart(text="Hello!")),
            scope="deepseek",
        ),
        Message.user("Thanks."),
        Message(
            role="assistant",
            parts=(
                ThinkingBlock.signed("be polite", "EsigANTHROPIC" * 20),
                TextPart(text="Welcome."),
            ),
            scope="anthropic",
        ),
    ]
    responses = make_model(openai_client)
    result = await Agent(responses, tools=TOOLS).run(QUESTION, history=deepseek)
    assert result.output
    for body in bodies(emu, API):
        assert not contains(body, "EsigANTHROPIC") and not contains(body, "greet them")
        assert body["input"][:4] == [
            {"role": "user", "content": "Say hello."},
            {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Thanks."},
            {"role": "assistant", "content": "Welcome."},
        ]
    # and the other way: Responses messages continued on the Azure scope
    emu.clear()
    azure = make_model(azure_client)
    await Agent(azure, tools=TOOLS).run("And in Lyon?", history=result.messages)
    for body in bodies(emu, API):
        assert not any(item.get("type") == "reasoning" for item in body["input"][:8])
        assert not contains(body["input"][:8], "gAAAAA")


# --- faults ----------------------------------------------------------------------------------


async def test_rate_limit_is_retried_by_the_sdk(
    emu: Emulator, retrying_openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIResponsesModel("gpt-5", client=retrying_openai_client)
    emu.inject(Fault.rate_limited(api=API))
    result = await Agent(model, tools=TOOLS).run(QUESTION)
    assert result.usage.requests == 3 and len(bodies(emu, API)) == 4


async def test_server_error_is_a_retryable_provider_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.http(503, api=API))
    with pytest.raises(ProviderError) as info:
        await Agent(make_model(openai_client), tools=TOOLS).run(QUESTION)
    assert info.value.status == 503 and info.value.retryable
    assert isinstance(info.value.__cause__, openai.InternalServerError)


async def test_a_cut_stream_leaves_no_signed_partial(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.cut(api=API))
    with pytest.raises(StreamInterrupted) as info:
        await run_streamed(Agent(make_model(openai_client), tools=TOOLS), QUESTION)
    partial = info.value.partial
    assert partial is not None and partial.thinking
    assert all(b.signature is None for b in partial.thinking)
    validate_history(info.value.messages)


async def test_an_error_event_is_a_provider_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.stream_error(500, after=4, api=API))
    with pytest.raises(ProviderError) as info:
        await run_streamed(Agent(make_model(openai_client), tools=TOOLS), QUESTION)
    assert not isinstance(info.value, StreamInterrupted)
    assert info.value.retryable and info.value.error_type == "server_error"


async def test_a_malformed_event_interrupts_the_stream(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.malformed(after=3, api=API))
    with pytest.raises(StreamInterrupted):
        await run_streamed(Agent(make_model(openai_client), tools=TOOLS), QUESTION)
