"""What thinkagent knows of today's Claude models (no network): the thinking each model takes,
refused at construction with the service's own reason; the thinking knob mapped to each
model's configuration; scopes that know the endpoint; model readability between models."""

from __future__ import annotations

from typing import Any

import anthropic
import pytest

from tests.support.claude import ANTHROPIC, BEDROCK, WIRES, Wire
from thinkagent import (
    ConfigurationError,
    Message,
    ModelRequest,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from thinkagent.providers.claude import AnthropicModel, BedrockModel, ClaudeThinking
from thinkagent.providers.claude._models import claude_info
from thinkagent.providers.claude.anthropic import anthropic_scope

both = pytest.mark.parametrize("wire", WIRES, ids=str)

SIGNED = ThinkingBlock.signed("I should call get_weather.", "EqQBCkYIsig==")
CALL = ToolCall(id="toolu_1", name="get_weather", arguments={"city": "Paris"})
RESULT = ToolResult(call_id="toolu_1", name="get_weather", content="sunny")


def name(wire: Wire, model: str) -> str:
    return model if wire is ANTHROPIC else f"anthropic.{model}-v1:0"


@both
@pytest.mark.parametrize(
    ("model", "config", "reason"),
    [
        ("claude-opus-5-5", ClaudeThinking.disabled(), '"thinking.type.disabled" is not supported'),
        (
            "claude-fable-5-2",
            ClaudeThinking.budget(2048),
            '"thinking.type.enabled" is not supported',
        ),
        (
            "claude-opus-4-7",
            ClaudeThinking.budget(2048),
            '"thinking.type.enabled" is not supported',
        ),
        ("claude-sonnet-4-5", ClaudeThinking.adaptive(), "adaptive thinking is not supported"),
        ("claude-mythos-preview", ClaudeThinking.disabled(), "Thinking defaults to adaptive mode"),
        ("claude-sonnet-5-5", ClaudeThinking.disabled(), '"thinking.type.between_tools"'),
        ("claude-opus-5", ClaudeThinking.between_tools(), 'between_tools" is not supported'),
    ],
)
def test_a_configuration_the_model_refuses_is_refused_at_construction(
    wire: Wire, model: str, config: ClaudeThinking, reason: str
) -> None:
    with pytest.raises(ConfigurationError, match="refuses this thinking configuration") as caught:
        wire.model_class(name(wire, model), client=object(), thinking=config)
    assert reason in str(caught.value)


@both
@pytest.mark.parametrize(
    ("model", "config"),
    [
        ("claude-opus-4-7", ClaudeThinking.disabled()),
        ("claude-opus-4-6", ClaudeThinking.budget(2048)),
        ("claude-sonnet-5-5", ClaudeThinking.between_tools()),
        ("claude-mythos-preview", ClaudeThinking.budget(2048)),
        ("claude-opus-5", ClaudeThinking.disabled()),
        ("claude-sonnet-4-5", ClaudeThinking.budget(2048)),
        ("claude-some-new-model-9", ClaudeThinking.disabled()),  # unread names: no refusal
    ],
)
def test_a_configuration_the_model_takes_is_accepted(
    wire: Wire, model: str, config: ClaudeThinking
) -> None:
    wire.model_class(name(wire, model), client=object(), thinking=config)


@both
def test_efforts_above_high_are_refused_where_claude_refuses_them(wire: Wire) -> None:
    with pytest.raises(ConfigurationError, match="refuses effort 'max'"):
        wire.model_class(
            name(wire, "claude-opus-5"),
            client=object(),
            thinking=ClaudeThinking.disabled(),
            effort="max",
        )
    with pytest.raises(ConfigurationError, match="refuses effort 'xhigh'"):
        wire.model_class(
            name(wire, "claude-sonnet-5-5"),
            client=object(),
            thinking=ClaudeThinking.between_tools(),
            effort="xhigh",
        )


def thinking_of(wire: Wire, params: dict[str, Any]) -> tuple[Any, Any]:
    if wire is ANTHROPIC:
        return params.get("thinking"), params.get("output_config", {}).get("effort")
    return wire.thinking_sent(params), params.get("outputConfig", {}).get("effort")


def knob(wire: Wire, model: str, value: Any, **kw: Any) -> tuple[Any, Any, list[str]]:
    built = wire.model(client=None, name=name(wire, model), **kw)
    params, prepared = built._build(  # pyright: ignore[reportPrivateUsage]
        ModelRequest([Message.user("Hi")], settings={"thinking": value})
    )
    thinking, effort = thinking_of(wire, params)
    return thinking, effort, [w.code for w in prepared.warnings]


@both
@pytest.mark.parametrize(
    ("model", "value", "thinking", "effort", "warnings"),
    [
        ("claude-opus-4-7", "high", {"type": "adaptive"}, "high", []),
        ("claude-opus-4-7", "max", {"type": "adaptive"}, "max", []),
        ("claude-opus-4-7", True, {"type": "adaptive"}, None, []),
        ("claude-opus-4-7", False, {"type": "disabled"}, None, []),
        ("claude-opus-5-5", False, {"type": "adaptive"}, None, ["thinking_not_disabled"]),
        ("claude-sonnet-5-5", False, {"type": "between_tools"}, None, ["thinking_not_disabled"]),
        ("claude-sonnet-4-5", "low", {"type": "enabled", "budget_tokens": 2048}, None, []),
        ("claude-sonnet-4-5", True, {"type": "enabled", "budget_tokens": 4096}, None, []),
        (
            "claude-sonnet-4-5",
            "max",
            {"type": "enabled", "budget_tokens": 8191},
            None,
            ["thinking_clamped"],
        ),
        ("claude-sonnet-4-5", False, {"type": "disabled"}, None, []),
    ],
)
def test_the_thinking_knob_maps_to_each_models_configuration(
    wire: Wire, model: str, value: Any, thinking: Any, effort: Any, warnings: list[str]
) -> None:
    assert knob(wire, model, value, thinking=None) == (thinking, effort, warnings)


@both
def test_the_knob_overrides_the_models_thinking_and_keeps_its_other_options(wire: Wire) -> None:
    config = ClaudeThinking.adaptive(display="summarized", prefix_mismatch_behavior="error")
    thinking, effort, _ = knob(wire, "claude-opus-5-5", "low", thinking=config, effort="high")
    assert thinking == {
        "type": "adaptive",
        "display": "summarized",
        "block_binding": {"prefix_mismatch_behavior": "error"},
    }
    assert effort == "low"
    budget = ClaudeThinking.budget(2048)
    thinking, _, _ = knob(wire, "claude-opus-4-6", "high", thinking=budget)
    assert thinking == {"type": "adaptive"}  # a model that takes adaptive thinking gets it


@pytest.mark.parametrize(
    ("client", "scope"),
    [
        (anthropic.AsyncAnthropic(api_key="k"), "anthropic"),
        (
            anthropic.AsyncAnthropic(api_key="k", base_url="https://api.deepseek.com/anthropic"),
            "anthropic@api.deepseek.com",
        ),
        (
            anthropic.AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:8080"),
            "anthropic@localhost",
        ),
        (
            anthropic.AsyncAnthropic(api_key="k", base_url="https://gateway.example:443/v1"),
            "anthropic@gateway.example",
        ),
        (
            anthropic.AsyncAnthropicBedrock(
                aws_region="us-east-1", aws_access_key="a", aws_secret_key="b"
            ),
            "bedrock",
        ),
        (
            anthropic.AsyncAnthropicVertex(region="us-east5", project_id="p", access_token="t"),
            "anthropic-vertex",
        ),
    ],
)
def test_the_scope_comes_from_where_the_client_sends(client: Any, scope: str) -> None:
    assert anthropic_scope(client) == scope
    assert AnthropicModel("claude-opus-5-5", client=client).scope == scope
    assert AnthropicModel("claude-opus-5-5", client=client, scope="mine").scope == "mine"


def finished(step: Message) -> list[Message]:
    """A finished tool loop with `step` as its tool call, and a new question."""
    return [Message.user("Weather?"), step, Message.user_results([RESULT]), Message.user("More")]


def test_another_vendors_anthropic_endpoint_never_gets_claudes_thinking() -> None:
    claude = Message(
        role="assistant", parts=(SIGNED, CALL), scope="anthropic", model="claude-opus-5-5"
    )
    history = finished(claude)
    deepseek = anthropic.AsyncAnthropic(api_key="k", base_url="https://api.deepseek.com/anthropic")
    params = AnthropicModel("deepseek-v4-pro", client=deepseek).build_request(ModelRequest(history))
    assert "signature" not in str(params["messages"])
    # and its own blocks never go to Claude
    theirs = claude.model_copy(
        update={"scope": "anthropic@api.deepseek.com", "model": "deepseek-v4-pro"}
    )
    params = AnthropicModel(
        "claude-opus-5-5", client=object()
    ).build_request(  # type: ignore[arg-type]
        ModelRequest([history[0], theirs, *history[2:]])
    )
    assert "signature" not in str(params["messages"])


@pytest.mark.parametrize(
    ("reader", "producer", "claude_api", "readable"),
    [
        ("claude-opus-5-5", "claude-opus-5", True, True),
        ("claude-opus-5-5", "claude-sonnet-4-6", True, True),
        ("claude-opus-5-5", "claude-fable-5-1", True, False),
        ("claude-fable-5-1", "claude-opus-5-5", True, True),
        ("claude-fable-5-1", "claude-opus-5-5", False, False),
        ("claude-fable-5-1", "claude-mythos-5-1", False, True),
        ("claude-fable-5-1", "claude-fable-5-2", True, False),
        ("claude-mythos-5-2", "claude-fable-5-2", True, True),
        ("claude-haiku-5-5", "claude-opus-5-5", True, False),
        ("claude-opus-4-7", "claude-haiku-5-5", False, True),
        ("claude-opus-5-5", "claude-opus-5-5", False, True),
    ],
)
def test_which_models_read_which(
    reader: str, producer: str, claude_api: bool, readable: bool
) -> None:
    read, wrote = claude_info(reader), claude_info(producer)
    assert read is not None and wrote is not None
    assert read.reads(wrote, claude_api=claude_api) is readable


@both
def test_thinking_the_new_model_cannot_read_is_left_out_with_a_warning(wire: Wire) -> None:
    fable = Message(
        role="assistant",
        parts=(SIGNED, CALL),
        scope=wire.scope,
        model=name(wire, "claude-fable-5-1"),
    )
    history = finished(fable)
    model = wire.model(name=name(wire, "claude-opus-5-5"), thinking=None)
    params, prepared = model._build(ModelRequest(history))  # pyright: ignore[reportPrivateUsage]
    assert "signature" not in str(wire.messages(params))
    (warning,) = prepared.warnings
    assert (
        warning.code == "thinking_unreadable"
        and "Claude Fable 5.1 (messages[1])" in warning.message
    )
    # the same model reads its own
    same = wire.model(name=name(wire, "claude-fable-5-1"), thinking=None)
    assert "signature" in str(wire.messages(same.build_request(ModelRequest(history))))


def test_account_bound_thinking_does_not_cross_platforms() -> None:
    """Sonnet 5.5's thinking is valid only in the account that made it: another platform is
    another account."""
    sonnet = Message(
        role="assistant", parts=(SIGNED, CALL), scope="anthropic", model="claude-sonnet-5-5"
    )
    history = finished(sonnet)
    bedrock = BedrockModel("anthropic.claude-sonnet-5-5", client=object())
    params, prepared = bedrock._build(ModelRequest(history))  # pyright: ignore[reportPrivateUsage]
    assert "signature" not in str(params["messages"])
    assert "another account" in prepared.warnings[0].message
    opus = sonnet.model_copy(update={"model": "claude-opus-5-5"})
    moved = BedrockModel("anthropic.claude-opus-5-5", client=object()).build_request(
        ModelRequest([history[0], opus, *history[2:]])
    )
    assert "signature" in str(moved["messages"])


@both
def test_a_conversation_that_opens_with_the_models_message_gets_a_user_turn_first(
    wire: Wire,
) -> None:
    """A run started from instructions alone: the Messages API needs a user message first."""
    empty = wire.model().build_request(ModelRequest([], instructions="Report the weather."))
    assert [m["role"] for m in wire.messages(empty)] == ["user"]
    opened = Message(role="assistant", parts=(TextPart(text="It is sunny."),), scope=wire.scope)
    params = wire.model().build_request(
        ModelRequest([opened, Message.user("Thanks")], instructions="Report the weather.")
    )
    assert [m["role"] for m in wire.messages(params)] == ["user", "assistant", "user"]
    assert wire.texts(wire.messages(params)[0]["content"]) == ["Please go ahead."]


@pytest.mark.parametrize("wire", [BEDROCK], ids=str)
def test_bedrock_families_are_scopes_of_their_own(wire: Wire) -> None:
    client: Any = type("Client", (), {"meta": type("Meta", (), {"region_name": "eu-west-1"})()})()
    assert BedrockModel("anthropic.claude-opus-5-5", client=client).scope == "bedrock"
    assert BedrockModel("us.deepseek.r1-v1:0", client=client).scope == "bedrock-deepseek@eu-west-1"
    assert BedrockModel("openai.gpt-oss-120b-1:0", client=client).family == "openai"
    assert (
        BedrockModel("moonshot.kimi-k2-thinking", client=client).scope
        == "bedrock-moonshot@eu-west-1"
    )
    with pytest.raises(ConfigurationError, match="is not a Claude model"):
        BedrockModel("openai.gpt-oss-120b-1:0", client=client, thinking=ClaudeThinking.adaptive())
