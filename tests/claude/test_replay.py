"""Claude's replay policy and request checks, once for both wires (no network): which blocks of
a history go back, where and as what, and what is refused before anything is sent."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.support.claude import WIRES, Wire
from thinkagent import (
    ConfigurationError,
    HistoryError,
    Message,
    ModelRequest,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolDefinition,
    ToolResult,
)
from thinkagent.providers.claude import ClaudeThinking

both = pytest.mark.parametrize("wire", WIRES, ids=str)

WEATHER = ToolDefinition(
    name="get_weather",
    description="Current weather for a city.",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}},
)
RAW = b"\xff\x00opaque\x80redacted-bytes\x01"
"""A redacted payload that is not valid UTF-8: it must survive as the exact bytes."""

SIGNED = ThinkingBlock.signed("I should call get_weather.", "EqQBCkYIsig==")
REDACTED = ThinkingBlock.redacted_payload(base64.b64encode(RAW).decode())
CALL = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
RESULT = ToolResult(call_id="toolu_1", name="get_weather", content="sunny")
CUT = ThinkingBlock.plain("I should call get_w")
"""Thinking of a stream cut before its signature."""

PROFILE_ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3"
"""A model id the name rules cannot read (an application inference profile)."""

FOREIGN = "anthropic@api.deepseek.com"
"""Another vendor's endpoint speaking the Anthropic format: a scope of its own."""


def turn(wire: Wire, *parts: Any, scope: str | None = "own") -> Message:
    """An assistant message of `scope`: `"own"` (this wire's), `"other"` (the other Claude
    wire's), another provider's, or None (unknown provenance)."""
    named = {"own": wire.scope, "other": wire.other}
    return Message(
        role="assistant",
        parts=parts,
        scope=None if scope is None else named.get(scope, scope),
        model=wire.sonnet,
    )


def history(assistant: Message, *more: Message) -> list[Message]:
    return [Message.user("Weather in Paris?"), assistant, Message.user_results([RESULT]), *more]


def finished(assistant: Message) -> list[Message]:
    """`history(assistant)` with the turn finished (answered, then a new prompt): its tool loop
    may come from anywhere, Claude only verifies the current one."""
    answer = Message(
        role="assistant",
        parts=(TextPart(text="Sunny in Paris."),),
        scope=assistant.scope,
        model=assistant.model,
    )
    return history(assistant, answer, Message.user("And in Lyon?"))


def sent(wire: Wire, params: dict[str, Any], index: int = 1) -> list[dict[str, Any]]:
    """The content of message `index` of the request, as its JSON body carries it."""
    return wire.messages(params)[index]["content"]


def without_thinking(wire: Wire, message: Message) -> list[dict[str, Any]]:
    """What `message` goes back as when none of its thinking may."""
    parts = [p for p in message.parts if not isinstance(p, ThinkingBlock)]
    return wire.content(turn(wire, *parts))


@both
def test_same_scope_blocks_go_back_exactly_in_place(wire: Wire) -> None:
    omitted = ThinkingBlock.signed("", "ErUBomitted==")
    assistant = turn(wire, SIGNED, REDACTED, TextPart(text="Checking."), CALL, omitted)
    params = wire.model().build_request(ModelRequest(history(assistant), tools=[WEATHER]))
    assert wire.messages(params)[1] == {"role": "assistant", "content": wire.content(assistant)}
    assert wire.kinds(sent(wire, params)) == [
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "thinking",
    ]


@both
def test_the_other_claude_platforms_thinking_goes_back(wire: Wire) -> None:
    """Claude's signatures are compatible across its platforms: a conversation moves between
    the Claude API and Bedrock with its thinking."""
    moved = turn(wire, SIGNED, REDACTED, TextPart(text="Checking."), CALL, scope="other")
    params = wire.model().build_request(ModelRequest(history(moved), tools=[WEATHER]))
    assert sent(wire, params) == wire.content(moved)


