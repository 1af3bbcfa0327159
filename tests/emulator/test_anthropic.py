"""The Anthropic Messages wire API through the unmodified official SDK (AsyncAnthropic)."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import anthropic
import pytest

from thinkagent.emulator import Emulator
from thinkagent.emulator.brain import MAGIC_REDACTED_PROMPT

from .tools import ANTHROPIC_TOOLS, BEDROCK_TOOLS, QUESTION, TOOL_OUTPUT

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")

BUDGET = {"type": "enabled", "budget_tokens": 2048}
ADAPTIVE = {"type": "adaptive"}
BASE: dict[str, Any] = {"model": "claude-sonnet-4-6", "max_tokens": 4096, "tools": ANTHROPIC_TOOLS}


async def ask(
    client: anthropic.AsyncAnthropic, messages: list[Any], *, stream: bool = False, **kw: Any
) -> Any:
    options = {**BASE, **kw}
    if stream:
        async with client.messages.stream(messages=messages, **options) as s:
            return await s.get_final_message()
    return await client.messages.create(messages=messages, **options)


def results_for(message: Any) -> dict[str, Any]:
    uses = [b for b in message.content if b.type == "tool_use"]
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": TOOL_OUTPUT[b.name]}
            for b in uses
        ],
    }


def dump(message: Any) -> list[dict[str, Any]]:
    return [b.model_dump(exclude_none=True) for b in message.content]


async def tool_turn(client: anthropic.AsyncAnthropic, **kw: Any) -> tuple[list[Any], Any]:
    """Turn 1 of the weather loop: returns (messages so far, the assistant reply)."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = await ask(client, messages, thinking=BUDGET, **kw)
    return messages, first


async def rejected(
    client: anthropic.AsyncAnthropic, messages: list[Any], first: Any, content: Any, **kw: Any
) -> pytest.ExceptionInfo[anthropic.BadRequestError]:
    """Replay ``content`` as the assistant turn after ``messages``, then ``first``'s tool
    results (thinking on a budget unless ``kw`` says otherwise): the request must fail."""
    replay = [*messages, {"role": "assistant", "content": content}, results_for(first)]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(client, replay, **{"thinking": BUDGET, **kw})
    return exc


def bad_request(exc: pytest.ExceptionInfo[anthropic.BadRequestError]) -> str:
    assert exc.value.status_code == 400
    body = exc.value.body
    assert isinstance(body, dict)
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert str(body["request_id"]).startswith("req_")
    return body["error"]["message"]


# --- the tool loop ---------------------------------------------------------------------


INTERLEAVED = {"anthropic-beta": "interleaved-thinking-2025-05-14"}


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(
    ("thinking", "headers", "interleaved"),
    [(BUDGET, {}, False), (BUDGET, INTERLEAVED, True), (ADAPTIVE, {}, True)],
    ids=["budget", "budget-interleaved", "adaptive"],
)
async def test_three_turn_thinking_tool_loop(
    emu: Emulator,
    anthropic_client: anthropic.AsyncAnthropic,
    stream: bool,
    thinking: dict[str, Any],
    headers: dict[str, str],
    interleaved: bool,
) -> None:
    kw: dict[str, Any] = {"stream": stream, "thinking": thinking, "extra_headers": headers}
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = await ask(anthropic_client, messages, **kw)
    assert first.stop_reason == "tool_use"
    assert [b.type for b in first.content] == ["thinking", "text", "tool_use"]
    assert QUESTION in first.content[0].thinking
    assert "get_weather" in first.content[0].thinking
    assert 200 <= len(first.content[0].signature) <= 1500
    assert (first.content[2].name, first.content[2].input) == ("get_weather", {"city": "Paris"})
    assert first.content[2].id.startswith("toolu_01")

    messages += [first.to_param(), results_for(first)]
    second = await ask(anthropic_client, messages, **kw)
    assert second.stop_reason == "tool_use"
    assert (second.content[-1].name, second.content[-1].input) == (
        "get_time",
        {"city": "Paris", "format": "24h"},
    )
    if interleaved:  # thinking after the tool result, quoting it
        assert [b.type for b in second.content] == ["thinking", "text", "tool_use"]
        assert "sunny, 21 C" in second.content[0].thinking
    else:  # a budget without the interleaved beta thinks only at the start of the turn
        assert [b.type for b in second.content] == ["text", "tool_use"]

    messages += [second.to_param(), results_for(second)]
    third = await ask(anthropic_client, messages, **kw)
    assert third.stop_reason == "end_turn"
    assert [b.type for b in third.content] == (["thinking", "text"] if interleaved else ["text"])
    assert "sunny, 21 C" in third.content[-1].text
    assert "14:05" in third.content[-1].text
    thinking_tokens = third.usage.output_tokens_details.thinking_tokens
    assert (thinking_tokens > 0) == interleaved
    assert third.usage.output_tokens > thinking_tokens

    sent = [r.body for r in emu.requests]
    assert len(sent) == 3
    assert sent[2]["messages"][1]["content"][0]["signature"] == first.content[0].signature
    assert sent[2]["messages"][3]["content"] == [
        b.model_dump(exclude_none=True) for b in second.content
    ]


