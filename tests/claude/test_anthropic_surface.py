"""Today's Claude response surface on the Messages API: server-side fallback (the `fallback`
block kept in its place, each thinking block's signer, the block moved or dropped refused
before sending), refusals (`refusal` with its `stop_details`, the credit-token retry, trailing
thinking left out of a prefill), a paused turn continued by the agent, compaction blocks with
`encrypted_content` or `content: null`, the blocks carried untouched (`advisor_tool_result`,
`mcp_tool_listing`, `tool_use.caller`), and the `fallbacks`, `speed` and `task_budget` options.

Through the emulator where it serves the shape; where it does not (a failed compaction, the
advisor and MCP blocks), through the SDK's own parsing of the documented shapes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic import types as wire
from anthropic._models import construct_type

from tests.support.claude import run, without_cache, without_ids
from thinkagent import (
    Agent,
    ConfigurationError,
    HistoryError,
    MaxTurnsExceeded,
    Message,
    ModelRequest,
    OpaqueBlock,
    TextPart,
    ThinkingBlock,
    ToolCall,
    dump_messages,
    load_messages,
    validate_history,
)
from thinkagent.emulator import Emulator, Reply
from thinkagent.providers.claude import AnthropicModel, ClaudeRefusal, thinking_signers

OPUS = "claude-opus-5-5"


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def requests(emu: Emulator) -> list[Any]:
    return [r for r in emu.requests if r.api == "anthropic"]


def refusal(text: str = "Let me") -> Reply:
    return Reply(thinking="This looks risky.", text=text, stop_reason="refusal", refusal="cyber")


# --- server-side fallback ----------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_server_side_fallback_turn_round_trips_in_place(
    emu: Emulator, anthropic_client: Any, streamed: bool
) -> None:
    emu.script("anthropic", [refusal(), Reply(thinking="I can answer.", text="It is sunny.")])
    model = AnthropicModel(
        OPUS, client=anthropic_client, scope="anthropic", fallbacks=["claude-opus-4-8"]
    )
    agent = Agent(model, tools=[get_weather])
    result = await run(agent, "What's the weather in Paris?", streamed=streamed)
    first = requests(emu)[0]
    assert first.body["fallbacks"] == [{"model": "claude-opus-4-8"}]
    assert "server-side-fallback-2026-06-01" in first.headers["anthropic-beta"]
    turn = result.new_messages[1]
    assert [p.kind for p in turn.parts] == ["thinking", "text", "opaque", "thinking", "text"]
    seam = turn.parts[2]
    assert isinstance(seam, OpaqueBlock) and seam.type == "fallback"
    assert seam.data["to"] == {"model": "claude-opus-4-8"}
    assert thinking_signers(turn) == [OPUS, "claude-opus-4-8"]
    assert (turn.provider_details or {})["fallback_blocks"] == [2]
    # the next request sends the turn back as it came: the block in its place
    later = await agent.run("And in Rome?", history=load_messages(dump_messages(result.messages)))
    sent = requests(emu)[1].body["messages"][1]["content"]
    assert [b["type"] for b in sent] == ["thinking", "text", "fallback", "thinking", "text"]
    assert sent[2] == seam.data
    assert later.output


async def test_a_fallback_block_moved_or_dropped_is_a_history_error_before_sending(
    emu: Emulator, anthropic_client: Any
) -> None:
    emu.script("anthropic", [refusal(), Reply(thinking="I can answer.", text="It is sunny.")])
    model = AnthropicModel(OPUS, client=anthropic_client, scope="anthropic", fallbacks="default")
    agent = Agent(model, tools=[get_weather])
    result = await agent.run("What's the weather in Paris?")
    assert "server-side-fallback-2026-07-01" in requests(emu)[0].headers["anthropic-beta"]
    assert requests(emu)[0].body["fallbacks"] == "default"
    turn = result.messages[1]
    parts = list(turn.parts)
    moved = [*result.messages]
    moved[1] = turn.model_copy(update={"parts": (parts[0], parts[2], parts[1], *parts[3:])})
    dropped = [*result.messages]
    dropped[1] = turn.model_copy(update={"parts": (*parts[:2], *parts[3:])})
    emu.clear()
    for history, at in ((moved, 1), (dropped, 2)):
        with pytest.raises(HistoryError, match="fallback block was moved or left out") as caught:
            await agent.run("And in Rome?", history=history)
        assert (caught.value.message_index, caught.value.part_index) == (1, at)
    assert emu.requests == []


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_a_refusal_is_its_finish_reason_with_its_details_and_a_retry(
    emu: Emulator, anthropic_client: Any, streamed: bool
) -> None:
    emu.script("anthropic", [refusal()])
    credit = {"anthropic-beta": "fallback-credit-2026-07-01"}
    model = AnthropicModel(OPUS, client=anthropic_client, extra_headers=credit)
    result = await run(Agent(model), "Tell me something risky.", streamed=streamed)
    refused = result.messages[-1]
    assert refused.finish_reason == "refusal"
    details = ClaudeRefusal.of(refused)
    assert details is not None
    assert (details.category, details.prefill_claim) == ("cyber", True)
    assert details.explanation and details.credit_token
    assert ClaudeRefusal.of(result.messages[0]) is None
    # the retry on another model, with the token: the same body...
    other = AnthropicModel("claude-fable-5-1", client=anthropic_client)
    settings = details.retry_settings(best_effort=True)
    retried = await Agent(other, model_settings=settings).run(None, history=result.messages[:-1])
    body = requests(emu)[-1].body
    assert body["fallback_credit_token"] == {"token": details.credit_token, "mode": "best_effort"}
    assert retried.output
    # ...or the partial turn as a prefill, its trailing whitespace and thinking left out
    prefill = details.retry_history(result.messages)
    assert [p.kind for p in prefill[-1].parts] == ["thinking", "text"]
    assert prefill[-1].parts[-1] == TextPart(text="Let me")
    answer = await other.request(ModelRequest(messages=prefill, settings=details.retry_settings()))
    sent = requests(emu)[-1]
    assert sent.body["messages"][-1]["content"][-1] == {"type": "text", "text": "Let me"}
    assert "fallback-credit-2026-07-01" in sent.headers["anthropic-beta"]
    assert answer.message.role == "assistant"


async def test_trailing_thinking_is_left_out_of_a_prefill(
    emu: Emulator, anthropic_client: Any
) -> None:
    emu.script("anthropic", [refusal(text="")])
    model = AnthropicModel(OPUS, client=anthropic_client)
    refused = (await model.request(ModelRequest(messages=[Message.user("Risky?")]))).message
    assert [p.kind for p in refused.parts] == ["thinking"]
    history = [Message.user("Risky?"), refused]
    assert without_cache(model.build_messages(history)) == [
        {"role": "user", "content": [{"type": "text", "text": "Risky?"}]}
    ]
    answer = await model.request(ModelRequest(messages=history))
    assert answer.message.finish_reason == "stop"


# --- a paused turn ---------------------------------------------------------------------------


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_the_agent_continues_a_paused_turn_as_it_is(
    emu: Emulator, anthropic_client: Any, streamed: bool
) -> None:
    emu.script("anthropic", [Reply(text="Still searching.", stop_reason="pause_turn")])
    model = AnthropicModel(OPUS, client=anthropic_client, scope="anthropic")
    result = await run(
        Agent(model, tools=[get_weather]), "What's the weather in Paris?", streamed=streamed
    )
    paused, continued = result.new_messages[1], result.new_messages[2]
    assert paused.finish_reason == "pause_turn" and continued.role == "assistant"
    assert "sunny in Paris" in result.output
    validate_history(result.messages)
    second = requests(emu)[1].body["messages"]
    assert second[-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Still searching."}],
    }


async def test_a_turn_paused_past_max_turns_stops_the_run(
    emu: Emulator, anthropic_client: Any
) -> None:
    emu.script(
        "anthropic", [Reply(text=f"Searching {i}.", stop_reason="pause_turn") for i in range(3)]
    )
    model = AnthropicModel(OPUS, client=anthropic_client)
    with pytest.raises(MaxTurnsExceeded, match="still paused after max_turns=2"):
        await Agent(model, max_turns=2).run("Search the news.")


# --- blocks carried untouched ------------------------------------------------------------------


def sdk_message(content: list[dict[str, Any]], **kw: Any) -> wire.Message:
    body = {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": OPUS,
        "content": content,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 40},
        **kw,
    }
    return construct_type(type_=wire.Message, value=body)  # how the SDK reads a response


FAILED_COMPACTION = {"type": "compaction", "content": None, "encrypted_content": "RW5jcnlwdGVk"}
ADVISOR = {
    "type": "advisor_tool_result",
    "tool_use_id": "srvtoolu_01",
    "content": {"type": "advisor_redacted_result", "encrypted_content": "QWR2aWNl"},
}
LISTING = {
    "type": "mcp_tool_listing",
    "mcp_server_name": "docs",
    "tools": [{"name": "search", "input_schema": {"type": "object"}}],
}
CALLED = {
    "type": "tool_use",
    "id": "toolu_01",
    "name": "get_weather",
    "input": {"city": "Paris"},
    "caller": {"type": "code_execution_20260120", "tool_id": "srvtoolu_02"},
}


def test_provider_blocks_are_kept_and_sent_back_byte_for_byte() -> None:
    model = AnthropicModel(OPUS, client=object(), scope="anthropic")  # type: ignore[arg-type]
    blocks = [
        LISTING,
        FAILED_COMPACTION,
        {"type": "thinking", "thinking": "Hm.", "signature": "c2ln"},
        ADVISOR,
        CALLED,
    ]
    message = model.parse_response(sdk_message(blocks, stop_reason="tool_use")).message
    assert [p.kind for p in message.parts] == [
        "opaque",
        "opaque",
        "thinking",
        "opaque",
        "tool_call",
    ]
    call = message.tool_calls[0]
    assert (call.provider_details or {})["caller"] == CALLED["caller"]
    kept = load_messages(dump_messages([Message.user("Q"), message]))
    assert kept[1] == message
    results = Message.user_results(
        [
            __import__("thinkagent").ToolResult(
                call_id="toolu_01", name="get_weather", content="sunny"
            )
        ]
    )
    sent = model.build_messages([*kept, results])[1]["content"]
    assert sent == blocks


def test_a_compaction_block_with_empty_content_is_a_history_error() -> None:
    model = AnthropicModel(OPUS, client=object(), scope="anthropic")  # type: ignore[arg-type]
    empty = OpaqueBlock.of({"type": "compaction", "content": "", "encrypted_content": "RQ=="})
    turn = Message(
        role="assistant", parts=(empty, TextPart(text="Hi")), scope="anthropic", model=OPUS
    )
    with pytest.raises(HistoryError, match="compaction block with empty content") as caught:
        model.build_messages([Message.user("Q"), turn, Message.user("More")])
    assert (caught.value.message_index, caught.value.part_index) == (1, 0)


def test_a_streamed_failed_compaction_equals_the_whole_one() -> None:
    from thinkagent.providers.claude.anthropic import _Stream  # pyright: ignore[reportPrivateUsage]

    model = AnthropicModel(OPUS, client=object(), scope="anthropic")  # type: ignore[arg-type]
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**sdk_message([]).model_dump(), "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "compaction", "content": ""},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {
                "type": "compaction_delta",
                "content": None,
                "encrypted_content": "RW5jcnlwdGVk",
            },
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {**CALLED, "input": {}}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 40},
        },
        {"type": "message_stop"},
    ]
    stream = _Stream("anthropic")
    for event in events:
        stream.fold(construct_type(type_=wire.RawMessageStreamEvent, value=event))
    prepared = model._prepare(ModelRequest(messages=[Message.user("Q")]), ())  # pyright: ignore[reportPrivateUsage]
    streamed = stream.message(model, prepared, OPUS)
    whole = model.parse_response(
        sdk_message([FAILED_COMPACTION, CALLED], stop_reason="tool_use")
    ).message
    assert without_ids([streamed])[0].parts == without_ids([whole])[0].parts
    assert streamed.parts[0] == OpaqueBlock.of(FAILED_COMPACTION)


# --- options ---------------------------------------------------------------------------------


async def test_speed_and_task_budget_go_with_their_betas(
    emu: Emulator, anthropic_client: Any
) -> None:
    model = AnthropicModel(OPUS, client=anthropic_client, speed="fast", task_budget=50_000)
    await model.request(ModelRequest(messages=[Message.user("Hi")]))
    sent = requests(emu)[0]
    assert sent.body["speed"] == "fast"
    assert sent.body["output_config"]["task_budget"] == {"type": "tokens", "total": 50_000}
    betas = sent.headers["anthropic-beta"].split(",")
    assert {"fast-mode-2026-02-01", "task-budgets-2026-03-13"} <= set(betas)
    assert (model.speed, model.task_budget, model.fallbacks) == ("fast", 50_000, None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"fallbacks": ["claude-opus-4-8"] * 4}, "fallbacks holds 1 to 3 models"),
        ({"fallbacks": []}, "fallbacks holds 1 to 3 models"),
        ({"fallbacks": [{"model": "claude-opus-4-8", "top_k": 3}]}, "not 'top_k'"),
        ({"fallbacks": [{"max_tokens": 100}]}, "a fallbacks entry needs a model"),
        ({"fallbacks": "all"}, "a list of models or 'default'"),
        ({"speed": "slow"}, "speed must be 'standard' or 'fast'"),
        ({"task_budget": 0}, "task_budget must be a positive number of tokens"),
    ],
)
def test_bad_options_are_configuration_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        AnthropicModel(OPUS, client=object(), **options)  # type: ignore[arg-type]


def test_each_thinking_block_knows_its_signer() -> None:
    seam = OpaqueBlock.of(
        {
            "type": "fallback",
            "from": {"model": OPUS},
            "to": {"model": "claude-opus-4-8"},
            "trigger": None,
        }
    )
    turn = Message(
        role="assistant",
        parts=(
            ThinkingBlock.signed("a", "s1"),
            seam,
            ThinkingBlock.signed("b", "s2"),
            ToolCall(id="t", name="n"),
        ),
        model=OPUS,
    )
    assert thinking_signers(turn) == [OPUS, "claude-opus-4-8"]
    assert json.loads(dump_messages([turn]))[0]["parts"][1]["data"]["trigger"] is None
