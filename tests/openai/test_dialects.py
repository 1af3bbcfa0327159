"""The dialect registry: names, hosts, a user-declared dialect's checks, and what each dialect's
switch puts on the wire for `OpenAIThinking` and `ModelSettings(thinking=...)` (with the
warnings for what it had to clamp or could not do)."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from thinkagent import ConfigurationError, Message, ModelRequest, WarningEvent
from thinkagent.providers.openai import (
    DIALECTS,
    ChatDialect,
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIThinking,
    resolve_dialect,
)

from ..support.openai import FakeClient

HOSTS = {
    "https://api.openai.com/v1": "openai",
    "https://api.deepseek.com": "deepseek",
    "https://api.moonshot.ai/v1": "moonshot",
    "https://api.moonshot.cn/v1": "moonshot",
    "https://api.z.ai/api/paas/v4": "zai",
    "https://open.bigmodel.cn/api/paas/v4": "zai",
    "https://openrouter.ai/api/v1": "openrouter",
    "https://api.mistral.ai/v1": "mistral",
    "https://api.x.ai/v1": "xai",
    "https://api.groq.com/openai/v1": "groq",
    "https://api.cerebras.ai/v1": "cerebras",
    "https://api.together.xyz/v1": "together",
    "https://dashscope-intl.aliyuncs.com/compatible-mode/v1": "qwen",
    "https://api.minimax.io/v1": "minimax",
    "http://localhost:8000/v1": "compatible",
    "https://gateway.example.com/v1": "compatible",
}


@pytest.mark.parametrize(("url", "name"), HOSTS.items())
def test_the_dialect_is_recognised_from_the_base_url(url: str, name: str) -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url=url)
    assert resolve_dialect(None, client).name == name
    assert OpenAIChatModel("m", client=client).scope == name


@pytest.mark.parametrize(
    ("alias", "name"),
    [("kimi", "moonshot"), ("GLM", "zai"), ("sglang", "vllm"), ("magistral", "mistral")],
)
def test_aliases(alias: str, name: str) -> None:
    assert resolve_dialect(alias) is DIALECTS[name]


def test_every_named_dialect_says_where_reasoning_is_and_when_it_goes_back() -> None:
    replayed = {n for n, d in DIALECTS.items() if d.replay != "never"}
    assert replayed == {
        "deepseek",
        "moonshot",
        "zai",
        "openrouter",
        "mistral",
        "xai",
        "vllm",
        "minimax",
        "think_tags",
        "fireworks",
    }
    assert {n for n, d in DIALECTS.items() if d.missing_reasoning != "omit"} == {
        "deepseek",
        "moonshot",
    }
    assert DIALECTS["compatible"].replay == "never"  # the safe default for unknown hosts
    assert DIALECTS["vllm"].reasoning_field == "reasoning"  # vLLM 0.16+


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, "needs a name"),
        ({"name": "x", "reasoning": "thoughts"}, "dialect reasoning must be one of"),
        ({"name": "x", "replay": "sometimes"}, "dialect replay must be one of"),
        ({"name": "x", "replay": "always"}, "names no shape to send it in"),
        (
            {"name": "x", "reasoning": "think_tags", "missing_reasoning": "empty"},
            "missing_reasoning",
        ),
        ({"name": "x", "missing_reasoning": "guess"}, "missing_reasoning must be one of"),
        ({"name": "x", "switch": "dial"}, "dialect switch must be one of"),
        ({"name": "x", "efforts": ("huge",)}, "dialect efforts must be"),
        ({"name": "x", "tags": ("<t>", "")}, "tags must be two non-empty strings"),
        ({"name": "x", "hosts": "example.com"}, "hosts must be a tuple"),
        ({"name": "x", "media": "images"}, "media must be a MediaSupport"),
    ],
)
def test_a_user_declared_dialect_is_checked(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ChatDialect(**kwargs)


@pytest.mark.parametrize(
    ("dialect", "field"),
    [
        ("groq", "preserve"),
        ("deepseek", "format"),
        ("zai", "effort"),
        ("openai", "enabled"),
        ("vllm", "split"),
    ],
)
def test_a_thinking_field_without_a_switch_is_refused(dialect: str, field: str) -> None:
    value: Any = "low" if field == "effort" else "parsed" if field == "format" else True
    with pytest.raises(ConfigurationError, match=rf"no switch for OpenAIThinking\.{field}"):
        OpenAIChatModel(
            "m", client=FakeClient(), dialect=dialect, thinking=OpenAIThinking(**{field: value})
        )  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="budget_tokens must be a positive int"):
        OpenAIThinking(budget_tokens=0)


def wire(
    dialect: str, model: str = "m", thinking: OpenAIThinking | None = None, knob: Any = None
) -> tuple[dict[str, Any], list[WarningEvent]]:
    chat = OpenAIChatModel(model, client=FakeClient(), dialect=dialect, thinking=thinking)
    settings: Any = {} if knob is None else {"thinking": knob}
    request = ModelRequest(messages=[Message.user("q")], settings=settings)
    params, warnings = chat._prepare(request)  # pyright: ignore[reportPrivateUsage]
    fields = {k: v for k, v in params.items() if k in ("reasoning_effort",)}
    fields.update(params.get("extra_body", {}))
    return fields, list(warnings)


@pytest.mark.parametrize(
    ("dialect", "model", "thinking", "knob", "expected"),
    [
        ("openai", "gpt-5", None, "high", {"reasoning_effort": "high"}),
        ("openai", "gpt-5.1", None, False, {"reasoning_effort": "none"}),
        ("openai", "gpt-5.1", None, True, {"reasoning_effort": "medium"}),
        ("openai", "gpt-5.2", None, "max", {"reasoning_effort": "xhigh"}),
        (
            "deepseek",
            "deepseek-v4-pro",
            None,
            "medium",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        ),
        ("deepseek", "deepseek-v4-pro", None, False, {"thinking": {"type": "disabled"}}),
        (
            "moonshot",
            "kimi-k2.6",
            OpenAIThinking(preserve=True),
            True,
            {"thinking": {"type": "enabled", "keep": "all"}},
        ),
        (
            "zai",
            "glm-5",
            OpenAIThinking(preserve=True),
            None,
            {"thinking": {"type": "enabled", "clear_thinking": False}},
        ),
        ("zai", "glm-5", None, False, {"thinking": {"type": "disabled"}}),
        ("openrouter", "google/gemini-3-pro-preview", None, None, {"reasoning": {"enabled": True}}),
        ("openrouter", "x/y", None, "max", {"reasoning": {"effort": "xhigh"}}),
        ("openrouter", "x/y", None, False, {"reasoning": {"effort": "none"}}),
        (
            "openrouter",
            "x/y",
            OpenAIThinking(budget_tokens=2048),
            None,
            {"reasoning": {"max_tokens": 2048}},
        ),
        ("together", "t", None, False, {"reasoning": {"enabled": False}}),
        (
            "qwen",
            "qwen3-max",
            OpenAIThinking(enabled=True, budget_tokens=500),
            None,
            {"enable_thinking": True, "thinking_budget": 500},
        ),
        ("ollama", "qwen3:8b", None, "low", {"think": "low"}),
        ("ollama", "qwen3:8b", None, False, {"think": False}),
        (
            "vllm",
            "Qwen/Qwen3-8B",
            None,
            False,
            {"chat_template_kwargs": {"enable_thinking": False, "thinking": False}},
        ),
        (
            "groq",
            "openai/gpt-oss-120b",
            OpenAIThinking(format="parsed"),
            "high",
            {"reasoning_format": "parsed", "reasoning_effort": "high"},
        ),
        ("minimax", "MiniMax-M2", OpenAIThinking(split=True), None, {"reasoning_split": True}),
        ("mistral", "mistral-small-latest", None, "high", {"reasoning_effort": "high"}),
        ("mistral", "mistral-small-latest", None, False, {"reasoning_effort": "none"}),
    ],
)
def test_each_switch_on_the_wire(
    dialect: str, model: str, thinking: OpenAIThinking | None, knob: Any, expected: dict[str, Any]
) -> None:
    fields, _ = wire(dialect, model, thinking, knob)
    assert fields == expected


@pytest.mark.parametrize(
    ("dialect", "model", "knob", "code", "sent"),
    [
        ("openai", "o3", "max", "thinking_clamped", {"reasoning_effort": "high"}),
        ("openai", "gpt-5", False, "thinking_not_disabled", {"reasoning_effort": "minimal"}),
        (
            "deepseek",
            "deepseek-v4-pro",
            "medium",
            "thinking_clamped",
            {"thinking": {"type": "enabled"}, "reasoning_effort": "high"},
        ),
        ("moonshot", "kimi-k2.6", "high", "thinking_clamped", {"thinking": {"type": "enabled"}}),
        ("minimax", "MiniMax-M2", False, "thinking_not_disabled", {}),
        ("openai", "gpt-4.1", "low", "thinking_clamped", {}),
    ],
)
def test_what_cannot_be_honoured_is_said(
    dialect: str, model: str, knob: Any, code: str, sent: dict[str, Any]
) -> None:
    fields, warnings = wire(dialect, model, None, knob)
    assert fields == sent
    assert [w.code for w in warnings] == [code]
    assert warnings[0].scope == dialect and model in warnings[0].message


def test_the_models_own_thinking_applies_when_the_setting_is_absent() -> None:
    fields, warnings = wire("openai", "gpt-5", OpenAIThinking(effort="low"))
    assert fields == {"reasoning_effort": "low"} and warnings == []
    fields, _ = wire("openai", "gpt-5", OpenAIThinking(effort="low"), "high")
    assert fields == {"reasoning_effort": "high"}  # the request's setting wins


def test_the_users_extra_body_wins_over_the_dialects_switch() -> None:
    chat = OpenAIChatModel(
        "glm-5", client=FakeClient(), dialect="zai", extra_body={"thinking": {"type": "enabled"}}
    )
    request = ModelRequest(messages=[Message.user("q")], settings={"thinking": False})
    assert chat.build_request(request)["extra_body"] == {"thinking": {"type": "enabled"}}


@pytest.mark.parametrize(
    ("model", "knob", "effort", "codes"),
    [
        ("gpt-5", "high", "high", []),
        ("gpt-5", "max", "high", ["thinking_clamped"]),
        ("gpt-5.1", False, "none", []),
        ("gpt-5", False, "minimal", ["thinking_not_disabled"]),
        ("deepseek-v4-pro", "medium", "high", ["thinking_clamped"]),
    ],
)
def test_the_responses_effort(model: str, knob: Any, effort: str, codes: list[str]) -> None:
    responses = OpenAIResponsesModel(model, client=FakeClient())
    request = ModelRequest(messages=[Message.user("q")], settings={"thinking": knob})
    params, warnings = responses._prepare(request)  # pyright: ignore[reportPrivateUsage]
    assert params["reasoning"] == {"effort": effort, "summary": "auto"}
    assert [w.code for w in warnings] == codes


def test_the_responses_api_refuses_chat_switches() -> None:
    with pytest.raises(ConfigurationError, match=r"no switch for OpenAIThinking\.enabled"):
        OpenAIResponsesModel("gpt-5", client=FakeClient(), thinking=OpenAIThinking(enabled=True))