@both
@pytest.mark.parametrize("scope", [FOREIGN, "gemini", None])
def test_reasoning_from_another_scope_is_never_sent_as_thinking(
    wire: Wire, scope: str | None
) -> None:
    foreign = turn(wire, SIGNED, REDACTED, TextPart(text="Checking."), CALL, scope=scope)
    dropped = wire.model().build_request(ModelRequest(finished(foreign)))
    assert sent(wire, dropped) == without_thinking(wire, foreign)
    as_text = wire.model(foreign_reasoning="text").build_request(ModelRequest(finished(foreign)))
    assert (
        sent(wire, as_text)[0]
        == wire.content(
            turn(wire, TextPart(text="<thinking>\nI should call get_weather.\n</thinking>"))
        )[0]
    )
    messages = str(wire.messages(as_text))
    assert "signature" not in messages and "redacted" not in messages


@both
def test_unsigned_thinking_of_this_scope_is_never_sent_as_thinking(wire: Wire) -> None:
    empty_signature = ThinkingBlock.signed("Half a thought", "")
    history_ = finished(turn(wire, CUT, empty_signature, CALL))
    assert sent(wire, wire.model().build_request(ModelRequest(history_))) == wire.content(
        turn(wire, CALL)
    )
    as_text = wire.model(foreign_reasoning="text").build_request(ModelRequest(history_))
    assert wire.texts(sent(wire, as_text)) == [
        "<thinking>\nI should call get_w\n</thinking>",
        "<thinking>\nHalf a thought\n</thinking>",
    ]


@both
def test_empty_parts_and_messages_are_left_out_and_roles_alternate(wire: Wire) -> None:
    messages = [
        Message.user("First question"),
        turn(wire, ThinkingBlock.plain("only unsigned thoughts"), scope="gemini"),
        turn(wire, ThinkingBlock.plain("only unsigned thoughts"), scope="other"),
        Message(role="user", parts=(TextPart(text=""), TextPart(text="Second question"))),
        turn(wire, SIGNED, TextPart(text=""), CALL),
        Message.user_results([RESULT]),
        Message.user("And in Lyon?"),
    ]
    params = wire.model().build_request(ModelRequest(messages))
    assert [m["role"] for m in wire.messages(params)] == ["user", "assistant", "user"]
    first = sent(wire, params, 0)
    assert wire.kinds(first) == ["text", "text"]
    assert wire.texts(first) == ["First question", "Second question"]
    assert wire.kinds(sent(wire, params)) == ["thinking", "tool_use"]
    assert wire.kinds(sent(wire, params, 2)) == ["tool_result", "text"]


def loop_begun_by(wire: Wire, begun: str) -> Message:
    """The first step of a tool loop whose thinking is not valid here: begun on another scope,
    or this scope's with its thinking cut or signed with nothing."""
    if begun == "cut":
        return turn(wire, CUT, CALL)
    if begun == "empty signature":
        return turn(wire, ThinkingBlock.signed("Half a thought", ""), CALL)
    scope = None if begun == "unknown" else begun
    return turn(wire, SIGNED, REDACTED, TextPart(text="Checking."), CALL, scope=scope)


@both
@pytest.mark.parametrize(
    ("begun", "found"),
    [
        (FOREIGN, "text"),
        ("gemini", "text"),
        ("unknown", "text"),
        ("cut", "tool_use"),
        ("empty signature", "tool_use"),
    ],
)
def test_a_tool_loop_without_replayable_thinking_is_refused_before_sending(
    wire: Wire, begun: str, found: str
) -> None:
    """Claude's rule with a thinking budget ("Expected `thinking` or `redacted_thinking`, but
    found `tool_use`") checked while the request is built, with the remedy; adaptive thinking
    relaxes it."""
    request = ModelRequest(history(loop_begun_by(wire, begun)), tools=[WEATHER])
    budget = ClaudeThinking.budget(2048)
    with pytest.raises(HistoryError) as caught:
        wire.model(thinking=budget).build_request(request)
    error = caught.value
    assert error.message_index == 1
    assert f"starts with {found}" in str(error)
    assert "provider that started it" in str(error) and "thinking disabled" in str(error)
    assert "ClaudeThinking.disabled()" in str(error)
    # also with foreign reasoning sent as text: it is text, not thinking
    with pytest.raises(HistoryError):
        wire.model(thinking=budget, foreign_reasoning="text").build_request(request)
    for thinking, name in ((ClaudeThinking.adaptive(), wire.sonnet), (None, wire.opus)):
        params = wire.model(thinking=thinking, name=name).build_request(request)
        assert "tool_use" in wire.kinds(sent(wire, params))


