"""`OpenAIResponsesModel` on the Responses API as of December, through the official SDK against
the emulator: streamed calls whose arguments come only in the done events (LM Studio), the
`reasoning.context` setting and the mode in effect, compaction items (server-side and
`client.responses.compact`), `phase`, unreadable items and their recovery, other issuers'
items, and Bedrock Mantle as a scope of its own."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from pydantic import JsonValue

from tests.support.openai import bodies, get_weather, without_ids
from thinkagent import (
    Agent,
    ConfigurationError,
    HistoryError,
    Message,
    ModelSettings,
    OpaqueBlock,
    ProviderError,
    RunResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    dump_messages,
    load_messages,
)
from thinkagent.emulator import Emulator
from thinkagent.providers.openai import (
    BedrockMantleModel,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIThinking,
    responses_scope,
    without_reasoning,
)

API = "openai-responses"
CITIES = ["Paris", "Rome", "Oslo", "Bern", "Lima", "Kyiv"]


def prompts(count: int) -> list[str]:
    return [f"What's the weather in {city}?" for city in CITIES[:count]]


async def run(agent: Agent, prompt: str, history: list[Message], streamed: bool) -> RunResult:
    if not streamed:
        return await agent.run(prompt, history=history)
    async with agent.run_stream(prompt, history=history) as stream:
        async for _ in stream:
            pass
    return stream.result


async def loop(agent: Agent, count: int) -> tuple[list[Message], list[RunResult]]:
    """`count` turns, every other one streamed, the history persisted and loaded between."""
    saved, results = "[]", []
    for i, prompt in enumerate(prompts(count)):
        result = await run(agent, prompt, load_messages(saved), streamed=bool(i % 2))
        results.append(result)
        saved = dump_messages(result.messages)
    return load_messages(saved), results


def gpt56(client: openai.AsyncOpenAI, **kw: Any) -> OpenAIResponsesModel:
    thinking = kw.pop("thinking", OpenAIThinking(effort="medium", context="all_turns"))
    return OpenAIResponsesModel("gpt-5.6", client=client, thinking=thinking, **kw)


# --- streamed calls without argument deltas ------------------------------------------------


async def test_streamed_function_calls_without_argument_deltas_keep_their_arguments(
    emu: Emulator,
) -> None:
    """LM Studio's Responses server sends a call's arguments only in
    `response.function_call_arguments.done` and `output_item.done`: the tool gets them, the
    replay carries them, and the streamed message equals the non-streamed one."""
    calls: list[str] = []

    def weather(city: str) -> str:
        """Current weather for a city."""
        calls.append(city)
        return f"sunny in {city}, 21 C"

    client = emu.openai_client(base_url=emu.url + "/lmstudio/v1", max_retries=0)
    model = OpenAIResponsesModel("qwen/qwen3-8b", client=client)
    agent = Agent(model, tools=[weather])
    streamed = await run(agent, "What's the weather in Paris?", [], streamed=True)
    plain = await run(agent, "What's the weather in Paris?", [], streamed=False)
    assert calls == ["Paris", "Paris"]
    assert without_ids(streamed.messages) == without_ids(plain.messages)
    (call,) = streamed.messages[1].tool_calls
    assert call.arguments == '{"city": "Paris"}'
    replayed = [i for i in bodies(emu, API)[1]["input"] if i.get("type") == "function_call"]
    assert replayed[0]["arguments"] == '{"city": "Paris"}'
    # its reasoning items are unsigned reasoning text, sent back as they came
    reasoning = [i for i in bodies(emu, API)[1]["input"] if i.get("type") == "reasoning"]
    assert reasoning[0]["content"][0]["type"] == "reasoning_text"
    assert "encrypted_content" not in reasoning[0]


# --- reasoning.context, mode and effort ---------------------------------------------------


async def test_reasoning_context_is_sent_and_the_mode_in_effect_is_kept(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    asked = gpt56(openai_client, thinking=OpenAIThinking(effort="low", context="current_turn"))
    result = await Agent(asked).run("Why is the sky blue?")
    assert bodies(emu, API)[0]["reasoning"] == {"effort": "low", "context": "current_turn"}
    assert (result.messages[-1].provider_details or {})["reasoning_context"] == "current_turn"
    # the model's default (all_turns on gpt-5.6), read from the response
    default = await Agent(gpt56(openai_client, thinking=OpenAIThinking(effort="low"))).run("Hi")
    assert (default.messages[-1].provider_details or {})["reasoning_context"] == "all_turns"
    older = await Agent(
        OpenAIResponsesModel("gpt-5.2", client=openai_client, thinking=OpenAIThinking(effort="low"))
    ).run("Hi")
    assert (older.messages[-1].provider_details or {})["reasoning_context"] == "current_turn"


async def test_reasoning_mode_and_the_new_efforts_reach_the_wire(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    pro = gpt56(openai_client, thinking=OpenAIThinking(effort="max", mode="pro"))
    await Agent(pro).run("Hi")
    assert bodies(emu, API)[-1]["reasoning"] == {"effort": "max", "mode": "pro"}
    knob = ModelSettings(thinking="max")
    await Agent(gpt56(openai_client), model_settings=knob).run("Hi")
    assert bodies(emu, API)[-1]["reasoning"]["effort"] == "max"
    older = OpenAIResponsesModel("gpt-5.2", client=openai_client)
    result = await Agent(older, model_settings=knob).run("Hi")
    assert bodies(emu, API)[-1]["reasoning"]["effort"] == "xhigh"
    assert result.warnings == []


def test_the_reasoning_settings_are_checked_when_built() -> None:
    with pytest.raises(ConfigurationError, match="context must be one of"):
        OpenAIThinking(context="every_turn")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="mode must be"):
        OpenAIThinking(mode="")
    client = openai.AsyncOpenAI(api_key="k", base_url="https://api.deepseek.com")
    for field in ("context", "mode"):
        with pytest.raises(ConfigurationError, match=f"no reasoning {field}"):
            OpenAIChatModel(
                "deepseek-v4-pro", client=client, thinking=OpenAIThinking(**{field: "auto"})
            )
    with pytest.raises(ConfigurationError, match="compact_threshold"):
        OpenAIResponsesModel("gpt-5.6", client=client, compact_threshold=0)


# --- compaction ----------------------------------------------------------------------------


def compaction_items(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in body["input"] if i.get("type") == "compaction"]


async def test_a_six_turn_all_turns_loop_compacted_on_turn_four(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """gpt-5.6 with `reasoning.context="all_turns"`: compaction on turn 4; every later request
    starts at the compaction item, byte-exact, with every reasoning item after it, and the
    emulator accepts each one."""
    model = gpt56(openai_client, compact_threshold=410)
    history, results = await loop(Agent(model, tools=[get_weather]), 6)
    assert all("sunny in" in r.output for r in results)
    requests = bodies(emu, API)
    assert len(requests) == 12
    assert all(
        r["context_management"] == [{"type": "compaction", "compact_threshold": 410}]
        for r in requests
    )
    compactions = [p for m in history for p in m.parts if isinstance(p, OpaqueBlock)]
    assert len(compactions) == 1
    (compaction,) = compactions
    assert compaction.type == "compaction" and compaction.data["id"].startswith("cmp_")
    where = next(i for i, m in enumerate(history) if compaction in m.parts)
    assert where == 13  # turn 4's first response: compacted before it answered
    assert all(compaction_items(r) == [] for r in requests[:7])
    blocks = {b.id: b for m in history for b in m.thinking}
    for body in requests[7:]:
        items = body["input"]
        assert items[0] == compaction.data  # exactly as it came, and nothing before it
        sent = [i for i in items if i.get("type") == "reasoning"]
        later = [b for m in history[where:] for b in m.thinking]
        assert [i["id"] for i in sent] == [b.id for b in later][: len(sent)]
        for item in sent:
            assert item["encrypted_content"] == blocks[item["id"]].signature
    last = requests[-1]["input"]
    reasoning_after = [b for m in history[where:-1] for b in m.thinking]
    assert len([i for i in last if i.get("type") == "reasoning"]) == len(reasoning_after)
    # the reasoning context the service used is kept with the conversation
    assert all(
        (m.provider_details or {}).get("reasoning_context") == "all_turns"
        for m in history
        if m.role == "assistant"
    )


async def test_a_compacted_stream_equals_the_parsed_response(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    agent = Agent(gpt56(openai_client, compact_threshold=10), tools=[get_weather])
    streamed = await run(agent, "What's the weather in Paris?", [], streamed=True)
    plain = await run(agent, "What's the weather in Paris?", [], streamed=False)
    assert without_ids(streamed.messages) == without_ids(plain.messages)
    assert isinstance(streamed.messages[1].parts[0], OpaqueBlock)


async def test_compact_keeps_the_history_and_sends_only_the_compacted_window(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = gpt56(openai_client)
    agent = Agent(model, tools=[get_weather])
    history, _ = await loop(agent, 2)
    compacted = await model.compact(history)
    assert compacted[:-1] == history[:-1]  # nothing recorded changes
    assert compacted[-1].parts[: len(history[-1].parts)] == history[-1].parts
    window = compacted[-1].parts[len(history[-1].parts) :]
    assert [p.type for p in window if isinstance(p, OpaqueBlock)] == [
        "message",
        "message",
        "compaction",
    ]
    assert emu.requests[-1].path == "/v1/responses/compact"
    emu.clear()
    result = await agent.run("What's the weather in Oslo?", history=compacted)
    assert "sunny in Oslo" in result.output
    first = bodies(emu, API)[0]["input"]
    assert first[:3] == [p.data for p in window if isinstance(p, OpaqueBlock)]
    assert first[3] == {"role": "user", "content": "What's the weather in Oslo?"}
    # the history ended with a user message: the window is an assistant message of its own
    pending = [*history, Message.user("And in Bern?")]
    with_window = await model.compact(pending)
    assert with_window[:-1] == pending and with_window[-1].scope == model.scope
    foreign = [Message.user("Hi"), Message(role="assistant", parts=(TextPart(text="Hi"),))]
    with pytest.raises(HistoryError, match="last message is from scope None"):
        await model.compact(foreign)


async def test_a_compaction_item_goes_back_only_to_its_issuer(
    emu: Emulator, openai_client: openai.AsyncOpenAI, azure_client: openai.AsyncAzureOpenAI
) -> None:
    """Another issuer's compaction (and reasoning) items are left out, with a warning, and the
    conversation they stood for is sent in full."""
    history, _ = await loop(Agent(gpt56(openai_client, compact_threshold=10)), 2)
    assert any(isinstance(p, OpaqueBlock) for m in history for p in m.parts)
    emu.clear()
    azure = OpenAIResponsesModel("my-gpt-5", client=azure_client)
    result = await Agent(azure).run("And tomorrow?", history=history)
    assert result.output
    assert [w.code for w in result.warnings] == ["foreign_items_dropped"]
    items = bodies(emu, API)[0]["input"]
    assert compaction_items(bodies(emu, API)[0]) == []
    assert not any(i.get("type") == "reasoning" for i in items)
    assert items[0] == {"role": "user", "content": prompts(1)[0]}


# --- unreadable items and the recovery ----------------------------------------------------


async def test_an_altered_compaction_item_is_named_with_what_to_do(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    model = gpt56(openai_client, compact_threshold=10)
    agent = Agent(model, tools=[get_weather])
    first = await agent.run("What's the weather in Paris?")
    data = json.loads(dump_messages(first.messages))
    block = data[-1]["parts"][0]  # the latest compaction item: the one that is sent
    assert block["type"] == "compaction"
    token = block["data"]["encrypted_content"]
    block["data"]["encrypted_content"] = (
        token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    )
    altered = load_messages(json.dumps(data))
    with pytest.raises(ProviderError) as caught:
        await agent.run("And in Rome?", history=altered)
    error = caught.value
    assert error.status == 400 and isinstance(error.__cause__, openai.BadRequestError)
    assert error.__cause__.code == "invalid_encrypted_content"
    item = block["data"]["id"]
    assert f"The encrypted content for item {item} could not be verified" in error.message
    assert f"compaction item {item}" in str(error)
    assert "without_reasoning('openai-responses@localhost')" in str(error)
    # the documented recovery: the same history without this scope's reasoning and compaction
    recovered = Agent(
        model, tools=[get_weather], history_processors=[without_reasoning(model.scope)]
    )
    result = await recovered.run("And in Rome?", history=altered)
    assert "sunny in Rome" in result.output
    assert result.messages[: len(altered)] == altered  # what is kept is untouched
    items = bodies(emu, API)[-1]["input"]
    assert items[0] == {"role": "user", "content": "What's the weather in Paris?"}
    assert all(i.get("type") not in ("compaction", "reasoning") for i in items[:5])


async def test_an_item_not_found_is_named_with_what_to_do(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """Stored items are found by id; once the service no longer has them the error names the
    item and the recovery."""
    model = OpenAIResponsesModel("gpt-5", client=openai_client, store=True)
    agent = Agent(model, tools=[get_weather])
    first = await agent.run("What's the weather in Paris?")
    unsigned = [
        m.model_copy(
            update={
                "parts": tuple(
                    p.model_copy(update={"signature": None}) if isinstance(p, ThinkingBlock) else p
                    for p in m.parts
                )
            }
        )
        for m in first.messages
    ]
    emu.reset()  # the service forgot its stored items
    with pytest.raises(ProviderError) as caught:
        await agent.run("And in Rome?", history=unsigned)
    rs_id = unsigned[1].thinking[0].id
    assert caught.value.status == 404
    assert f"Item with id '{rs_id}' not found." in caught.value.message
    assert f"reasoning item {rs_id}" in str(caught.value)
    recovered = Agent(
        model, tools=[get_weather], history_processors=[without_reasoning(model.scope)]
    )
    assert (await recovered.run("And in Rome?", history=unsigned)).output


async def test_all_turns_says_when_a_processor_removed_reasoning(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    """With `reasoning.context="all_turns"` the model sees every earlier reasoning item: one a
    history processor removed is said in a warning (the items after it go without it)."""

    def strip_thinking(messages: list[Message]) -> list[Message]:
        return [
            m.model_copy(
                update={"parts": tuple(p for p in m.parts if not isinstance(p, ThinkingBlock))}
            )
            if m.role == "assistant"
            else m
            for m in messages
        ]

    history, _ = await loop(Agent(gpt56(openai_client), tools=[get_weather]), 1)
    trimming = Agent(gpt56(openai_client), tools=[get_weather], history_processors=[strip_thinking])
    result = await trimming.run("What's the weather in Rome?", history=history)
    assert "reasoning_context_trimmed" in [w.code for w in result.warnings]
    warning = next(w for w in result.warnings if w.code == "reasoning_context_trimmed")
    assert all(b.id in warning.message for b in history[1].thinking)
    # a model that sees only the current turn's reasoning: nothing to say
    current = OpenAIResponsesModel(
        "gpt-5.2", client=openai_client, thinking=OpenAIThinking(effort="low")
    )
    history, _ = await loop(Agent(current, tools=[get_weather]), 1)
    quiet = Agent(current, tools=[get_weather], history_processors=[strip_thinking])
    result = await quiet.run("What's the weather in Rome?", history=history)
    assert "reasoning_context_trimmed" not in [w.code for w in result.warnings]


async def test_phase_goes_back_on_every_assistant_message(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    history, _ = await loop(Agent(gpt56(openai_client), tools=[get_weather]), 3)
    texts = [
        p for m in history for p in m.parts if isinstance(p, TextPart) and m.role == "assistant"
    ]
    phases = [(p.provider_details or {}).get("phase") for p in texts]
    assert set(phases) == {"commentary", "final_answer"}
    last = bodies(emu, API)[-1]["input"]  # every assistant message but the last answer
    assert [i.get("phase") for i in last if i.get("role") == "assistant"] == phases[:-1]


# --- Bedrock Mantle --------------------------------------------------------------------------


async def test_bedrock_mantle_is_a_responses_scope_of_its_own(
    emu: Emulator, openai_client: openai.AsyncOpenAI
) -> None:
    mantle = BedrockMantleModel(
        "openai.gpt-oss-120b", client=emu.mantle_client(max_retries=0), region="us-east-1"
    )
    assert mantle.scope == "bedrock-mantle@us-east-1" and mantle.region == "us-east-1"
    agent = Agent(mantle, tools=[get_weather])
    history, results = await loop(agent, 2)
    assert all("sunny in" in r.output for r in results)
    assert all(m.scope == mantle.scope for m in history if m.role == "assistant")
    assert {r.path for r in emu.requests} == {"/mantle/v1/responses"}
    signed = [i for i in bodies(emu, API)[-1]["input"] if i.get("type") == "reasoning"]
    assert signed and all(i["encrypted_content"].startswith("gAAAAA") for i in signed)
    # Bedrock's items are not OpenAI's: another scope drops them (and the other way round)
    emu.clear()
    moved = await Agent(gpt56(openai_client)).run("Thanks!", history=history)
    assert [w.code for w in moved.warnings] == ["foreign_items_dropped"]
    assert not any(i.get("type") == "reasoning" for i in bodies(emu, API)[0]["input"])


def test_bedrock_mantle_builds_its_client_from_the_bedrock_api_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-0123456789")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    model = BedrockMantleModel("openai.gpt-oss-120b")
    assert str(model.client.base_url) == "https://bedrock-mantle.eu-west-1.api.aws/v1/"
    assert model.client.api_key == "bedrock-api-key-0123456789"
    assert model.scope == "bedrock-mantle@eu-west-1"
    assert responses_scope(model.client) == model.scope
    given = openai.AsyncOpenAI(api_key="k", base_url="https://bedrock-mantle.us-west-2.api.aws/v1")
    assert BedrockMantleModel("m", client=given).scope == "bedrock-mantle@us-west-2"
    assert OpenAIResponsesModel("m", client=given).scope == "bedrock-mantle@us-west-2"
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    with pytest.raises(ConfigurationError, match="AWS_BEARER_TOKEN_BEDROCK"):
        BedrockMantleModel("openai.gpt-oss-120b")
    monkeypatch.delenv("AWS_REGION")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ConfigurationError, match="no AWS region"):
        BedrockMantleModel("openai.gpt-oss-120b")


def test_a_compaction_window_is_kept_and_loaded_byte_exact() -> None:
    data: dict[str, JsonValue] = {
        "id": "cmp_1",
        "type": "compaction",
        "encrypted_content": "gAAAAAB" + "x" * 40,
    }
    message = Message(
        role="assistant",
        parts=(OpaqueBlock.of(data), ToolCall(id="c", name="f", arguments="{}")),
        scope="openai-responses",
    )
    assert load_messages(dump_messages([message]))[0] == message


def test_without_reasoning_changes_only_what_is_sent_of_its_scope() -> None:
    scope = "openai-responses"
    block = ThinkingBlock.signed("why", "gAAAAAB" + "y" * 20, id="rs_1")
    window = OpaqueBlock(
        type="compaction",
        data={"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAAB"},
        provider_details={"compacted": "resp_1"},
    )
    history = [
        Message.user("Hi"),
        Message(role="assistant", parts=(block, TextPart(text="Hello")), scope=scope),
        Message.user("Again"),
        Message(role="assistant", parts=(window,), scope=scope),
        Message.user("More"),
        Message(role="assistant", parts=(block, TextPart(text="Yes")), scope="azure-responses"),
    ]
    sent = without_reasoning(scope)(list(history))
    assert sent[1].parts == (TextPart(text="Hello"),)
    assert len(sent) == 5  # the message of nothing but a compacted window is left out
    assert sent[-1] == history[-1]  # another scope's message is its adapter's business
