"""`BedrockModel` through boto3 against the emulator, what only Converse has (`test_emulator.py`
has the rest, for both wires): redacted bytes, inference profiles, tools in the history with
none on offer, empty tool results, its pass-through options, botocore's retries, credentials."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from botocore.config import Config

from tests.support.claude import (
    BEDROCK,
    QUESTION,
    REDACTED_QUESTION,
    TOOLS,
    assistant_turns,
    check_replayed,
    run,
)
from thinkagent import (
    Agent,
    ProviderError,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

SONNET = "us.anthropic.claude-sonnet-4-6-v1:0"
OPUS = "global.anthropic.claude-opus-5-v1:0"
CASES: dict[str, tuple[str, ClaudeThinking | None, str]] = {
    "adaptive": (SONNET, ClaudeThinking.adaptive(), QUESTION),
    "budget": (SONNET, ClaudeThinking.budget(2048), QUESTION),
    "redacted": (SONNET, ClaudeThinking.budget(2048), REDACTED_QUESTION),
}


def make_agent(client: Any, case: str, **kw: Any) -> Agent:
    name, thinking, _ = CASES[case]
    return Agent(BedrockModel(name, client=client, thinking=thinking, **kw), tools=TOOLS)


async def test_redacted_bytes_go_back_byte_exact(emu: Emulator, bedrock_client: Any) -> None:
    agent = make_agent(bedrock_client, "redacted")
    result = await agent.run(REDACTED_QUESTION)
    stored = result.messages[1].thinking[0].redacted
    assert stored is not None
    loaded = load_messages(dump_messages(result.messages))
    assert loaded == result.messages
    second_request = emu.requests[1].body["messages"][1]["content"][0]
    assert second_request == {"reasoningContent": {"redactedContent": stored}}


APPLICATION_PROFILE = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"


@pytest.mark.parametrize("streamed", [False, True], ids=["converse", "stream"])
async def test_an_application_inference_profile_keeps_its_thinking(
    emu: Emulator, streamed: bool
) -> None:
    """With no thinking configured and a model id the rules cannot read, the current loop's
    signed thinking still goes back (Bedrock resolves the profile to Opus 5 here, which
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
    check_replayed(BEDROCK, emu, result.messages)


async def test_a_history_with_tool_calls_and_no_tools_on_offer(
    emu: Emulator, bedrock_client: Any
) -> None:
    """Converse requires a toolConfig when the messages hold toolUse/toolResult blocks: the
    tools the history used are declared, as unavailable."""
    finished = (await make_agent(bedrock_client, "adaptive").run(QUESTION)).messages
    emu.clear()
    model = BedrockModel(SONNET, client=bedrock_client, thinking=ClaudeThinking.adaptive())
    result = await Agent(model).run("Thanks. Which city was it?", history=finished)
    assert result.output
    config = emu.requests[0].body["toolConfig"]
    assert [t["toolSpec"]["name"] for t in config["tools"][:-1]] == ["get_weather", "get_time"]
    assert config["tools"][-1] == {"cachePoint": {"type": "default"}}  # no instructions


async def test_an_empty_tool_result_goes_without_a_blank_text_block(
    emu: Emulator, bedrock_client: Any
) -> None:
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return ""

    model = BedrockModel(SONNET, client=bedrock_client, thinking=ClaudeThinking.adaptive())
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


async def test_effort_and_pass_through_reach_the_wire(emu: Emulator, bedrock_client: Any) -> None:
    agent = make_agent(
        bedrock_client,
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
    emu: Emulator, retrying_bedrock_client: Any, fault: Fault, streamed: bool
) -> None:
    emu.inject(fault)
    result = await run(make_agent(retrying_bedrock_client, "adaptive"), QUESTION, streamed=streamed)
    assert result.usage.requests == 3
    assert len(emu.requests) == 4  # one refused, then the three of the loop
    assert emu.requests[1].headers["amz-sdk-request"].startswith("attempt=2")


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


async def test_the_hooks_are_registered_on_the_client_once(emu: Emulator) -> None:
    """The body and header hooks go on a client's events once, not per request: botocore
    inspects a handler on every registration, even one it skips for its unique id."""
    client = emu.bedrock_client(config=Config(retries={"total_max_attempts": 1}))
    events = client.meta.events
    registered: list[str] = []
    register_first = events.register_first

    def counting(event_name: str, handler: Any, **kw: Any) -> None:
        registered.append(event_name)
        register_first(event_name, handler, **kw)

    events.register_first = counting
    agent = make_agent(client, "budget", settings={"extra_headers": {"x-trace": "1"}})
    first = len(emu.requests)
    await agent.run(QUESTION)  # a tool loop: several requests
    await agent.run(QUESTION)
    client.close()
    assert len(emu.requests) - first >= 4
    ours = [
        f"{event}.bedrock-runtime.{operation}"
        for event in ("before-call", "before-sign")
        for operation in ("Converse", "ConverseStream")
    ]
    assert [registered.count(event) for event in ours] == [1, 1, 1, 1], registered
    assert len(registered) == len(set(registered)), registered
    assert all(r.headers.get("x-trace") == "1" for r in emu.requests[first:])