@both
def test_the_rule_names_the_message_that_starts_the_current_turn(wire: Wire) -> None:
    """Several steps: the turn's first assistant message is the one that must start with
    thinking (its index in the request's messages, after skipped messages)."""
    unsigned_only = turn(wire, ThinkingBlock.plain("thoughts"), scope="gemini")  # sends nothing
    second = ToolCall(id="toolu_2", name="get_time", arguments={"city": "Paris"})
    messages = [
        Message.user("Weather and time in Paris?"),
        unsigned_only,
        turn(wire, CALL, scope="gemini"),
        Message.user_results([RESULT]),
        turn(
            wire, SIGNED, second
        ),  # this scope's own, signed: not enough, the turn began elsewhere
        Message.user_results([ToolResult(call_id="toolu_2", name="get_time", content="14:05")]),
    ]
    budget = wire.model(thinking=ClaudeThinking.budget(2048))
    with pytest.raises(HistoryError) as caught:
        budget.build_request(ModelRequest(messages))
    assert caught.value.message_index == 2
    # a user message with tool results and text still continues the loop
    mixed = [*messages[:3], Message(role="user", parts=(RESULT, TextPart(text="Hurry.")))]
    with pytest.raises(HistoryError):
        budget.build_request(ModelRequest(mixed))


@both
def test_a_tool_loop_that_starts_with_thinking_passes(wire: Wire) -> None:
    # this scope's loop, with a later step that did not think (a budget without interleaving)
    second = ToolCall(id="toolu_2", name="get_time", arguments={"city": "Paris"})
    messages = [
        *history(turn(wire, SIGNED, CALL)),
        turn(wire, second),
        Message.user_results([ToolResult(call_id="toolu_2", name="get_time", content="14:05")]),
    ]
    params = wire.model().build_request(ModelRequest(messages))
    assert wire.kinds(sent(wire, params)) == ["thinking", "tool_use"]
    redacted_first = wire.model().build_request(ModelRequest(history(turn(wire, REDACTED, CALL))))
    assert wire.kinds(sent(wire, redacted_first))[0] == "redacted_thinking"


@both
@pytest.mark.parametrize("begun", [FOREIGN, "gemini", "cut"])
def test_without_thinking_the_rule_does_not_apply(wire: Wire, begun: str) -> None:
    assistant = loop_begun_by(wire, begun)
    request = ModelRequest(history(assistant), tools=[WEATHER])
    # thinking off; or no thinking field on a model that does not think by default, or whose
    # name the rules cannot read: the provider decides
    for thinking, name in (
        (ClaudeThinking.disabled(), wire.sonnet),
        (None, wire.sonnet),
        (None, PROFILE_ARN),
    ):
        params = wire.model(thinking=thinking, name=name).build_request(request)
        assert sent(wire, params) == without_thinking(wire, assistant)


@both
def test_whitespace_only_text_is_not_sent(wire: Wire) -> None:
    messages = [
        Message(role="user", parts=(TextPart(text="Weather in Paris?"), TextPart(text=" \n"))),
        turn(wire, SIGNED, TextPart(text="\n\n"), TextPart(text=" "), CALL, TextPart(text="\t")),
        Message.user_results([RESULT]),
        turn(wire, TextPart(text="  ")),  # left with nothing: skipped
        Message.user("And in Lyon?"),
    ]
    params = wire.model().build_request(ModelRequest(messages, tools=[WEATHER]))
    texts = [text for m in wire.messages(params) for text in wire.texts(m["content"])]
    assert texts == ["Weather in Paris?", "And in Lyon?"]
    assert [m["role"] for m in wire.messages(params)] == ["user", "assistant", "user"]
    assert wire.kinds(sent(wire, params)) == ["thinking", "tool_use"]


