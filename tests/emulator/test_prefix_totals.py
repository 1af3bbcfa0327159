"""The input tokens of every prefix of a request, as prompt caching reads them: counted in one
pass over the OpenAI wires' items (`ConversationBuilder`) and over a Claude message's blocks
(`TurnTokens`), they are exactly what rebuilding the conversation (or the turn) of each prefix
and counting it again gives (`prefix_tokens`), token for token, so the cached-token figures do
not depend on how they are computed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkagent.emulator.brain import ConversationBuilder, prefix_tokens
from thinkagent.emulator.claude.rules import _neutral as claude_turn  # pyright: ignore[reportPrivateUsage]
from thinkagent.emulator.model import Call, CallResult, Conversation, ToolSpec, Turn
from thinkagent.emulator.openai.chat import _conversation as chat_conversation  # pyright: ignore[reportPrivateUsage]
from thinkagent.emulator.openai.responses import _conversation as responses_conversation  # pyright: ignore[reportPrivateUsage]
from thinkagent.emulator.openai.rules import OpenAIProfile, openai_profile

TOOLS = (
    ToolSpec(
        "get_weather",
        "Current weather for a city.",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    ToolSpec("get_time", "The local time in a city."),
)
DOCUMENTS = frozenset({"application/pdf"})
COMPACTED = (
    Turn("user", text="What's the weather in Paris?"),
    Turn("assistant", thinking="I will look it up.", calls=(Call("c0", "get_weather", {"a": 1}),)),
    Turn("user", results=(CallResult("c0", "sunny, 21 C"),)),
    Turn("assistant", text="Sunny in Paris."),
)


def _model(name: str) -> OpenAIProfile:
    model = openai_profile(name)
    assert model is not None
    return model


def check_responses(
    items: Sequence[Mapping[str, Any]],
    texts: Mapping[int, str],
    instructions: str,
    compacted: Mapping[int, tuple[Turn, ...]],
) -> None:
    conversation, totals = responses_conversation(items, texts, instructions, TOOLS, compacted)
    rebuilt = [
        sum(
            prefix_tokens(
                responses_conversation(items[:k], texts, instructions, TOOLS, compacted)[0]
            )
        )
        for k in range(len(items) + 1)
    ]
    assert list(totals) == rebuilt
    assert totals[-1] == sum(prefix_tokens(conversation))


def check_chat(model: OpenAIProfile, messages: Sequence[Mapping[str, Any]]) -> None:
    conversation, totals = chat_conversation(model, messages, TOOLS)
    rebuilt = [
        sum(prefix_tokens(chat_conversation(model, messages[:k], TOOLS)[0]))
        for k in range(len(messages) + 1)
    ]
    assert list(totals) == rebuilt
    assert totals[-1] == sum(prefix_tokens(conversation))


def _call(call_id: str, city: str = "Paris") -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "get_weather",
        "arguments": json.dumps({"city": city}),
    }


def _said(role: str, text: str) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}


def test_responses_totals_are_the_rebuilt_prefixes_totals() -> None:
    items: list[dict[str, Any]] = [
        {"type": "message", "role": "developer", "content": "Answer briefly."},
        {"type": "message", "role": "user", "content": "What's the weather in Paris and Rome?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        _call("c1"),
        _call("c2", "Rome"),  # parallel calls: one assistant turn
        {"type": "function_call_output", "call_id": "c1", "output": "sunny, 21 C"},
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": [{"type": "input_text", "text": "rain"}],
        },
        {"type": "reasoning", "id": "rs_2", "summary": []},
        _said("assistant", "Sunny in Paris"),
        _said("assistant", "rain in Rome."),  # consecutive assistant items: one turn, joined
        _said("assistant", ""),
        {"type": "web_search_call", "id": "ws_1", "action": {"query": "Rome weather"}},
        {"type": "mcp_list_tools", "server_label": "maps", "tools": []},
        {"type": "message", "role": "system", "content": "Use Celsius."},  # mid-conversation
        {"type": "message", "role": "user", "content": "And tomorrow? Ça ira, n'est-ce pas ?"},
        {"type": "mcp_approval_response", "approval_request_id": "mcpr_1", "approve": True},
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "sealed"},
        _call("c3"),  # merges into the compacted conversation's last (assistant) turn
        {"type": "message", "role": "developer", "content": ""},
        {"type": "function_call_output", "call_id": "c3", "output": "cloudy"},
        {"type": "message", "role": "developer", "content": "Be kind."},
        {"type": "function_call_output", "call_id": "c0", "output": "late"},  # same results turn
        {"type": "reasoning", "id": "rs_3", "summary": []},  # no text: thinking left out
        _said("assistant", "Cloudy tomorrow."),
        {"type": "compaction", "id": "cmp_2", "encrypted_content": "sealed"},
        _said("user", "Thanks!"),
    ]
    texts = {2: "I will call get_weather twice.", 7: "Both results are in: " + "x" * 37}
    compacted = {16: COMPACTED, 24: COMPACTED[:1]}
    check_responses(items, texts, "You are a weather assistant.", compacted)
    check_responses(items, texts, "", compacted)


def test_chat_totals_are_the_rebuilt_prefixes_totals() -> None:
    calls = [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "id": "c2",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
        },
    ]
    messages: list[dict[str, Any]] = [
        {"role": "developer", "content": "Answer briefly."},
        {"role": "system", "content": ""},
        {"role": "user", "content": [{"type": "text", "text": "Weather in Paris and Rome?"}]},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Two calls.",
            "tool_calls": calls,
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny, 21 C"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "rain"}]},
        {"role": "assistant", "content": "<think>Both in.</think>Sunny in Paris, rain in Rome."},
        {"role": "assistant", "content": "Anything else?"},  # consecutive assistant messages
        {"role": "system", "content": "Use Celsius."},  # mid-conversation
        {"role": "user", "content": "And tomorrow? Ça ira, n'est-ce pas ?"},
        {"role": "assistant", "content": "", "tool_calls": calls[:1]},
        {"role": "tool", "tool_call_id": "c1", "content": "cloudy"},
        {"role": "system", "content": "Be kind."},  # between results: a new results turn
        {"role": "tool", "tool_call_id": "c1", "content": "late"},
        {"role": "user", "content": "Thanks!"},
    ]
    for name in ("gpt-5", "deepseek-reasoner"):  # OpenAI reads no replayed reasoning
        check_chat(_model(name), messages)


_TEXT = st.text(st.characters(codec="utf-8"), max_size=30)
_ROLES = st.sampled_from(["user", "assistant", "system", "developer"])


@st.composite
def _responses_input(
    draw: st.DrawFn,
) -> tuple[list[dict[str, Any]], dict[int, str], dict[int, tuple[Turn, ...]]]:
    items: list[dict[str, Any]] = []
    texts: dict[int, str] = {}
    compacted: dict[int, tuple[Turn, ...]] = {}
    for index in range(draw(st.integers(0, 24))):
        kind = draw(
            st.sampled_from(
                [
                    "message",
                    "reasoning",
                    "call",
                    "output",
                    "search",
                    "listing",
                    "approval",
                    "compaction",
                ]
            )
        )
        if kind == "message":
            items.append(_said(draw(_ROLES), draw(_TEXT)))
        elif kind == "reasoning":
            items.append({"type": "reasoning", "id": f"rs_{index}", "summary": []})
            if draw(st.booleans()):
                texts[index] = draw(_TEXT)
        elif kind == "call":
            items.append(_call(f"c{index}", draw(_TEXT)))
        elif kind == "output":
            items.append({"type": "function_call_output", "call_id": "c", "output": draw(_TEXT)})
        elif kind == "search":
            items.append({"type": "web_search_call", "id": "ws", "action": {"query": draw(_TEXT)}})
        elif kind == "listing":
            items.append({"type": "mcp_list_tools", "server_label": "maps", "tools": []})
        elif kind == "approval":
            items.append(
                {"type": "mcp_approval_response", "approval_request_id": "r", "approve": True}
            )
        else:
            items.append({"type": "compaction", "id": f"cmp_{index}", "encrypted_content": "x"})
            compacted[index] = COMPACTED[: draw(st.integers(0, len(COMPACTED)))]
    return items, texts, compacted


@settings(max_examples=150, deadline=None)
@given(request=_responses_input(), instructions=_TEXT)
def test_responses_totals_of_any_input(
    request: tuple[list[dict[str, Any]], dict[int, str], dict[int, tuple[Turn, ...]]],
    instructions: str,
) -> None:
    items, texts, compacted = request
    check_responses(items, texts, instructions, compacted)


@st.composite
def _chat_messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for index in range(draw(st.integers(0, 24))):
        role = draw(st.sampled_from(["user", "assistant", "system", "developer", "tool"]))
        message: dict[str, Any] = {"role": role, "content": draw(st.none() | _TEXT)}
        if role == "tool":
            message["tool_call_id"] = f"c{index}"
        elif role == "assistant":
            message["reasoning_content"] = draw(_TEXT)
            message["tool_calls"] = [
                {"id": f"c{index}", "function": {"name": "get_time", "arguments": draw(_TEXT)}}
                for _ in range(draw(st.integers(0, 2)))
            ]
        messages.append(message)
    return messages


@settings(max_examples=150, deadline=None)
@given(messages=_chat_messages(), name=st.sampled_from(["gpt-5", "deepseek-reasoner"]))
def test_chat_totals_of_any_messages(messages: list[dict[str, Any]], name: str) -> None:
    check_chat(_model(name), messages)


def test_the_builder_counts_what_prefix_tokens_counts() -> None:
    built = ConversationBuilder(TOOLS)
    steps = [
        lambda: built.add_system("Answer briefly."),
        lambda: built.append(Turn("user", text="Weather in Paris?")),
        lambda: built.append(Turn("assistant", thinking="A call.")),
        lambda: built.merge(text="Let me look.", calls=(Call("c1", "get_weather", {"city": "P"}),)),
        lambda: built.merge(text="abcd"),  # "Let me look.\nabcd": 17 characters, 5 tokens
        lambda: built.add_system("Use Celsius."),
        lambda: built.append(Turn("user", results=(CallResult("c1", "sunny"),))),
        lambda: built.merge(results=(CallResult("c1", "and warm"),)),
        lambda: built.restart(COMPACTED),
        lambda: built.merge(text="Done."),
        lambda: built.restart(()),
    ]
    assert built.tokens == sum(prefix_tokens(built.conversation()))
    for step in steps:
        step()
        assert built.tokens == sum(prefix_tokens(built.conversation()))


@st.composite
def _block(draw: st.DrawFn) -> dict[str, Any]:
    """A content block of a Claude message, of any kind the turn reads (or leaves out)."""
    kind = draw(st.sampled_from(["text", "thinking", "redacted", "call", "result", "image"]))
    if kind == "text":
        return {"type": "text", "text": draw(_TEXT)}
    if kind == "thinking":
        return {"type": "thinking", "thinking": draw(st.none() | _TEXT), "signature": "s"}
    if kind == "redacted":
        return {"type": "redacted_thinking", "data": draw(_TEXT)}
    if kind == "call":
        arguments = {"q": draw(_TEXT)}
        return {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": arguments}
    if kind == "result":
        text = draw(_TEXT)
        content = [{"type": "text", "text": text}] if draw(st.booleans()) else text
        return {"type": "tool_result", "tool_use_id": "toolu_1", "content": content}
    source = {"type": "base64", "media_type": "image/png", "data": "eA=="}
    return {"type": "image", "source": source}


@settings(max_examples=300, deadline=None)
@given(role=st.sampled_from(["user", "assistant"]), blocks=st.lists(_block(), max_size=12))
def test_claude_block_totals_are_the_rebuilt_prefixes_totals(
    role: str, blocks: list[dict[str, Any]]
) -> None:
    turn, totals = claude_turn(role, blocks, "messages", DOCUMENTS)
    rebuilt = [
        prefix_tokens(
            Conversation(turns=(claude_turn(role, blocks[: k + 1], "messages", DOCUMENTS)[0],))
        )[1]
        for k in range(len(blocks))
    ]
    assert list(totals) == rebuilt
    assert not blocks or totals[-1] == prefix_tokens(Conversation(turns=(turn,)))[1]