async def test_stream_and_json_give_the_same_message(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    plain = await ask(anthropic_client, messages, thinking=BUDGET)
    streamed = await ask(anthropic_client, messages, stream=True, thinking=BUDGET)
    assert dump(plain) == dump(streamed)
    assert plain.id == streamed.id
    assert plain.usage.output_tokens == streamed.usage.output_tokens


async def test_stream_event_order(anthropic_client: anthropic.AsyncAnthropic) -> None:
    stream = await anthropic_client.messages.create(
        messages=[{"role": "user", "content": QUESTION}], stream=True, thinking=BUDGET, **BASE
    )
    events = [event async for event in stream]
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert events[0].message.content == []
    assert events[0].message.stop_reason is None
    start = events[1]
    assert start.type == "content_block_start"
    assert start.content_block.model_dump() == {
        "type": "thinking",
        "thinking": "",
        "signature": "",
    }
    deltas = [e.delta.type for e in events if e.type == "content_block_delta" and e.index == 0]
    assert deltas[-1] == "signature_delta"
    assert set(deltas[:-1]) == {"thinking_delta"}
    assert len(deltas) > 2
    stop_index = kinds.index("content_block_stop")
    assert events[stop_index - 1].delta.type == "signature_delta"
    tool_deltas = [
        e.delta
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "input_json_delta"
    ]
    assert "".join(d.partial_json for d in tool_deltas) == '{"city": "Paris"}'
    assert events[-2].delta.stop_reason == "tool_use"
    assert events[-2].usage.output_tokens_details.thinking_tokens > 0


async def test_same_conversation_same_reply(anthropic_client: anthropic.AsyncAnthropic) -> None:
    _, one = await tool_turn(anthropic_client)
    _, two = await tool_turn(anthropic_client)
    assert dump(one) == dump(two)


async def test_parallel_calls_for_several_subjects(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages: list[Any] = [
        {"role": "user", "content": "What's the weather in Paris and in London?"}
    ]
    reply = await ask(anthropic_client, messages, thinking=BUDGET, tools=ANTHROPIC_TOOLS[:1])
    calls = [(b.name, b.input) for b in reply.content if b.type == "tool_use"]
    assert calls == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "London"})]
    messages += [reply.to_param(), results_for(reply)]
    answer = await ask(anthropic_client, messages, thinking=BUDGET, tools=ANTHROPIC_TOOLS[:1])
    assert answer.stop_reason == "end_turn"
    assert answer.content[-1].text.count("sunny, 21 C") == 2


