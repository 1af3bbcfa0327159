"""The OpenAI family's public surface: its names and pinned import paths, the thinking
configuration, and options that cannot change under a running model."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any

import pytest

import thinkagent.providers.openai as family
from tests.support.openai import FakeClient
from thinkagent import ConfigurationError, Message, ModelRequest
from thinkagent.providers import openai_responses
from thinkagent.providers.openai import (
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIThinking,
)


def test_the_pinned_paths_and_the_family_export_the_same_names() -> None:
    assert openai_responses.OpenAIResponsesModel is family.OpenAIResponsesModel
    assert openai_responses.OpenAIThinking is family.OpenAIThinking
    assert openai_responses.responses_scope is family.responses_scope
    assert openai_responses.SCOPE == family.RESPONSES_SCOPE == "openai-responses"
    assert openai_responses.AZURE_SCOPE == family.AZURE_RESPONSES_SCOPE == "azure-responses"
    for name in family.__all__:
        assert getattr(family, name) is not None
    assert {"OpenAIChatModel", "OpenAIResponsesModel", "OpenAIThinking", "ChatDialect"} <= set(
        family.__all__
    )


def test_no_private_helper_is_exported() -> None:
    modules = [family, openai_responses]
    for info in pkgutil.iter_modules(family.__path__, family.__name__ + "."):
        if not info.name.rsplit(".", 1)[1].startswith("_"):
            modules.append(importlib.import_module(info.name))
    exported = {name for module in modules for name in module.__all__}
    assert exported.isdisjoint(
        {"provider_error", "input_items", "output_parts", "user_items", "redact", "stream_error"}
    )
    assert all(not name.startswith("_") for name in exported)


def test_thinking_is_checked_when_built_and_immutable() -> None:
    thinking = OpenAIThinking(effort="high", summary="auto")
    assert thinking.to_param() == {"effort": "high", "summary": "auto"}
    assert OpenAIThinking(effort="low").to_param() == {"effort": "low"}
    assert OpenAIThinking().to_param() == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        thinking.effort = "low"  # type: ignore[misc]
    with pytest.raises(ConfigurationError, match="effort must be one of"):
        OpenAIThinking(effort="extreme")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="summary must be one of"):
        OpenAIThinking(summary="short")  # type: ignore[arg-type]


def test_chat_completions_refuses_a_summary() -> None:
    with pytest.raises(ConfigurationError, match="no reasoning summary"):
        OpenAIChatModel(
            "gpt-5",
            client=FakeClient(),  # type: ignore[arg-type]
            thinking=OpenAIThinking(effort="low", summary="auto"),
        )


@pytest.mark.parametrize("cls", [OpenAIChatModel, OpenAIResponsesModel])
def test_thinking_must_be_the_config_object(cls: Any) -> None:
    with pytest.raises(ConfigurationError, match="OpenAIThinking"):
        cls("gpt-5", client=FakeClient(), thinking="high")


def test_responses_thinking_is_the_reasoning_parameter() -> None:
    def reasoning(**kw: Any) -> object:
        model = OpenAIResponsesModel("gpt-5", client=FakeClient(), **kw)  # type: ignore[arg-type]
        return model.build_request(ModelRequest(messages=[Message.user("q")])).get("reasoning")

    assert reasoning() == {"summary": "auto"}  # the default: summaries to show
    assert reasoning(thinking=OpenAIThinking(effort="low")) == {"effort": "low"}
    assert reasoning(thinking=OpenAIThinking()) is None


@pytest.mark.parametrize("cls", [OpenAIChatModel, OpenAIResponsesModel])
def test_options_are_read_only(cls: Any) -> None:
    thinking = OpenAIThinking(effort="low")
    model = cls(
        "gpt-5",
        client=FakeClient(),
        thinking=thinking,
        settings={"temperature": 0.5},
        extra_body={"a": 1},
        extra_headers={"x-a": "1"},
    )
    assert model.thinking is thinking and model.settings == {"temperature": 0.5}
    assert model.extra_body == {"a": 1} and model.extra_headers == {"x-a": "1"}
    for option in ("thinking", "settings", "foreign_reasoning", "extra_body", "extra_headers"):
        with pytest.raises(AttributeError):
            setattr(model, option, None)
    with pytest.raises(TypeError):
        model.extra_body["b"] = 2
