"""`AnthropicModel` through the official `anthropic` SDK against the emulator, what only the
Messages API has (`test_emulator.py` has the rest, for both wires): its pass-through options,
the SDK's refusals and retries, credentials, cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import anthropic
import pytest

from tests.support.claude import (
    QUESTION,
    TOOLS,
    assistant_turns,
    run,
)
from thinkagent import (
    Agent,
    ConfigurationError,
    Message,
    ModelRequest,
    ProviderError,
    ThinkingDelta,
    dump_messages,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

CASES: dict[str, tuple[str, ClaudeThinking | None, str]] = {
    # name: (model, thinking, question)
    "adaptive": ("claude-sonnet-4-6", ClaudeThinking.adaptive(), QUESTION),
    "budget": ("claude-sonnet-4-6", ClaudeThinking.budget(2048), QUESTION),
    "default": ("claude-opus-4-7", None, QUESTION),  # adaptive by default, display omitted
}


def make_agent(client: anthropic.AsyncAnthropic, case: str, **kw: Any) -> Agent:
    name, thinking, _ = CASES[case]
    return Agent(AnthropicModel(name, client=client, thinking=thinking, **kw), tools=TOOLS)


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_an_sdk_refusal_it_does_not_know_is_raised_as_it_is(
    anthropic_client: anthropic.AsyncAnthropic, streamed: bool
) -> None:
    """Not chained to itself (`raise exc from exc`)."""
    model = AnthropicModel(
        "claude-sonnet-4-6", client=anthropic_client, settings={"extra_body": {"opaque": object()}}
    )
    request = ModelRequest([Message.user(QUESTION)])
    with pytest.raises(TypeError, match="not JSON serializable") as caught:
        if streamed:
            async for _ in model.stream(request):
                pass
        else:
            await model.request(request)
    assert caught.value.__cause__ is not caught.value
    assert caught.value.__context__ is not caught.value


async def test_effort_and_pass_through_reach_the_wire(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(
        anthropic_client,
        "budget",
        effort="low",
        extra_headers={"anthropic-beta": "interleaved-thinking-2025-05-14"},
        extra_body={"metadata": {"user_id": "user-1"}},
    )
    result = await agent.run(QUESTION)
    request = emu.requests[0]
    assert request.body["output_config"] == {"effort": "low"}
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert request.body["metadata"] == {"user_id": "user-1"}
    assert request.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    # with the interleaved-thinking beta, a budget thinks after each tool result too
    assert all(m.thinking for m in assistant_turns(result))


# --- faults ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fault",
    [
        Fault.rate_limited(api="anthropic"),
        # overloaded, with a short retry-after so the SDK's backoff does not slow the suite
        Fault.http(529, retry_after=0.01, api="anthropic"),
    ],
    ids=["429", "529"],
)
@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_the_sdk_retries_429_and_529(
    emu: Emulator, retrying_anthropic_client: anthropic.AsyncAnthropic, fault: Fault, streamed: bool
) -> None:
    emu.inject(fault, times=2)
    result = await run(
        make_agent(retrying_anthropic_client, "adaptive"), QUESTION, streamed=streamed
    )
    assert result.usage.requests == 3
    assert len(emu.requests) == 5  # two refused, then the three of the loop
    assert [r.headers.get("x-stainless-retry-count") for r in emu.requests[:3]] == ["0", "1", "2"]


async def test_a_long_non_streamed_request_is_refused_before_sending(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    # the SDK wants long requests streamed (its default timeout would cut them)
    agent = make_agent(anthropic_client, "adaptive", max_tokens=64000)
    with pytest.raises(ConfigurationError, match="Streaming is required"):
        await agent.run(QUESTION)
    assert emu.requests == []
    assert (await run(agent, QUESTION, streamed=True)).output


async def test_no_credential_in_messages_errors_or_reprs(emu: Emulator) -> None:
    secret = "sk-ant-api03-do-not-leak-0123456789"
    client = emu.anthropic_client(api_key=secret, max_retries=0)
    try:
        agent = make_agent(client, "adaptive")
        result = await agent.run(QUESTION)
        emu.inject(Fault.http(401, api="anthropic"))
        with pytest.raises(ProviderError) as caught:
            await agent.run("again", history=result.messages)
    finally:
        await client.close()
    error = caught.value
    assert error.status == 401 and not error.retryable
    seen = [dump_messages(result.messages), repr(agent.model), str(error), repr(error)]
    seen += [repr(m) for m in result.messages]
    assert not any(secret in text for text in seen)


async def test_cancelling_a_streamed_run_releases_the_stream(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.stream_error(500, after=4, delay=0.2, api="anthropic"))
    agent = make_agent(anthropic_client, "adaptive")
    first_delta = asyncio.Event()

    async def consume() -> None:
        async with agent.run_stream(QUESTION) as stream:
            async for event in stream:
                if isinstance(event, ThinkingDelta):
                    first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # asyncio's own, the evidence as its cause
        await task
    assert asyncio.all_tasks() == {asyncio.current_task()}
    # the client is still usable: the cancelled response was closed
    assert (await agent.run(QUESTION)).output