async def test_no_thinking_unless_asked_on_older_models(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    reply = await ask(anthropic_client, [{"role": "user", "content": "Hello there"}], tools=[])
    assert [b.type for b in reply.content] == ["text"]
    assert reply.usage.output_tokens_details.thinking_tokens == 0
    disabled = await ask(
        anthropic_client, [{"role": "user", "content": QUESTION}], thinking={"type": "disabled"}
    )
    assert [b.type for b in disabled.content] == ["text", "tool_use"]


# --- variants: redacted, omitted, adaptive-only models -----------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_magic_prompt_returns_redacted_thinking(
    anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    messages: list[Any] = [{"role": "user", "content": MAGIC_REDACTED_PROMPT}]
    first = await ask(anthropic_client, messages, stream=stream, thinking=BUDGET, tools=[])
    assert [b.type for b in first.content] == ["redacted_thinking", "text"]
    assert first.content[0].data.startswith("E")
    assert len(first.content[0].data) > 500
    messages += [first.to_param(), {"role": "user", "content": "What was that?"}]
    second = await ask(anthropic_client, messages, stream=stream, thinking=BUDGET, tools=[])
    assert second.stop_reason == "end_turn"
    # The trigger earlier in the conversation keeps the follow-up redacted (as recorded).
    assert [b.type for b in second.content] == ["redacted_thinking", "text"]


async def test_redacted_thinking_in_a_tool_loop_is_verified(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    prompt = f"{MAGIC_REDACTED_PROMPT} What's the weather in Paris?"
    messages: list[Any] = [{"role": "user", "content": prompt}]
    first = await ask(anthropic_client, messages, thinking=BUDGET)
    assert first.content[0].type == "redacted_thinking"
    assert first.stop_reason == "tool_use"
    ok = await ask(
        anthropic_client, [*messages, first.to_param(), results_for(first)], thinking=BUDGET
    )
    assert ok.stop_reason == "end_turn"
    tampered = dump(first)
    data = tampered[0]["data"]
    tampered[0]["data"] = data[:100] + ("A" if data[100] != "A" else "B") + data[101:]
    exc = await rejected(anthropic_client, messages, first, tampered)
    assert bad_request(exc) == "messages.1.content.0: Invalid `data` in `redacted_thinking` block"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_display_omitted_signed_empty_block_replays(
    anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    omitted = {**BUDGET, "display": "omitted"}
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    first = await ask(anthropic_client, messages, stream=stream, thinking=omitted)
    block = first.content[0]
    assert block.type == "thinking"
    assert block.thinking == ""
    assert len(block.signature) >= 200
    assert first.usage.output_tokens_details.thinking_tokens > 0
    second = await ask(
        anthropic_client,
        [*messages, first.to_param(), results_for(first)],
        stream=stream,
        thinking=omitted,
    )
    assert second.stop_reason == "tool_use"
    # Text put into an omitted block's empty field is ignored, not checked (TH).
    filled = dump(first)
    filled[0]["thinking"] = "I made this up."
    third = await ask(
        anthropic_client,
        [*messages, {"role": "assistant", "content": filled}, results_for(first)],
        thinking=omitted,
    )
    assert third.stop_reason == "tool_use"
    forged = dump(first)
    forged[0]["signature"] = forged[0]["signature"][:-8] + "AAAAAAAA"
    exc = await rejected(anthropic_client, messages, first, forged, thinking=omitted)
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_visible_signature_does_not_cover_an_emptied_text(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages, first = await tool_turn(anthropic_client)
    emptied = dump(first)
    emptied[0]["thinking"] = ""
    exc = await rejected(anthropic_client, messages, first, emptied)
    assert "Invalid `signature`" in bad_request(exc)


async def test_newer_models_think_adaptively_by_default(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    reply = await ask(anthropic_client, messages, model="claude-opus-5")
    assert reply.content[0].type == "thinking"
    assert reply.content[0].thinking == ""
    assert reply.content[0].signature
    summarized = await ask(
        anthropic_client,
        messages,
        model="claude-opus-5",
        thinking={**ADAPTIVE, "display": "summarized"},
    )
    assert QUESTION in summarized.content[0].thinking
    # Opus 4.7 takes adaptive thinking but does not think unless asked.
    quiet = await ask(anthropic_client, messages, model="claude-opus-4-7")
    assert quiet.content[0].type != "thinking"
    for kind in ("enabled", "disabled"):
        config = BUDGET if kind == "enabled" else {"type": "disabled"}
        with pytest.raises(anthropic.BadRequestError) as exc:
            await ask(anthropic_client, messages, model="claude-fable-5-1", thinking=config)
        assert bad_request(exc) == (
            f'"thinking.type.{kind}" is not supported for this model. '
            'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        )


async def test_effort_shapes_the_thinking(anthropic_client: anthropic.AsyncAnthropic) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    low = await ask(anthropic_client, messages, thinking=ADAPTIVE, output_config={"effort": "low"})
    high = await ask(anthropic_client, messages, thinking=ADAPTIVE, output_config={"effort": "max"})
    assert len(low.content[0].thinking) < len(high.content[0].thinking)
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client, messages, thinking=ADAPTIVE, output_config={"effort": "extreme"}
        )
    assert (
        bad_request(exc)
        == "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    )


# --- the replay rules --------------------------------------------------------------------


def flip(text: str) -> str:
    i = len(text) // 2
    return text[:i] + ("A" if text[i] != "A" else "B") + text[i + 1 :]


async def test_altered_signature_is_rejected(anthropic_client: anthropic.AsyncAnthropic) -> None:
    messages, first = await tool_turn(anthropic_client)
    bad = dump(first)
    bad[0]["signature"] = flip(bad[0]["signature"])
    exc = await rejected(anthropic_client, messages, first, bad)
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"
    assert exc.value.type == "invalid_request_error"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda b: b.update(thinking=b["thinking"] + " "),
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (
            lambda b: b.update(signature=""),
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (
            lambda b: b.update(signature=b["signature"][:-8]),
            "messages.1.content.0: Invalid `signature` in `thinking` block",
        ),
        (lambda b: b.pop("signature"), "messages.1.content.0.thinking.signature: Field required"),
    ],
    ids=["text-changed", "signature-empty", "signature-truncated", "signature-missing"],
)
async def test_modified_or_missing_signature_is_rejected(
    anthropic_client: anthropic.AsyncAnthropic, change: Any, expected: str
) -> None:
    messages, first = await tool_turn(anthropic_client)
    bad = dump(first)
    change(bad[0])
    exc = await rejected(anthropic_client, messages, first, bad)
    assert bad_request(exc) == expected


async def test_dropped_thinking_is_rejected(anthropic_client: anthropic.AsyncAnthropic) -> None:
    messages, first = await tool_turn(anthropic_client)
    dropped = [b for b in dump(first) if b["type"] != "thinking"]
    exc = await rejected(anthropic_client, messages, first, dropped)
    assert bad_request(exc) == (
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is "
        "enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of "
        "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "
        "this requirement, disable `thinking`. Please consult our documentation at "
        "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
    )
    only_tool = [b for b in dropped if b["type"] == "tool_use"]
    exc2 = await rejected(anthropic_client, messages, first, only_tool)
    assert "but found `tool_use`" in bad_request(exc2)


@pytest.mark.parametrize("thinking", [{"type": "disabled"}, None], ids=["disabled", "omitted"])
async def test_thinking_in_a_final_assistant_message_is_rejected_when_off(
    anthropic_client: anthropic.AsyncAnthropic, thinking: dict[str, Any] | None
) -> None:
    messages, first = await tool_turn(anthropic_client)
    prefill = [b for b in dump(first) if b["type"] != "tool_use"]  # thinking, text
    options = {"thinking": thinking} if thinking else {}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client, [*messages, {"role": "assistant", "content": prefill}], **options
        )
    assert bad_request(exc) == (
        "messages.1.content.0: When thinking is disabled, an `assistant` message in the final position cannot "
        "contain `thinking`. To use thinking blocks, enable `thinking` in your request."
    )


@pytest.mark.parametrize("thinking", [{"type": "disabled"}, None], ids=["disabled", "omitted"])
async def test_thinking_in_earlier_assistant_messages_is_accepted_when_off(
    anthropic_client: anthropic.AsyncAnthropic, thinking: dict[str, Any] | None
) -> None:
    """Only the final position is refused: the service strips earlier thinking."""
    messages, first = await tool_turn(anthropic_client)
    assert first.content[0].type == "thinking"
    options = {"thinking": thinking} if thinking else {}
    history = [*messages, first.to_param(), results_for(first)]
    reply = await ask(anthropic_client, history, **options)
    assert [b.type for b in reply.content] == ["text", "tool_use"]
    assert reply.content[-1].name == "get_time"


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
async def test_a_tool_result_beside_text_continues_the_tool_loop(
    anthropic_client: anthropic.AsyncAnthropic, stream: bool
) -> None:
    """A user message with a tool result does not end the turn, even with text beside it:
    the tool-use message before it is still checked."""
    messages, first = await tool_turn(anthropic_client)

    def answered(content: Any) -> list[Any]:
        results = results_for(first)
        results["content"].append({"type": "text", "text": "Also mention the rain."})
        return [*messages, {"role": "assistant", "content": content}, results]

    await ask(anthropic_client, answered(dump(first)), stream=stream, thinking=BUDGET)
    forged = dump(first)
    forged[0]["signature"] = flip(forged[0]["signature"])
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, answered(forged), stream=stream, thinking=BUDGET)
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"
    dropped = [b for b in dump(first) if b["type"] != "thinking"]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, answered(dropped), stream=stream, thinking=BUDGET)
    assert bad_request(exc).startswith(
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`."
    )


async def test_thinking_before_the_last_user_turn_is_verified_where_it_is_kept(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    """Sonnet 4.5 and earlier strip earlier turns' thinking unread; Sonnet 4.6 keeps it in
    context, so it must verify."""
    messages, first = await tool_turn(anthropic_client)
    old = dump(first)
    old[0]["signature"] = flip(old[0]["signature"])
    history = [
        *messages,
        {"role": "assistant", "content": old},
        results_for(first),
        {"role": "assistant", "content": "It is sunny, 21 C."},
        {"role": "user", "content": "Now do Lyon too."},
    ]
    reply = await ask(anthropic_client, history, thinking=BUDGET, model="claude-sonnet-4-5")
    assert reply.content[-1].input == {"city": "Lyon"}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, history, thinking=BUDGET)
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"


@pytest.mark.parametrize(
    "choice", [{"type": "any"}, {"type": "tool", "name": "get_time"}], ids=["any", "tool"]
)
async def test_forced_tool_choice_with_thinking_is_rejected(
    anthropic_client: anthropic.AsyncAnthropic, choice: dict[str, Any]
) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, messages, thinking=BUDGET, tool_choice=choice)
    assert bad_request(exc) == "Thinking may not be enabled when tool_choice forces tool use."
    forced = await ask(anthropic_client, messages, tool_choice=choice)
    assert forced.content[-1].type == "tool_use"
    if choice["type"] == "tool":
        assert forced.content[-1].name == "get_time"


async def test_a_bedrock_signature_is_valid_on_anthropic(
    emu: Emulator, bedrock_client: Any, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    response = await asyncio.to_thread(
        bedrock_client.converse,
        modelId="anthropic.claude-sonnet-4-5-20250929-v1:0",
        messages=[{"role": "user", "content": [{"text": QUESTION}]}],
        toolConfig=BEDROCK_TOOLS,
        additionalModelRequestFields={"thinking": BUDGET},
    )
    content = response["output"]["message"]["content"]
    reasoning = content[0]["reasoningContent"]["reasoningText"]
    use = content[-1]["toolUse"]
    assistant = {
        "role": "assistant",
        "content": [
            {
                "type": "thinking",
                "thinking": reasoning["text"],
                "signature": reasoning["signature"],
            },
            {
                "type": "tool_use",
                "id": use["toolUseId"],
                "name": use["name"],
                "input": use["input"],
            },
        ],
    }
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": use["toolUseId"], "content": "sunny"}],
    }
    # Claude's signatures are compatible across its platforms (TH).
    moved = await ask(
        anthropic_client,
        [{"role": "user", "content": QUESTION}, assistant, result],
        thinking=BUDGET,
    )
    assert moved.stop_reason == "tool_use"
    assistant["content"][0]["signature"] = "E" + reasoning["signature"][1:-4] + "AAAA"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [{"role": "user", "content": QUESTION}, assistant, result],
            thinking=BUDGET,
        )
    assert bad_request(exc) == "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_signatures_survive_an_emulator_restart(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages, first = await tool_turn(anthropic_client)
    history = [*messages, first.to_param(), results_for(first)]
    async with Emulator() as other:
        client = other.anthropic_client(max_retries=0)
        reply = await ask(client, history, thinking=BUDGET)
        assert reply.stop_reason == "tool_use"
        await client.close()
    async with Emulator(secret="another secret") as stranger:
        client = stranger.anthropic_client(max_retries=0)
        with pytest.raises(anthropic.BadRequestError):
            await ask(client, history, thinking=BUDGET)
        await client.close()


# --- request validation -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("thinking", "max_tokens", "expected"),
    [
        (
            {"type": "enabled", "budget_tokens": 512},
            4096,
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
        ),
        (
            {"type": "enabled", "budget_tokens": 4096},
            4096,
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
            "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
        ),
        ({"type": "enabled"}, 4096, "thinking.enabled.budget_tokens: Field required"),
        (
            {"type": "adaptive", "display": "full"},
            4096,
            "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
        ),
    ],
    ids=["budget-too-small", "budget-not-below-max", "budget-missing", "bad-display"],
)
async def test_thinking_config_validation(
    anthropic_client: anthropic.AsyncAnthropic,
    thinking: dict[str, Any],
    max_tokens: int,
    expected: str,
) -> None:
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [{"role": "user", "content": "Hi"}],
            thinking=thinking,
            max_tokens=max_tokens,
        )
    assert bad_request(exc) == expected


async def test_tool_result_and_tool_use_must_pair(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    orphan = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_01nowhere", "content": "x"}],
    }
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, orphan],
        )
    assert bad_request(exc) == (
        "messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01nowhere. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )
    messages, first = await tool_turn(anthropic_client)
    with pytest.raises(anthropic.BadRequestError) as exc2:
        await ask(
            anthropic_client,
            [*messages, first.to_param(), {"role": "user", "content": "never mind"}],
            thinking=BUDGET,
        )
    assert bad_request(exc2).startswith(
        f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {first.content[-1].id}."
    )


async def test_malformed_requests_get_native_errors(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError) as exc:
        await anthropic_client.post(
            "/v1/messages",
            cast_to=object,
            body={"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "Hi"}]},
        )
    assert bad_request(exc) == "max_tokens: Field required"
    with pytest.raises(anthropic.BadRequestError) as exc:
        await anthropic_client.post(
            "/v1/messages", cast_to=object, body={"model": "claude-sonnet-4-5", "max_tokens": 10}
        )
    assert bad_request(exc) == "messages: Field required"
    with pytest.raises(anthropic.NotFoundError) as missing:
        await ask(anthropic_client, [{"role": "user", "content": "Hi"}], model="gpt-4o")
    assert missing.value.type == "not_found_error"
    assert missing.value.body["error"]["message"] == "model: gpt-4o"


async def test_ids_of_the_wrong_type_get_native_errors(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    messages, first = await tool_turn(anthropic_client)
    answers = results_for(first)
    answers["content"][0]["tool_use_id"] = ["not", "a", "string"]
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(anthropic_client, [*messages, first.to_param(), answers], thinking=BUDGET)
    assert (
        bad_request(exc)
        == "messages.2.content.0.tool_result.tool_use_id: Input should be a valid string"
    )
    uses = dump(first)
    uses[-1]["id"] = {"id": 1}
    with pytest.raises(anthropic.BadRequestError) as exc:
        await ask(
            anthropic_client,
            [*messages, {"role": "assistant", "content": uses}, results_for(first)],
            thinking=BUDGET,
        )
    assert (
        bad_request(exc)
        == f"messages.1.content.{len(uses) - 1}.tool_use.id: Input should be a valid string"
    )


async def test_pathological_schemas_get_bounded_arguments(
    anthropic_client: anthropic.AsyncAnthropic,
) -> None:
    self_ref = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/y"}},
        "required": ["x"],
        "$defs": {"y": {"type": "array", "items": {"$ref": "#/$defs/y"}}},
    }
    huge = {
        "type": "object",
        "properties": {"x": {"type": "array", "minItems": 3_000_000, "items": {"type": "string"}}},
        "required": ["x"],
    }
    for schema in (self_ref, huge):
        started = asyncio.get_running_loop().time()
        reply = await ask(
            anthropic_client,
            [{"role": "user", "content": "Go."}],
            tools=[{"name": "go", "description": "Go.", "input_schema": schema}],
        )
        assert asyncio.get_running_loop().time() - started < 1.0
        assert reply.stop_reason == "tool_use"
        assert isinstance(reply.content[-1].input["x"], list)
    assert len(reply.content[-1].input["x"]) == 100


async def test_authentication_is_required(emu: Emulator) -> None:
    client = emu.anthropic_client(
        max_retries=0, default_headers={"Authorization": anthropic.Omit()}
    )
    client.api_key = ""
    with pytest.raises(anthropic.AuthenticationError) as exc:
        await client.post(
            "/v1/messages",
            cast_to=object,
            body={
                "model": "claude-sonnet-4-5",
                "max_tokens": 10,
                "messages": [{"role": "user", "content": "Hi"}],
            },
        )
    assert exc.value.type == "authentication_error"
    assert exc.value.body["error"]["message"] == "x-api-key header is required"  # type: ignore[index]
    await client.close()
    with_key_header = emu.anthropic_client(
        max_retries=0, default_headers={"x-api-key": "k", "Authorization": anthropic.Omit()}
    )
    reply = await ask(with_key_header, [{"role": "user", "content": "Hi"}], tools=[])
    assert reply.stop_reason == "end_turn"
    assert emu.requests[-1].auth == "x-api-key"
    await with_key_header.close()


async def test_count_tokens(anthropic_client: anthropic.AsyncAnthropic) -> None:
    short = await anthropic_client.messages.count_tokens(
        model="claude-sonnet-4-5", messages=[{"role": "user", "content": "Hi"}]
    )
    long = await anthropic_client.messages.count_tokens(
        model="claude-sonnet-4-5",
        messages=[{"role": "user", "content": QUESTION * 20}],
        tools=ANTHROPIC_TOOLS,
    )
    assert 0 < short.input_tokens < long.input_tokens


async def test_copying_a_reply_replays_byte_for_byte(
    emu: Emulator, anthropic_client: anthropic.AsyncAnthropic
) -> None:
    messages, first = await tool_turn(anthropic_client)
    replay = {"role": "assistant", "content": copy.deepcopy(dump(first))}
    await ask(anthropic_client, [*messages, replay, results_for(first)], thinking=BUDGET)
    assert emu.requests[-1].body["messages"][1]["content"] == dump(first)
