"""`OpenAIChatModel` through the official SDK against the emulator: 3-turn tool loops for
every reasoning dialect (streamed and not, and equal), what goes back on the wire, DeepSeek's
replay rule with its real error, persistence, other scopes' histories and faults."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any

import openai
import pytest

from tests.support import uncached
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
    validate_history,
)
from thinkagent.emulator import Emulator, Fault
from thinkagent.providers.openai import DIALECTS, OpenAIChatModel, OpenAIThinking


@dataclass(frozen=True)
class Case:
    id: str
    model: str
    dialect: str | None
    azure: bool = False
    scope: str = ""
    replay: str | None = None  # where reasoning goes back: a field, "tags", "chunks", or None
    route: str | None = None  # the emulator's dialect knob (`/{route}/v1`)

    @property
    def reasons_visibly(self) -> bool:
        return self.scope not in ("openai", "azure")


CASES = [
    Case("openai", "gpt-5", "openai", scope="openai"),
    Case("azure", "my-o4-mini", None, azure=True, scope="azure"),
    Case("deepseek", "deepseek-reasoner", "deepseek", scope="deepseek", replay="reasoning_content"),
    Case("think-tags", "minimax-m2", "minimax", scope="minimax", replay="tags"),
    Case(
        "openrouter",
        "qwen/qwen3-32b",
        "openrouter",
        scope="openrouter",
        replay="reasoning_details",
    ),
    Case("ollama", "qwen3:8b", "ollama", scope="ollama"),
    Case("qwen", "qwen3-max", "qwen", scope="qwen"),
    Case("kimi", "kimi-k2-thinking", "kimi", scope="moonshot", replay="reasoning_content"),
    Case("zai", "glm-4.6", "zai", scope="zai", replay="reasoning_content"),
    Case("vllm", "Qwen/Qwen3-8B", "vllm", scope="vllm", replay="reasoning", route="vllm"),
    Case("mistral", "magistral-medium-latest", "mistral", scope="mistral", replay="chunks"),
]


def make_model(case: Case, client: openai.AsyncOpenAI, **kw: Any) -> OpenAIChatModel:
    """The case's model on `client` (the `azure_client` fixture for an Azure case, else
    `openai_client`)."""
    return OpenAIChatModel(case.model, client=client, dialect=case.dialect, **kw)


async def run_streamed(agent: Agent, prompt: str | None, history: list[Message] | None = None):
    async with agent.run_stream(prompt, history=history or []) as stream:
        async for _ in stream:
            pass
    return stream.result


def assistant_turns(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_three_turn_tool_loop_streamed_and_not(
    case: Case,
    emu: Emulator,
    openai_client: openai.AsyncOpenAI,
    azure_client: openai.AsyncAzureOpenAI,
) -> None:
    client = azure_client if case.azure else openai_client
    if case.route is not None:
        client = emu.openai_client(base_url=f"{emu.url}/{case.route}/v1")
    model = make_model(case, client)
    agent = Agent(model, tools=TOOLS, instructions="Be brief.")
    result = await agent.run(QUESTION)
    streamed = await run_streamed(agent, QUESTION)
    assert without_ids(streamed.messages) == without_ids(result.messages)
    assert uncached(streamed.usage) == uncached(result.usage)  # the second run reads a cache

    messages = result.messages
    assert [m.role for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert [c.name for m in messages for c in m.tool_calls] == ["get_weather", "get_time"]
    assert "sunny in Paris" in result.output
    replies = [m for m in messages if m.role == "assistant"]
    assert all(m.scope == case.scope for m in replies)
    assert result.usage.thinking_tokens > 0 and result.usage.requests == 3
    if case.reasons_visibly:
        assert all(len(m.thinking) == 1 and isinstance(m.parts[0], ThinkingBlock) for m in replies)
        assert all(b.signature is None and b.text for b in thinking(replies))
    else:
        assert thinking(replies) == []

    requests = [r for r in emu.requests if r.api == "openai"]
    assert len(requests) == 6
    if case.azure:
        assert all(r.path == f"/openai/deployments/{case.model}/chat/completions" for r in requests)
        assert all(r.auth == "api-key" for r in requests)
    by_call = {m.tool_calls[0].id: m for m in replies if m.tool_calls}
    for body in (r.body for r in requests):
        first = body["messages"][0]
        developer = case.scope in ("openai", "azure") and case.model.startswith(("gpt-5", "o"))
        assert first == {"role": "developer" if developer else "system", "content": "Be brief."}
        assert not any(
            "reasoning_content" in m or "reasoning" in m
            for m in body["messages"]
            if m["role"] != "assistant"
        )
        for sent in assistant_turns(body):
            own = by_call[sent["tool_calls"][0]["id"]]
            block = own.thinking[0] if own.thinking else None
            if case.replay in ("reasoning_content", "reasoning"):
                assert block is not None and sent[case.replay] == block.text
                assert {"reasoning_content", "reasoning"} - {case.replay} - set(sent) == {
                    "reasoning_content",
                    "reasoning",
                } - {case.replay}
            elif case.replay == "reasoning_details":
                assert block is not None and block.provider_details is not None
                assert sent["reasoning_details"] == [{**block.provider_details, "text": block.text}]
            else:
                assert "reasoning_content" not in sent and "reasoning" not in sent
            if case.replay == "chunks":
                assert block is not None
                assert sent["content"][0] == {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": block.text}],
                }
            if case.replay == "tags":
                assert block is not None
                assert sent["content"].startswith(f"<think>\n{block.text}\n</think>")
            else:
                assert "<think>" not in (sent["content"] or "")
            assert sent["tool_calls"][0]["function"]["arguments"] == own.tool_calls[0].arguments


async def test_deepseek_replays_reasoning_on_every_turn_with_tools(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = make_model(CASES[2], openai_client)
    chat = await Agent(model).run("Say hello.")  # a turn without tools
    first = await Agent(model, tools=[get_weather]).run(
        "What's the weather in Paris?", history=chat.messages
    )
    emu.clear()
    await Agent(model, tools=[get_weather]).run("And in Lyon?", history=first.messages)
    body = bodies(emu, "openai")[0]
    sent = assistant_turns(body)
    replies = [m for m in first.messages if m.role == "assistant"]
    assert len(sent) == len(replies) == 3
    assert "reasoning_content" not in sent[0]  # the answer of the turn without tools
    assert [s["reasoning_content"] for s in sent[1:]] == [m.thinking[0].text for m in replies[1:]]


async def test_deepseek_without_its_reasoning_gets_the_real_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    # the dialect without its placeholder, to see what the service says
    omit = dataclasses.replace(DIALECTS["deepseek"], missing_reasoning="omit")
    model = OpenAIChatModel("deepseek-reasoner", client=openai_client, dialect=omit)
    agent = Agent(model, tools=TOOLS)
    result = await agent.run(QUESTION)
    data = json.loads(dump_messages(result.messages[:3]))
    data[1]["parts"] = [p for p in data[1]["parts"] if p["kind"] != "thinking"]
    emu.clear()
    with pytest.raises(ProviderError) as info:
        await agent.run(None, history=load_messages(json.dumps(data)))
    error = info.value
    assert error.status == 400 and not error.retryable and error.scope == "deepseek"
    assert error.message.startswith(
        "Missing `reasoning_content` field in the assistant message at message index 1."
    )
    assert isinstance(error.__cause__, openai.BadRequestError)
    (body,) = bodies(emu, "openai")
    assert "reasoning_content" not in assistant_turns(body)[0]  # nothing invented
    validate_history(error.messages)


@pytest.mark.parametrize("streamed", [False, True])
async def test_persisted_mid_loop_and_resumed(
    emu: Emulator, openai_client: openai.AsyncOpenAI, streamed: bool
) -> None:
    agent = Agent(make_model(CASES[2], openai_client), tools=TOOLS)
    result = await agent.run(QUESTION)
    saved = dump_messages(result.messages[:3])  # the first call and its result
    emu.clear()
    history = load_messages(saved)
    resumed = (
        await run_streamed(agent, None, history)
        if streamed
        else await agent.run(None, history=history)
    )
    assert without_ids(resumed.messages) == without_ids(result.messages)
    body = bodies(emu, "openai")[0]
    assert assistant_turns(body)[0]["reasoning_content"] == result.messages[1].thinking[0].text


async def test_other_scopes_reasoning_never_reaches_deepseek(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    foreign = [
        Message.user("Say hello."),
        Message(
            role="assistant",
            parts=(
                ThinkingBlock.signed("I will greet.", "EsigANTHROPIC" * 20),
                TextPart(text="Hello!"),
            ),
            scope="anthropic",
            model="claude-sonnet-4-5",
        ),
    ]
    model = make_model(CASES[2], openai_client)
    result = await Agent(model, tools=TOOLS).run(QUESTION, history=foreign)
    assert result.output
    for body in bodies(emu, "openai"):
        assert not contains(body, "EsigANTHROPIC") and not contains(body, "I will greet.")
        assert "reasoning_content" not in assistant_turns(body)[0]
        assert assistant_turns(body)[0]["content"] == "Hello!"


async def test_tools_with_reasoning_effort_refused_says_so(
    openai_client: openai.AsyncOpenAI,
) -> None:
    model = OpenAIChatModel(
        "gpt-5.4",
        client=openai_client,
        dialect="openai",
        thinking=OpenAIThinking(effort="high"),
    )
    with pytest.raises(ProviderError) as info:
        await Agent(model, tools=TOOLS).run(QUESTION)
    error = info.value
    assert error.status == 400 and error.message.startswith(
        "Function tools with reasoning_effort are not supported for gpt-5.4"
    )
    assert "Hint:" in str(error) and "OpenAIResponsesModel" in str(error)


async def test_a_capture_only_endpoint_that_wants_reasoning_back_gets_a_hint(
    emu: Emulator,
) -> None:
    # A base URL the adapter cannot recognise (the emulator's own client declares `openai`).
    client = emu.openai_client(base_url=emu.url + "/v1", max_retries=0)
    model = OpenAIChatModel("deepseek-reasoner", client=client)
    assert model.scope == "compatible"
    with pytest.raises(ProviderError) as info:
        await Agent(model, tools=TOOLS).run(QUESTION)
    await client.close()
    assert "reasoning_content" in info.value.message and "dialect ('deepseek'" in str(info.value)


# --- faults ----------------------------------------------------------------------------------


async def test_rate_limit_is_retried_by_the_sdk(
    emu: Emulator, retrying_openai_client: openai.AsyncOpenAI
) -> None:
    model = OpenAIChatModel("deepseek-reasoner", client=retrying_openai_client, dialect="deepseek")
    emu.inject(Fault.rate_limited(api="openai"))
    result = await Agent(model, tools=TOOLS).run(QUESTION)
    assert result.usage.requests == 3 and len(bodies(emu, "openai")) == 4


async def test_server_error_is_a_retryable_provider_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.http(500, api="openai"))
    with pytest.raises(ProviderError) as info:
        await Agent(make_model(CASES[2], openai_client), tools=TOOLS).run(QUESTION)
    error = info.value
    assert error.status == 500 and error.retryable and error.error_type == "server_error"
    assert (
        error.message == "The server had an error while processing your request. Sorry about that!"
    )
    assert isinstance(error.__cause__, openai.InternalServerError)


@pytest.mark.parametrize("case", [CASES[2], CASES[3]], ids=["deepseek", "think-tags"])
async def test_a_cut_stream_is_interrupted_with_an_unsigned_partial(
    case: Case, emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.cut(api="openai"))
    agent = Agent(make_model(case, openai_client), tools=TOOLS)
    with pytest.raises(StreamInterrupted) as info:
        await run_streamed(agent, QUESTION)
    partial = info.value.partial
    assert partial is not None and partial.scope == case.scope
    assert partial.thinking and all(b.signature is None for b in partial.thinking)
    assert not partial.tool_calls
    validate_history(info.value.messages)
    assert info.value.messages == [Message.user(QUESTION)]


async def test_an_error_in_the_stream_is_a_provider_error(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.stream_error(500, after=3, api="openai"))
    with pytest.raises(ProviderError) as info:
        await run_streamed(Agent(make_model(CASES[2], openai_client), tools=TOOLS), QUESTION)
    assert not isinstance(info.value, StreamInterrupted)
    assert info.value.retryable and info.value.error_type == "server_error"


async def test_a_malformed_event_interrupts_the_stream(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    emu.inject(Fault.malformed(after=2, api="openai"))
    with pytest.raises(StreamInterrupted):
        await run_streamed(Agent(make_model(CASES[2], openai_client), tools=TOOLS), QUESTION)


async def test_no_credential_in_messages_errors_or_repr(emu: Emulator) -> None:
    key = "sk-test-secret-0123456789abcdef"
    async with emu.openai_client(api_key=key, max_retries=0) as client:
        model = OpenAIChatModel("deepseek-reasoner", client=client, dialect="deepseek")
        result = await Agent(model, tools=TOOLS).run(QUESTION)
        assert key not in dump_messages(result.messages) and key not in repr(model)
        emu.inject(Fault.http(401, f"Incorrect API key provided: {key}.", api="openai"))
        with pytest.raises(ProviderError) as info:
            await Agent(model, tools=TOOLS).run(QUESTION)
    assert info.value.status == 401 and key not in str(info.value) and key not in info.value.message
    assert "[redacted]" in info.value.message
