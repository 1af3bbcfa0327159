"""Both Claude models through their official SDKs against the emulator, once for both wires:
thinking + tool loops, replay, persistence, tampering, other scopes, faults. The emulator
verifies every signature and redacted payload it is sent, so a loop that completes is the proof
that the thinking went back right."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.support import uncached
from tests.support.claude import (
    ANTHROPIC,
    BEDROCK,
    QUESTION,
    REDACTED_QUESTION,
    TOOLS,
    WIRES,
    Wire,
    assistant_turns,
    check_replayed,
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
from thinkagent.providers.claude import ClaudeThinking

CASES: dict[str, tuple[bool, ClaudeThinking | None, str]] = {
    # name: (on opus rather than sonnet, thinking, question)
    "adaptive": (False, ClaudeThinking.adaptive(), QUESTION),
    "budget": (False, ClaudeThinking.budget(2048), QUESTION),
    "redacted": (False, ClaudeThinking.budget(2048), REDACTED_QUESTION),
    "omitted": (False, ClaudeThinking.adaptive(display="omitted"), QUESTION),
    "default": (True, None, QUESTION),  # adaptive by default, display omitted
}

streamed_or_not = pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])


def model_name(wire: Wire, case: str) -> str:
    return wire.opus if CASES[case][0] else wire.sonnet


def make_agent(wire: Wire, wire_client: Any, case: str, **kw: Any) -> Agent:
    _, thinking, _ = CASES[case]
    return Agent(
        wire.model(wire_client, name=model_name(wire, case), thinking=thinking, **kw), tools=TOOLS
    )


@pytest.fixture
def other_client(wire: Wire, emu: Emulator, request: pytest.FixtureRequest) -> Any:
    """A client of the other Claude wire."""
    return request.getfixturevalue(other_wire(wire).client_fixture)


def other_wire(wire: Wire) -> Wire:
    return next(w for w in WIRES if w.scope == wire.other)


async def other_wire_history(wire: Wire, emu: Emulator, other_client: Any) -> list[Message]:
    """A finished tool loop on the other Claude wire (its signatures are not valid here)."""
    model = other_wire(wire).model(other_client, thinking=ClaudeThinking.adaptive())
    messages = (await Agent(model, tools=TOOLS).run(QUESTION)).messages
    emu.clear()
    return messages


@streamed_or_not
@pytest.mark.parametrize("case", list(CASES))
async def test_thinking_tool_loop(
    wire: Wire, emu: Emulator, wire_client: Any, case: str, streamed: bool
) -> None:
    result = await run(make_agent(wire, wire_client, case), CASES[case][2], streamed=streamed)
    turns = assistant_turns(result)
    assert [len(m.tool_calls) for m in turns] == [1, 1, 0]
    assert [c.name for m in turns for c in m.tool_calls] == ["get_weather", "get_time"]
    assert "sunny in Paris" in result.output and "14:05" in result.output
    first = turns[0].thinking
    assert first, "the first turn thinks"
    if case == "redacted":
        assert first[0].is_redacted and first[0].text == ""
        assert base64.b64decode(first[0].redacted or "", validate=True)
    elif case in ("omitted", "default"):
        assert first[0].is_signed and first[0].text == ""
    else:
        assert first[0].is_signed and first[0].text
    if case in ("adaptive", "omitted", "default"):  # adaptive thinking is interleaved
        assert all(m.thinking for m in turns)
    for m in turns:
        assert (m.scope, m.model) == (wire.scope, model_name(wire, case))
        assert m.usage is not None and m.usage.input_tokens > 0 and m.usage.output_tokens > 0
        if wire.scope == "anthropic":
            assert m.id and m.id.startswith("msg_")
            if m.thinking and not m.thinking[0].is_redacted:
                assert 0 < m.usage.thinking_tokens <= m.usage.output_tokens
        else:  # Converse has no message id, and does not report thinking tokens
            assert m.id is None
            assert m.usage.thinking_tokens == 0
    assert [m.finish_reason for m in turns] == ["tool_call", "tool_call", "stop"]
    assert turns[0].provider_details == {"finish_reason": "tool_use"}
    assert result.usage.requests == 3
    check_replayed(wire, emu, result.messages)


@pytest.mark.parametrize("case", list(CASES))
async def test_streamed_equals_non_streamed(wire: Wire, wire_client: Any, case: str) -> None:
    agent = make_agent(wire, wire_client, case)
    plain = await run(agent, CASES[case][2], streamed=False)
    streamed = await run(agent, CASES[case][2], streamed=True)
    assert without_ids(streamed.messages) == without_ids(plain.messages)
    assert streamed.messages == plain.messages  # the emulator's ids are deterministic too
    assert uncached(streamed.usage) == uncached(plain.usage)  # the second run reads a cache


async def test_stream_deltas(wire: Wire, wire_client: Any) -> None:
    events, result = await stream_events(make_agent(wire, wire_client, "adaptive"), QUESTION)
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
    redacted_events, _ = await stream_events(
        make_agent(wire, wire_client, "redacted"), REDACTED_QUESTION
    )
    whole = [e for e in redacted_events if isinstance(e, ThinkingDelta) and e.redacted]
    assert whole and all(not e.text and e.signature is None for e in whole)
    assert all(base64.b64decode(e.redacted or "", validate=True) for e in whole)


@streamed_or_not
async def test_persist_mid_loop_and_resume(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    agent = make_agent(wire, wire_client, "adaptive")
    full = await run(agent, QUESTION, streamed=streamed)
    head = full.messages[:3]  # the question, the first tool call, its result
    saved = dump_messages(head)
    emu.clear()
    resumed = await run(agent, None, history=load_messages(saved), streamed=streamed)
    assert resumed.messages[:3] == head
    assert resumed.output == full.output
    assert resumed.new_messages == full.messages[3:]
    assert resumed.messages == full.messages
    sent = wire.model_requests(emu)[0].body["messages"]
    assert sent[1]["content"] == wire.content(head[1])


async def test_a_changed_signature_is_refused_with_the_providers_message(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = make_agent(wire, wire_client, "adaptive")
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
    assert (error.status, error.retryable, error.error_type) == (400, False, wire.invalid_request)
    assert error.message == (
        f"{wire.refusal_prefix}messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    assert isinstance(error.__cause__, wire.refusal_error)
    assert len(wire.model_requests(emu)) == 1
    # the untouched history is accepted
    assert (await agent.run(None, history=full.messages[:3])).output == full.output


async def test_a_changed_redacted_payload_is_refused(wire: Wire, wire_client: Any) -> None:
    agent = make_agent(wire, wire_client, "redacted")
    full = await agent.run(REDACTED_QUESTION)
    data = json.loads(dump_messages(full.messages[:3]))
    block = data[1]["parts"][0]
    raw = bytearray(base64.b64decode(block["redacted"]))
    raw[len(raw) // 2] ^= 0x01
    block["redacted"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(ProviderError, match="Invalid `data` in `redacted_thinking` block"):
        await agent.run(None, history=load_messages(json.dumps(data)))


async def test_the_other_wires_history_continues_here_with_its_thinking(
    wire: Wire, emu: Emulator, wire_client: Any, other_client: Any
) -> None:
    """Claude's signatures are compatible across its platforms: a conversation moves from the
    Claude API to Bedrock, or back, and its thinking goes with it, verified."""
    earlier = await other_wire_history(wire, emu, other_client)
    proofs = [b.signature for m in earlier for b in m.thinking]
    assert proofs and all(proofs)
    agent = make_agent(wire, wire_client, "adaptive")
    result = await agent.run("And in Lyon?", history=earlier)
    assert "Lyon" in result.output
    sent = json.dumps(wire.model_requests(emu)[0].body)
    assert all(p in sent for p in proofs if p), f"a {wire.other} signature stayed behind"


@streamed_or_not
async def test_a_tool_loop_begun_elsewhere_is_refused_before_sending(
    wire: Wire, emu: Emulator, wire_client: Any, streamed: bool
) -> None:
    """With a thinking budget, Claude would answer "Expected `thinking` or `redacted_thinking`,
    but found `tool_use`" to a loop begun on another endpoint (its thinking is not sent): the
    adapter says so, with the remedy, and sends nothing. Adaptive thinking relaxes the rule."""
    elsewhere = wire.model(wire_client, scope="elsewhere")  # another endpoint's scope
    history = (await Agent(elsewhere, tools=TOOLS).run(QUESTION)).messages[:3]  # mid-loop
    emu.clear()
    with pytest.raises(HistoryError) as caught:
        await run(make_agent(wire, wire_client, "budget"), None, history=history, streamed=streamed)
    error = caught.value
    assert error.message_index == 1
    assert "provider that started it" in str(error) and "thinking disabled" in str(error)
    assert emu.requests == []
    for case in ("adaptive", "default"):
        result = await run(
            make_agent(wire, wire_client, case), None, history=history, streamed=streamed
        )
        assert "14:05" in result.output
    # the remedy: this request without thinking
    disabled = Agent(wire.model(wire_client, thinking=ClaudeThinking.disabled()), tools=TOOLS)
    result = await run(disabled, None, history=history, streamed=streamed)
    assert "14:05" in result.output


async def test_whitespace_only_text_is_not_sent(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    """Claude refuses "text content blocks must contain non-whitespace text"."""
    agent = make_agent(wire, wire_client, "adaptive")
    history = (await agent.run(QUESTION)).messages[:3]
    step = history[1]
    history[1] = step.model_copy(update={"parts": (*step.parts, TextPart(text=" \n"))})
    emu.clear()
    result = await agent.run(None, history=history)
    assert "14:05" in result.output
    sent = [b for r in emu.requests for m in r.body["messages"] for b in m["content"]]
    assert all(text.strip() for text in wire.texts(sent))


@pytest.mark.parametrize("choice", ["required", "get_time"])
async def test_a_forced_tool_choice_claude_refuses_sends_nothing(
    wire: Wire, emu: Emulator, wire_client: Any, choice: str
) -> None:
    opus_5_5 = "claude-opus-5-5" if wire is ANTHROPIC else "anthropic.claude-opus-5-5-v1:0"
    models = [
        make_agent(wire, wire_client, "budget").model,
        wire.model(wire_client, name=opus_5_5, thinking=None),
    ]
    for model in models:
        agent = Agent(model, tools=TOOLS, model_settings={"tool_choice": choice})
        with pytest.raises(ConfigurationError, match="tool_choice"):
            await agent.run(QUESTION)
    assert emu.requests == []


# --- faults ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "fault", "status", "error_type"),
    [
        (ANTHROPIC, Fault.rate_limited(api="anthropic"), 429, "rate_limit_error"),
        (ANTHROPIC, Fault.overloaded(api="anthropic"), 529, "overloaded_error"),
        (ANTHROPIC, Fault.http(500, api="anthropic"), 500, "api_error"),
        (BEDROCK, Fault.rate_limited(api="bedrock"), 429, "ThrottlingException"),
        (BEDROCK, Fault.overloaded(api="bedrock"), 503, "ServiceUnavailableException"),
        (BEDROCK, Fault.http(500, api="bedrock"), 500, "InternalServerException"),
    ],
    ids=[
        "anthropic-429",
        "anthropic-529",
        "anthropic-500",
        "bedrock-429",
        "bedrock-529",
        "bedrock-500",
    ],
)
async def test_without_retries_the_error_is_retryable(
    wire: Wire, emu: Emulator, wire_client: Any, fault: Fault, status: int, error_type: str
) -> None:
    emu.inject(fault)
    with pytest.raises(ProviderError) as caught:
        await make_agent(wire, wire_client, "adaptive").run(QUESTION)
    error = caught.value
    assert (error.status, error.retryable, error.error_type) == (status, True, error_type)
    assert isinstance(error.__cause__, wire.status_error)
    assert error.messages == [Message.user(QUESTION)]


async def test_a_cut_stream_leaves_an_unsigned_partial_and_valid_evidence(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = make_agent(wire, wire_client, "adaptive")
    full = await agent.run(QUESTION)
    emu.clear()
    emu.inject(Fault.cut(api=wire.scope))
    with pytest.raises(StreamInterrupted) as caught:
        await run(agent, QUESTION, streamed=True)
    error = caught.value
    assert error.retryable and error.scope == wire.scope
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
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    agent = make_agent(wire, wire_client, "adaptive")
    history = (await agent.run(QUESTION)).messages[:3]
    emu.clear()
    emu.inject(Fault.cut(api=wire.scope))
    with pytest.raises(StreamInterrupted) as caught:
        await run(agent, None, history=history, streamed=True)
    assert caught.value.messages == history
    partial = caught.value.partial
    assert partial is not None and partial.thinking
    assert not partial.thinking[-1].is_signed


@pytest.mark.parametrize(
    ("wire", "status", "error_type", "retryable"),
    [
        (ANTHROPIC, 529, "overloaded_error", True),
        (ANTHROPIC, 500, "api_error", True),
        (ANTHROPIC, 400, "invalid_request_error", False),
        (BEDROCK, 429, "throttlingException", True),
        (BEDROCK, 503, "serviceUnavailableException", True),
        (BEDROCK, 500, "internalServerException", True),
        (BEDROCK, 529, "modelStreamErrorException", True),
        (BEDROCK, 400, "validationException", False),
    ],
    ids=[
        "anthropic-529",
        "anthropic-500",
        "anthropic-400",
        "bedrock-429",
        "bedrock-503",
        "bedrock-500",
        "bedrock-529",
        "bedrock-400",
    ],
)
async def test_an_error_event_mid_stream(
    wire: Wire, emu: Emulator, wire_client: Any, status: int, error_type: str, retryable: bool
) -> None:
    emu.inject(Fault.stream_error(status, after=4 if wire is ANTHROPIC else 3, api=wire.scope))
    with pytest.raises(ProviderError) as caught:
        await run(make_agent(wire, wire_client, "adaptive"), QUESTION, streamed=True)
    error = caught.value
    assert not isinstance(error, StreamInterrupted)
    assert (error.status, error.error_type, error.retryable) == (None, error_type, retryable)
    assert isinstance(error.__cause__, wire.status_error)


async def test_a_malformed_event_interrupts_the_stream(
    wire: Wire, emu: Emulator, wire_client: Any
) -> None:
    emu.inject(Fault.malformed(after=5 if wire is ANTHROPIC else 4, api=wire.scope))
    with pytest.raises(StreamInterrupted) as caught:
        await run(make_agent(wire, wire_client, "adaptive"), QUESTION, streamed=True)
    partial = caught.value.partial
    assert partial is not None
    assert all(not isinstance(p, ThinkingBlock) or not p.is_signed for p in partial.parts[-1:])
    assert all(not b.is_signed for b in partial.thinking[-1:])
