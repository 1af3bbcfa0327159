"""`BedrockModel` through boto3 against the emulator: thinking + tool loops (Converse and
ConverseStream), replay, persistence, tampering, other scopes, faults. The emulator verifies
every signature and redacted payload, so a loop that completes proves the replay."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import quote

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

from tests.support.claude import (
    QUESTION,
    REDACTED_QUESTION,
    TOOLS,
    assistant_turns,
    bedrock_content,
    check_stream_order,
    run,
    stream_events,
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
    ThinkingDelta,
    ToolCallDelta,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.anthropic import AnthropicModel
from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

SONNET = "us.anthropic.claude-sonnet-4-6-v1:0"
OPUS = "global.anthropic.claude-opus-4-7-v1:0"
CASES: dict[str, tuple[str, ClaudeThinking | None, str]] = {
    "adaptive": (SONNET, ClaudeThinking.adaptive(), QUESTION),
    "budget": (SONNET, ClaudeThinking.budget(2048), QUESTION),
    "redacted": (SONNET, ClaudeThinking.budget(2048), REDACTED_QUESTION),
    "omitted": (SONNET, ClaudeThinking.adaptive(display="omitted"), QUESTION),
    "default": (OPUS, None, QUESTION),
}


def make_agent(client: Any, case: str, **kw: Any) -> Agent:
    name, thinking, _ = CASES[case]
    return Agent(BedrockModel(name, client=client, thinking=thinking, **kw), tools=TOOLS)


def check_replayed(emu: Emulator, messages: list[Message]) -> None:
    requests = emu.requests
    turns = [i for i, m in enumerate(messages) if m.role == "assistant"]
    assert len(requests) == len(turns)
    for request, upto in zip(requests[1:], turns[1:], strict=True):
        sent = request.body["messages"]
        for i in turns:
            if i < upto:
                assert sent[i] == {"role": "assistant", "content": bedrock_content(messages[i])}


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
@pytest.mark.parametrize("case", list(CASES))
async def test_thinking_tool_loop(emu: Emulator, client: Any, case: str, streamed: bool) -> None:
    result = await run(make_agent(client, case), CASES[case][2], streamed=streamed)
    turns = assistant_turns(result)
    assert [c.name for m in turns for c in m.tool_calls] == ["get_weather", "get_time"]
    assert "sunny in Paris" in result.output and "14:05" in result.output
    first = turns[0].thinking[0]
    if case == "redacted":
        assert first.is_redacted and base64.b64decode(first.redacted or "", validate=True)
    elif case in ("omitted", "default"):
        assert first.is_signed and first.text == ""
    else:
        assert first.is_signed and first.text
    for m in turns:
        assert (m.scope, m.model, m.id) == ("bedrock", CASES[case][0], None)
        assert m.usage is not None and m.usage.input_tokens > 0 and m.usage.output_tokens > 0
        assert m.usage.thinking_tokens == 0  # Bedrock does not report them
    assert [m.finish_reason for m in turns] == ["tool_call", "tool_call", "stop"]
    check_replayed(emu, result.messages)


@pytest.mark.parametrize("case", list(CASES))
async def test_streamed_equals_non_streamed(client: Any, case: str) -> None:
    agent = make_agent(client, case)
    plain = await run(agent, CASES[case][2], streamed=False)
    streamed = await run(agent, CASES[case][2], streamed=True)
    assert streamed.messages == plain.messages
    assert streamed.usage == plain.usage


async def test_stream_deltas(client: Any) -> None:
    events, result = await stream_events(make_agent(client, "adaptive"), QUESTION)
    check_stream_order(events)
    responses = [e for e in events if isinstance(e, ModelResponse)]
    assert [r.message for r in responses] == assistant_turns(result)
    first = events[: events.index(responses[0])]
    kinds = [type(e) for e in first]
    assert kinds.index(ThinkingDelta) < kinds.index(TextDelta) < kinds.index(ToolCallDelta)
    redacted_events, _ = await stream_events(make_agent(client, "redacted"), REDACTED_QUESTION)
    whole = [e for e in redacted_events if isinstance(e, ThinkingDelta) and e.redacted]
    assert whole and all(base64.b64decode(e.redacted or "", validate=True) for e in whole)


async def test_redacted_bytes_go_back_byte_exact(emu: Emulator, client: Any) -> None:
    agent = make_agent(client, "redacted")
    result = await agent.run(REDACTED_QUESTION)
    stored = result.messages[1].thinking[0].redacted
    assert stored is not None
    loaded = load_messages(dump_messages(result.messages))
    assert loaded == result.messages
    second_request = emu.requests[1].body["messages"][1]["content"][0]
    assert second_request == {"reasoningContent": {"redactedContent": stored}}


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
async def test_persist_mid_loop_and_resume(emu: Emulator, client: Any, streamed: bool) -> None:
    agent = make_agent(client, "adaptive")
    full = await run(agent, QUESTION, streamed=streamed)
    head = full.messages[:3]
    emu.clear()
    resumed = await run(agent, None, history=load_messages(dump_messages(head)), streamed=streamed)
    assert resumed.messages == full.messages
    assert emu.requests[0].body["messages"][1]["content"] == bedrock_content(head[1])


async def test_a_changed_signature_is_refused_with_the_providers_message(
    emu: Emulator, client: Any
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
    assert (error.status, error.retryable, error.error_type) == (400, False, "ValidationException")
    assert error.message == (
        "The model returned the following errors: "
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    )
    assert isinstance(error.__cause__, ClientError)
    assert (await agent.run(None, history=full.messages[:3])).output == full.output


async def test_a_changed_redacted_payload_is_refused(client: Any) -> None:
    agent = make_agent(client, "redacted")
    full = await agent.run(REDACTED_QUESTION)
    data = json.loads(dump_messages(full.messages[:3]))
    block = data[1]["parts"][0]
    raw = bytearray(base64.b64decode(block["redacted"]))
    raw[len(raw) // 2] ^= 0x01
    block["redacted"] = base64.b64encode(bytes(raw)).decode()
    with pytest.raises(ProviderError, match="Invalid `data` in `redacted_thinking` block"):
        await agent.run(None, history=load_messages(json.dumps(data)))


@pytest.mark.parametrize("foreign_reasoning", ["drop", "text"])
async def test_an_anthropic_history_continues_on_bedrock(
    emu: Emulator, client: Any, foreign_reasoning: str
) -> None:
    anthropic_client = emu.anthropic_client()
    try:
        earlier = await Agent(
            AnthropicModel(
                "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.adaptive()
            ),
            tools=TOOLS,
        ).run(QUESTION)
    finally:
        await anthropic_client.close()
    proofs = [b.signature for m in earlier.messages for b in m.thinking]
    assert proofs and all(proofs)
    emu.clear()
    agent = make_agent(client, "adaptive", foreign_reasoning=foreign_reasoning)
    result = await agent.run("And in Lyon?", history=earlier.messages)
    assert "Lyon" in result.output
    sent = json.dumps([r.body for r in emu.requests])
    assert not any(p in sent for p in proofs if p), "an Anthropic signature went to Bedrock"
    first = emu.requests[0].body["messages"]
    assert not any("reasoningContent" in b for m in first for b in m["content"])
    texts = [b["text"] for m in first for b in m["content"] if "text" in b]
    assert any(t.startswith("<thinking>") for t in texts) is (foreign_reasoning == "text")


async def mid_loop_on_anthropic(emu: Emulator) -> list[Message]:
    """A tool loop begun on the Anthropic API: the question, its first step, the result."""
    anthropic_client = emu.anthropic_client()
    try:
        earlier = await Agent(
            AnthropicModel(
                "claude-sonnet-4-6", client=anthropic_client, thinking=ClaudeThinking.adaptive()
            ),
            tools=TOOLS,
        ).run(QUESTION)
    finally:
        await anthropic_client.close()
    emu.clear()
    return earlier.messages[:3]


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
async def test_a_tool_loop_begun_elsewhere_is_refused_before_sending(
    emu: Emulator, client: Any, streamed: bool
) -> None:
    """Claude would answer "Expected `thinking` or `redacted_thinking`, but found `tool_use`":
    the adapter says so, with the remedy, and sends nothing."""
    history = await mid_loop_on_anthropic(emu)
    for case in ("adaptive", "default"):
        with pytest.raises(HistoryError) as caught:
            await run(make_agent(client, case), None, history=history, streamed=streamed)
        assert caught.value.message_index == 1
        assert "provider that started it" in str(caught.value)
    assert emu.requests == []
    # the remedy: this request without thinking
    agent = Agent(
        BedrockModel(SONNET, client=client, thinking=ClaudeThinking.disabled()), tools=TOOLS
    )
    result = await run(agent, None, history=history, streamed=streamed)
    assert "14:05" in result.output


APPLICATION_PROFILE = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
async def test_an_application_inference_profile_keeps_its_thinking(
    emu: Emulator, streamed: bool
) -> None:
    """With no thinking configured and a model id the rules cannot read, the current loop's
    signed thinking still goes back (Bedrock resolves the profile to Opus 4.7 here, which
    thinks by default and refuses a loop without it)."""
    profile_client = emu.bedrock_client(config=Config(retries={"total_max_attempts": 1}))

    def resolve_profile(request: Any, **_: Any) -> None:
        # what Bedrock does server-side: the profile's model serves the request
        request.url = request.url.replace(quote(APPLICATION_PROFILE, safe=""), quote(OPUS, safe=""))

    for operation in ("Converse", "ConverseStream"):
        profile_client.meta.events.register(
            f"before-sign.bedrock-runtime.{operation}", resolve_profile
        )
    try:
        agent = Agent(BedrockModel(APPLICATION_PROFILE, client=profile_client), tools=TOOLS)
        result = await run(agent, QUESTION, streamed=streamed)
    finally:
        profile_client.close()
    assert "14:05" in result.output
    assert all(m.thinking for m in assistant_turns(result))
    check_replayed(emu, result.messages)


async def test_whitespace_only_text_is_not_sent(emu: Emulator, client: Any) -> None:
    agent = make_agent(client, "adaptive")
    history = (await agent.run(QUESTION)).messages[:3]
    step = history[1]
    history[1] = step.model_copy(update={"parts": (*step.parts, TextPart(text=" \n"))})
    emu.clear()
    result = await agent.run(None, history=history)
    assert "14:05" in result.output
    sent = [b for r in emu.requests for m in r.body["messages"] for b in m["content"]]
    assert all(b["text"].strip() for b in sent if "text" in b)


async def test_a_history_with_tool_calls_and_no_tools_on_offer(emu: Emulator, client: Any) -> None:
    """Converse requires a toolConfig when the messages hold toolUse/toolResult blocks: the
    tools the history used are declared, as unavailable."""
    finished = (await make_agent(client, "adaptive").run(QUESTION)).messages
    emu.clear()
    model = BedrockModel(SONNET, client=client, thinking=ClaudeThinking.adaptive())
    result = await Agent(model).run("Thanks. Which city was it?", history=finished)
    assert result.output
    config = emu.requests[0].body["toolConfig"]
    assert [t["toolSpec"]["name"] for t in config["tools"]] == ["get_weather", "get_time"]


async def test_an_empty_tool_result_goes_without_a_blank_text_block(
    emu: Emulator, client: Any
) -> None:
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return ""

    model = BedrockModel(SONNET, client=client, thinking=ClaudeThinking.adaptive())
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    assert result.output
    results = [
        b["toolResult"]
        for r in emu.requests
        for m in r.body["messages"]
        for b in m["content"]
        if "toolResult" in b
    ]
    assert results and all(r["content"] == [] for r in results)


async def test_forced_tool_choice_with_thinking_sends_nothing(emu: Emulator, client: Any) -> None:
    for case in ("budget", "default"):
        agent = Agent(
            make_agent(client, case).model, tools=TOOLS, model_settings={"tool_choice": "get_time"}
        )
        with pytest.raises(ConfigurationError, match="forces tool use"):
            await agent.run(QUESTION)
    assert emu.requests == []


async def test_effort_and_pass_through_reach_the_wire(emu: Emulator, client: Any) -> None:
    agent = make_agent(
        client,
        "budget",
        effort="high",
        additional_model_request_fields={"anthropic_beta": ["interleaved-thinking-2025-05-14"]},
        extra_headers={"x-thinkagent-test": "yes"},
    )
    result = await agent.run(QUESTION)
    request = emu.requests[0]
    assert request.body["outputConfig"] == {"effort": "high"}
    assert request.body["additionalModelRequestFields"] == {
        "anthropic_beta": ["interleaved-thinking-2025-05-14"],
        "thinking": {"type": "enabled", "budget_tokens": 2048},
    }
    assert request.headers["x-thinkagent-test"] == "yes"
    assert "x-amz-date" in request.headers and request.auth == "AWS4-HMAC-SHA256"
    assert all(m.thinking for m in assistant_turns(result))  # interleaved with the beta


# --- faults ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "streamed"),
    [
        (Fault.rate_limited(api="bedrock"), False),
        (Fault.rate_limited(api="bedrock"), True),
        (Fault.overloaded(api="bedrock"), False),  # 529 reaches boto3 as a 503
    ],
    ids=["429-converse", "429-stream", "529-converse"],
)
async def test_botocore_retries_throttling_and_unavailable(
    emu: Emulator, retrying_client: Any, fault: Fault, streamed: bool
) -> None:
    emu.inject(fault)
    result = await run(make_agent(retrying_client, "adaptive"), QUESTION, streamed=streamed)
    assert result.usage.requests == 3
    assert len(emu.requests) == 4  # one refused, then the three of the loop
    assert emu.requests[1].headers["amz-sdk-request"].startswith("attempt=2")


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [
        (Fault.rate_limited(api="bedrock"), 429, "ThrottlingException"),
        (Fault.overloaded(api="bedrock"), 503, "ServiceUnavailableException"),
        (Fault.http(500, api="bedrock"), 500, "InternalServerException"),
    ],
)
async def test_without_retries_the_error_is_retryable(
    emu: Emulator, client: Any, fault: Fault, status: int, code: str
) -> None:
    emu.inject(fault)
    with pytest.raises(ProviderError) as caught:
        await make_agent(client, "adaptive").run(QUESTION)
    error = caught.value
    assert (error.status, error.retryable, error.error_type) == (status, True, code)
    assert isinstance(error.__cause__, ClientError)


async def test_a_cut_stream_leaves_an_unsigned_partial_and_valid_evidence(
    emu: Emulator, client: Any
) -> None:
    agent = make_agent(client, "adaptive")
    full = await agent.run(QUESTION)
    emu.clear()
    emu.inject(Fault.cut(api="bedrock"))
    with pytest.raises(StreamInterrupted) as caught:
        await run(agent, QUESTION, streamed=True)
    error = caught.value
    assert error.retryable and error.scope == "bedrock"
    partial = error.partial
    assert partial is not None and partial.thinking
    cut = partial.thinking[-1]
    assert cut.signature is None and cut.text
    assert full.messages[1].thinking[0].text.startswith(cut.text)
    validate_history(error.messages)
    assert (await agent.run(None, history=error.messages)).output == full.output


@pytest.mark.parametrize(
    ("status", "code", "retryable"),
    [
        (429, "throttlingException", True),
        (503, "serviceUnavailableException", True),
        (500, "internalServerException", True),
        (529, "modelStreamErrorException", True),
        (400, "validationException", False),
    ],
)
async def test_an_exception_event_mid_stream(
    emu: Emulator, client: Any, status: int, code: str, retryable: bool
) -> None:
    emu.inject(Fault.stream_error(status, after=3, api="bedrock"))
    with pytest.raises(ProviderError) as caught:
        await run(make_agent(client, "adaptive"), QUESTION, streamed=True)
    error = caught.value
    assert not isinstance(error, StreamInterrupted)
    assert (error.status, error.error_type, error.retryable) == (None, code, retryable)
    assert isinstance(error.__cause__, EventStreamError)


async def test_a_corrupt_frame_interrupts_the_stream(emu: Emulator, client: Any) -> None:
    emu.inject(Fault.malformed(after=4, api="bedrock"))
    with pytest.raises(StreamInterrupted) as caught:
        await run(make_agent(client, "adaptive"), QUESTION, streamed=True)
    partial = caught.value.partial
    assert partial is not None
    assert all(not b.is_signed for b in partial.thinking[-1:])


async def test_no_credential_in_messages_errors_or_reprs(emu: Emulator) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYdoNotLeak"
    client = emu.bedrock_client(aws_secret_access_key=secret)
    agent = make_agent(client, "adaptive")
    result = await agent.run(QUESTION)
    emu.inject(Fault.http(403, api="bedrock"))
    with pytest.raises(ProviderError) as caught:
        await agent.run("again", history=result.messages)
    error = caught.value
    assert error.status == 403 and not error.retryable
    seen = [dump_messages(result.messages), repr(agent.model), str(error), repr(error)]
    assert not any(secret in text or "AKIA" in text for text in seen)