@both
def test_thinking_off_replays_no_thinking(wire: Wire) -> None:
    assistant = turn(wire, SIGNED, REDACTED, CALL)
    messages = history(assistant)
    disabled = wire.model(thinking=ClaudeThinking.disabled()).build_request(ModelRequest(messages))
    assert wire.kinds(sent(wire, disabled)) == ["tool_use"]
    assert wire.thinking_sent(disabled) == {"type": "disabled"}
    # no thinking field: the model's default decides, which the name may not tell; this
    # scope's thinking goes back as it is (the model that produced it was thinking)
    for name in (wire.sonnet, wire.opus, PROFILE_ARN):
        default = wire.model(thinking=None, name=name).build_request(ModelRequest(messages))
        assert wire.thinking_sent(default) is None
        assert sent(wire, default) == wire.content(assistant)
        assert wire.kinds(sent(wire, default)) == ["thinking", "redacted_thinking", "tool_use"]


@both
@pytest.mark.parametrize("choice", ["required", "get_weather"])
def test_forced_tool_choice_is_refused_where_claude_refuses_it(wire: Wire, choice: str) -> None:
    """With a thinking budget on every model, and on every request on the models that refuse
    it (Opus 5.5, Fable and Mythos 5.1, Sonnet 5.5); adaptive thinking elsewhere takes it."""
    request = ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": choice})
    with pytest.raises(ConfigurationError, match="refuses with a thinking budget"):
        wire.model(thinking=ClaudeThinking.budget(2048)).build_request(request)
    opus_5_5 = "claude-opus-5-5" if wire.scope == "anthropic" else "anthropic.claude-opus-5-5"
    for thinking in (None, ClaudeThinking.adaptive()):
        with pytest.raises(ConfigurationError, match='type "tool" and "any" are not supported'):
            wire.model(thinking=thinking, name=opus_5_5).build_request(request)
    for thinking, name in ((ClaudeThinking.adaptive(), wire.sonnet), (None, wire.opus)):
        params = wire.model(thinking=thinking, name=name).build_request(request)
        forced = (
            params["tool_choice"]
            if wire.scope == "anthropic"
            else params["toolConfig"]["toolChoice"]
        )
        assert forced in (
            {"type": "any"},
            {"type": "tool", "name": "get_weather"},
            {"any": {}},
            {"tool": {"name": "get_weather"}},
        )


@both
def test_tool_choice_must_name_an_offered_tool(wire: Wire) -> None:
    model = wire.model(thinking=ClaudeThinking.disabled())
    with pytest.raises(ConfigurationError, match="names no tool on offer"):
        model.build_request(
            ModelRequest([Message.user("Hi")], tools=[WEATHER], settings={"tool_choice": "nope"})
        )
    with pytest.raises(ConfigurationError, match="needs at least one tool"):
        model.build_request(
            ModelRequest([Message.user("Hi")], settings={"tool_choice": "required"})
        )


@both
def test_a_request_max_tokens_below_the_budget_is_refused(wire: Wire) -> None:
    model = wire.model(thinking=ClaudeThinking.budget(4096))
    with pytest.raises(ConfigurationError, match="must be below max_tokens"):
        model.build_request(ModelRequest([Message.user("Hi")], settings={"max_tokens": 3000}))


@both
def test_unparsable_tool_arguments_replay_as_an_empty_object(wire: Wire) -> None:
    broken = ToolCall(id="toolu_1", name="get_weather", arguments='{"city": "Par')
    params = wire.model().build_request(ModelRequest(history(turn(wire, SIGNED, broken))))
    empty = broken.model_copy(update={"arguments": {}})
    assert sent(wire, params) == wire.content(turn(wire, SIGNED, empty))
