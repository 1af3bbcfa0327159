"""`AnthropicModel` through the official `anthropic` SDK against the emulator: thinking + tool
loops, replay, persistence, tampering, other scopes, faults. The emulator verifies every
signature it is sent, so a loop that completes is the proof that the thinking went back right."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import pytest

from tests.support.claude import (
    QUESTION,
    REDACTED_QUESTION,
    TOOLS,
    anthropic_content,
    assistant_turns,
    check_stream_order,
    run,
    stream_events,
    without_ids,
)
from thinkagent import (
    Agent,
    ConfigurationError,
    HistoryError,
    Message,
    ModelRequest,
    ModelResponse,
    ProviderError,
    StreamInterrupted,
    TextDelta,
    TextPart,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallDelta,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking
from thinkagent.providers.bedrock import BedrockModel

CASES: dict[str, tuple[str, ClaudeThinking | None, str]] = {
    # name: (model, thinking, question)
    "adaptive": ("claude-sonnet-4-6", ClaudeThinking.adaptive(), QUESTION),
    "budget": ("claude-sonnet-4-6", ClaudeThinking.budget(2048), QUESTION),
    "redacted": ("claude-sonnet-4-6", ClaudeThinking.budget(2048), REDACTED_QUESTION),
    "omitted": ("claude-sonnet-4-6", ClaudeThinking.adaptive(display="omitted"), QUESTION),
    "default": ("claude-opus-4-7", None, QUESTION),  # adaptive by default, display omitted
}


def make_agent(client: anthropic.AsyncAnthropic, case: str, **kw: Any) -> Agent:
    name, thinking, _ = CASES[case]
    return Agent(AnthropicModel(name, client=client, thinking=thinking, **kw), tools=TOOLS)


def check_replayed(emu: Emulator, messages: list[Message]) -> None:
    """Each request carried every earlier assistant turn block for block, byte for byte."""
    requests = [r for r in emu.requests if r.path == "/v1/messages"]
    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    assert len(requests) == len(turns)
    for request, upto in zip(requests[1:], turns[1:], strict=True):
        sent = request.body["messages"]
        for i in turns:
            if i < upto:
                assert sent[i]["role"] == "assistant"
                assert sent[i]["content"] == anthropic_content(messages[i])


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
@pytest.mark.parametrize("case", list(CASES))
async def test_thinking_tool_loop(
    emu: Emulator, client: anthropic.AsyncAnthropic, case: str, streamed: bool
) -> None:
    result = await run(make_agent(client, case), CASES[case][2], streamed=streamed)
    turns = assistant_turns(result)
    assert [len(m.tool_calls) for m in turns] == [1, 1, 0]
    assert [c.name for m in turns for c in m.tool_calls] == ["get_weather", "get_time"]
    assert "sunny in Paris" in result.output and "14:05" in result.output
    first = turns[0].thinking
    assert first, "the first turn thinks"
    if case == "redacted":
        assert first[0].is_redacted and first[0].text == ""
    elif case in ("omitted", "default"):
        assert first[0].is_signed and first[0].text == ""
    else:
        assert first[0].is_signed and first[0].text
    if case in ("adaptive", "omitted", "default"):  # adaptive thinking is interleaved
        assert all(m.thinking for m in turns)
    for m in turns:
        assert (m.scope, m.model) == ("anthropic", CASES[case][0])
        assert m.id and m.id.startswith("msg_")
        assert m.usage is not None and m.usage.input_tokens > 0 and m.usage.output_tokens > 0
        if m.thinking and not m.thinking[0].is_redacted:
            assert 0 < m.usage.thinking_tokens <= m.usage.output_tokens
    assert [m.finish_reason for m in turns] == ["tool_call", "tool_call", "stop"]
    assert turns[0].provider_details == {"finish_reason": "tool_use"}
    assert result.usage.requests == 3
    check_replayed(emu, result.messages)


@pytest.mark.parametrize("case", list(CASES))
async def test_streamed_equals_non_streamed(client: anthropic.AsyncAnthropic, case: str) -> None:
    agent = make_agent(client, case)
    plain = await run(agent, CASES[case][2], streamed=False)
    streamed = await run(agent, CASES[case][2], streamed=True)
    assert without_ids(streamed.messages) == without_ids(plain.messages)
    assert streamed.messages == plain.messages  # the emulator's ids are deterministic too
    assert streamed.usage == plain.usage


async def test_stream_deltas(client: anthropic.AsyncAnthropic) -> None:
    events, result = await stream_events(make_agent(client, "adaptive"), QUESTION)
    check_stream_order(events)
    responses = [e for e in events if isinstance(e, ModelResponse)]
    assert [r.message for r in responses] == assistant_turns(result)
    first = events[: events.index(responses[0])]
    kinds = [type(e) for e in first]
    assert kinds.index(ThinkingDelta) < kinds.index(TextDelta) < kinds.index(ToolCallDelta)
    signatures = [e.signature for e in first if isinstance(e, ThinkingDelta) and e.signature]
    assert signatures == [responses[0].message.thinking[0].signature]
    text = "".join(e.text for e in first if isinstance(e, ThinkingDelta))
    assert text == responses[0].message.thinking[0].text
    redacted_events, _ = await stream_events(make_agent(client, "redacted"), REDACTED_QUESTION)
    whole = [e for e in redacted_events if isinstance(e, ThinkingDelta) and e.redacted]
    assert whole and all(not e.text and e.signature is None for e in whole)


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_persist_mid_loop_and_resume(
    emu: Emulator, client: anthropic.AsyncAnthropic, streamed: bool
) -> None:
    agent = make_agent(client, "adaptive")
    full = await run(agent, QUESTION, streamed=streamed)
    head = full.messages[:3]  # the question, the first tool call, its result
    saved = dump_messages(head)
    emu.clear()
    resumed = await run(agent, None, history=load_messages(saved), streamed=streamed)
    assert resumed.messages[:3] == head
    assert resumed.output == full.output
    assert resumed.new_messages == full.messages[3:]
    sent = emu.requests[0].body["messages"]
    assert sent[1]["content"] == anthropic_content(head[1])


async def test_a_changed_signature_is_refused_with_the_providers_message(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(client, "adaptive")
    full = await agent.run(QUESTION)
    data = json.loads(dump_messages(full.messages[:3]))
    block = data[1]["parts"][0]
    signature = block["signature"]
    i = len(signature) // 2
    block["signature"] = signature[:i] + ("A" if signature[i] != "A" else "B") + signature[i + 1 :]
    emu.clear()
    with pytest.raises(ProviderError) as caught:
        await agent.run(None, history=load_messages(json.dumps(data)))
    error = caught.value
    assert error.status == 400 and error.retryable is False
    assert error.error_type == "invalid_request_error"
    assert error.message == "messages.1.content.0: Invalid `signature` in `thinking` block"
    assert isinstance(error.__cause__, anthropic.BadRequestError)
    assert len(emu.requests) == 1
    # the untouched history is accepted
    assert (await agent.run(None, history=full.messages[:3])).output == full.output


async def test_a_changed_redacted_payload_is_refused(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(client, "redacted")
    full = await agent.run(REDACTED_QUESTION)
    data = json.loads(dump_messages(full.messages[:3]))
    block = data[1]["parts"][0]
    block["redacted"] = block["redacted"][:-8] + "AAAAAAAA"
    with pytest.raises(ProviderError, match="Invalid `data` in `redacted_thinking` block"):
        await agent.run(None, history=load_messages(json.dumps(data)))


@pytest.mark.parametrize("foreign_reasoning", ["drop", "text"])
async def test_a_bedrock_history_continues_on_anthropic(
    emu: Emulator, client: anthropic.AsyncAnthropic, foreign_reasoning: str
) -> None:
    bedrock = Agent(
        BedrockModel(
            "anthropic.claude-sonnet-4-6-v1:0",
            client=emu.bedrock_client(),
            thinking=ClaudeThinking.adaptive(),
        ),
        tools=TOOLS,
    )
    earlier = await bedrock.run(QUESTION)
    proofs = [b.signature for m in earlier.messages for b in m.thinking]
    assert proofs and all(proofs)
    emu.clear()
    agent = make_agent(client, "adaptive", foreign_reasoning=foreign_reasoning)
    result = await agent.run("And in Lyon?", history=earlier.messages)
    assert "Lyon" in result.output
    sent = json.dumps([r.body for r in emu.requests])
    assert not any(p in sent for p in proofs if p), "a Bedrock signature went to Anthropic"
    first = emu.requests[0].body["messages"]
    kinds = {b["type"] for m in first[: len(earlier.messages)] for b in m["content"]}
    assert not kinds & {"thinking", "redacted_thinking"}
    texts = [b["text"] for m in first for b in m["content"] if b["type"] == "text"]
    assert any(t.startswith("<thinking>") for t in texts) is (foreign_reasoning == "text")


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_a_tool_loop_begun_elsewhere_is_refused_before_sending(
    emu: Emulator, client: anthropic.AsyncAnthropic, streamed: bool
) -> None:
    """Claude would answer "Expected `thinking` or `redacted_thinking`, but found `tool_use`":
    the adapter says so, with the remedy, and sends nothing."""
    bedrock = Agent(
        BedrockModel(
            "anthropic.claude-sonnet-4-6-v1:0",
            client=emu.bedrock_client(),
            thinking=ClaudeThinking.adaptive(),
        ),
        tools=TOOLS,
    )
    history = (await bedrock.run(QUESTION)).messages[:3]  # mid-loop
    emu.clear()
    for case in ("adaptive", "budget", "default"):
        with pytest.raises(HistoryError) as caught:
            await run(make_agent(client, case), None, history=history, streamed=streamed)
        error = caught.value
        assert error.message_index == 1
        assert "provider that started it" in str(error) and "thinking disabled" in str(error)
    assert emu.requests == []
    # the remedy: this request without thinking
    disabled = Agent(
        AnthropicModel("claude-sonnet-4-6", client=client, thinking=ClaudeThinking.disabled()),
        tools=TOOLS,
    )
    result = await run(disabled, None, history=history, streamed=streamed)
    assert "14:05" in result.output


async def test_whitespace_only_text_is_not_sent(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    """Claude refuses "text content blocks must contain non-whitespace text"."""
    agent = make_agent(client, "adaptive")
    history = (await agent.run(QUESTION)).messages[:3]
    step = history[1]
    history[1] = step.model_copy(update={"parts": (*step.parts, TextPart(text="\n\n"))})
    emu.clear()
    result = await agent.run(None, history=history)
    assert "14:05" in result.output
    sent = [b for r in emu.requests for m in r.body["messages"] for b in m["content"]]
    assert all(b["text"].strip() for b in sent if b["type"] == "text")


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "streamed"])
async def test_an_sdk_refusal_it_does_not_know_is_raised_as_it_is(
    client: anthropic.AsyncAnthropic, streamed: bool
) -> None:
    """Not chained to itself (`raise exc from exc`)."""
    model = AnthropicModel(
        "claude-sonnet-4-6", client=client, settings={"extra_body": {"opaque": object()}}
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


async def test_forced_tool_choice_with_thinking_sends_nothing(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    for case in ("adaptive", "default"):
        agent = Agent(
            make_agent(client, case).model, tools=TOOLS, model_settings={"tool_choice": "required"}
        )
        with pytest.raises(ConfigurationError, match="forces tool use"):
            await agent.run(QUESTION)
    assert emu.requests == []


async def test_effort_and_pass_through_reach_the_wire(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(
        client,
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
    emu: Emulator, retrying_client: anthropic.AsyncAnthropic, fault: Fault, streamed: bool
) -> None:
    emu.inject(fault, times=2)
    result = await run(make_agent(retrying_client, "adaptive"), QUESTION, streamed=streamed)
    assert result.usage.requests == 3
    assert len(emu.requests) == 5  # two refused, then the three of the loop
    assert [r.headers.get("x-stainless-retry-count") for r in emu.requests[:3]] == ["0", "1", "2"]


@pytest.mark.parametrize(
    ("fault", "status", "error_type"),
    [
        (Fault.rate_limited(api="anthropic"), 429, "rate_limit_error"),
        (Fault.overloaded(api="anthropic"), 529, "overloaded_error"),
        (Fault.http(500, api="anthropic"), 500, "api_error"),
    ],
)
async def test_without_retries_the_error_is_retryable(
    client: anthropic.AsyncAnthropic, emu: Emulator, fault: Fault, status: int, error_type: str
) -> None:
    emu.inject(fault)
    with pytest.raises(ProviderError) as caught:
        await make_agent(client, "adaptive").run(QUESTION)
    error = caught.value
    assert (error.status, error.retryable, error.error_type) == (status, True, error_type)
    assert isinstance(error.__cause__, anthropic.APIStatusError)
    assert error.messages == [Message.user(QUESTION)]


async def test_a_cut_stream_leaves_an_unsigned_partial_and_valid_evidence(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(client, "adaptive")
    full = await agent.run(QUESTION)
    emu.clear()
    emu.inject(Fault.cut(api="anthropic"))
    with pytest.raises(StreamInterrupted) as caught:
        await run(agent, QUESTION, streamed=True)
    error = caught.value
    assert error.retryable and error.scope == "anthropic"
    partial = error.partial
    assert partial is not None and partial.thinking
    cut = partial.thinking[-1]
    assert cut.signature is None and cut.text
    assert full.messages[1].thinking[0].text.startswith(cut.text)
    assert error.messages == [Message.user(QUESTION)]
    validate_history(error.messages)
    # the evidence resumes cleanly
    resumed = await agent.run(None, history=error.messages)
    assert resumed.output == full.output


async def test_a_cut_after_the_first_turn_keeps_the_finished_turns(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    agent = make_agent(client, "adaptive")
    history = (await agent.run(QUESTION)).messages[:3]
    emu.clear()
    emu.inject(Fault.cut(api="anthropic"))
    with pytest.raises(StreamInterrupted) as caught:
        await run(agent, None, history=history, streamed=True)
    assert caught.value.messages == history
    partial = caught.value.partial
    assert partial is not None and partial.thinking
    assert not partial.thinking[-1].is_signed


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [
        (529, "overloaded_error", True),
        (500, "api_error", True),
        (400, "invalid_request_error", False),
    ],
)
async def test_an_error_event_mid_stream(
    emu: Emulator, client: anthropic.AsyncAnthropic, status: int, error_type: str, retryable: bool
) -> None:
    emu.inject(Fault.stream_error(status, after=4, api="anthropic"))
    with pytest.raises(ProviderError) as caught:
        await run(make_agent(client, "adaptive"), QUESTION, streamed=True)
    error = caught.value
    assert not isinstance(error, StreamInterrupted)
    assert (error.status, error.error_type, error.retryable) == (None, error_type, retryable)
    assert isinstance(error.__cause__, anthropic.APIStatusError)


async def test_a_malformed_event_interrupts_the_stream(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.malformed(after=5, api="anthropic"))
    with pytest.raises(StreamInterrupted) as caught:
        await run(make_agent(client, "adaptive"), QUESTION, streamed=True)
    partial = caught.value.partial
    assert partial is not None
    assert all(not isinstance(p, ThinkingBlock) or not p.is_signed for p in partial.parts[-1:])


async def test_a_long_non_streamed_request_is_refused_before_sending(
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    # the SDK wants long requests streamed (its default timeout would cut them)
    agent = make_agent(client, "adaptive", max_tokens=64000)
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
    emu: Emulator, client: anthropic.AsyncAnthropic
) -> None:
    emu.inject(Fault.stream_error(500, after=4, delay=0.2, api="anthropic"))
    agent = make_agent(client, "adaptive")
    first_delta = asyncio.Event()

    async def consume() -> None:
        async with agent.run_stream(QUESTION) as stream:
            async for event in stream:
                if isinstance(event, ThinkingDelta):
                    first_delta.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):  # a RunCancelled inside the task
        await task
    assert asyncio.all_tasks() == {asyncio.current_task()}
    # the client is still usable: the cancelled response was closed
    assert (await agent.run(QUESTION)).output
