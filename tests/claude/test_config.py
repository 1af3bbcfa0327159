"""The Claude family's public names, the thinking configuration and the model options,
validated before anything is sent."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import pytest

from thinkagent import Agent, ConfigurationError, Model
from thinkagent.providers import anthropic as anthropic_module
from thinkagent.providers import bedrock as bedrock_module
from thinkagent.providers import claude
from thinkagent.providers.claude import AnthropicModel, BedrockModel, ClaudeThinking
from thinkagent.providers.claude._models import claude_name
from thinkagent.providers.claude._rules import finish_reason, thinks_by_default


def test_the_family_exports_its_user_facing_names() -> None:
    assert sorted(claude.__all__) == [
        "AnthropicModel",
        "BedrockModel",
        "CLAUDE_PLATFORMS",
        "ClaudeRefusal",
        "ClaudeThinking",
        "Effort",
        "MIN_BUDGET_TOKENS",
        "PrefixMismatchBehavior",
        "ThinkingDisplay",
        "ThinkingType",
        "thinking_signers",
    ]
    assert claude.MIN_BUDGET_TOKENS == 1024
    # the first import paths are the same objects
    assert anthropic_module.AnthropicModel is AnthropicModel
    assert bedrock_module.BedrockModel is BedrockModel
    assert anthropic_module.ClaudeThinking is bedrock_module.ClaudeThinking is ClaudeThinking
    with pytest.raises(AttributeError):
        claude.NoSuchModel  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize(
    ("blocked", "imports"),
    [
        ("boto3", "thinkagent.providers.anthropic, thinkagent.providers.claude.anthropic"),
        ("anthropic", "thinkagent.providers.bedrock, thinkagent.providers.claude.bedrock"),
        ("anthropic", "thinkagent.providers.claude"),
    ],
)
def test_a_model_needs_only_its_own_sdk(blocked: str, imports: str) -> None:
    """The family imports its models lazily: one never pulls in the other's SDK."""
    script = (
        f"import sys; sys.modules[{blocked!r}] = None; import {imports}; "
        f"assert {blocked!r} not in [n.split('.')[0] for n, m in sys.modules.items() if m]"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


@pytest.mark.parametrize(
    ("model", "options"),
    [
        (
            AnthropicModel("claude-opus-4-7", client=object(), extra_body={"a": 1}),  # type: ignore[arg-type]
            ["extra_body", "extra_headers"],
        ),
        (
            BedrockModel("anthropic.claude-opus-4-7-v1:0", client=object()),
            ["additional_model_request_fields", "extra_headers"],
        ),
    ],
    ids=["anthropic", "bedrock"],
)
def test_options_are_read_only(model: Any, options: list[str]) -> None:
    """A model is shared by concurrent runs: its options are given once, at construction."""
    common = ["model_name", "scope", "client", "thinking", "effort", "max_tokens"]
    for name in [*common, "foreign_reasoning", "settings", *options]:
        with pytest.raises(AttributeError):
            setattr(model, name, getattr(model, name))
    for name in options:
        with pytest.raises(TypeError):
            getattr(model, name)["x"] = "y"


def test_constructors_and_wire_form() -> None:
    assert ClaudeThinking.adaptive().to_param() == {"type": "adaptive"}
    assert ClaudeThinking.adaptive(display="omitted").to_param() == {
        "type": "adaptive",
        "display": "omitted",
    }
    assert ClaudeThinking.budget(2048).to_param() == {"type": "enabled", "budget_tokens": 2048}
    assert ClaudeThinking.budget(1024, display="summarized").to_param() == {
        "type": "enabled",
        "budget_tokens": 1024,
        "display": "summarized",
    }
    assert ClaudeThinking.disabled().to_param() == {"type": "disabled"}
    assert ClaudeThinking(type="adaptive") == ClaudeThinking.adaptive()
    assert ClaudeThinking.between_tools().to_param() == {"type": "between_tools"}
    binding = ClaudeThinking.adaptive(prefix_mismatch_behavior="drop_block")
    assert binding.to_param() == {
        "type": "adaptive",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    assert binding.betas == ("thinking-binding-controls-2026-08-01",)
    updates = ClaudeThinking.adaptive(display="updates")
    assert updates.to_param() == {"type": "adaptive", "display": "updates"}
    assert updates.betas == ("thinking-display-updates-2026-08-18",)
    interleaved = ClaudeThinking.budget(16384, interleaved=True)
    assert interleaved.to_param() == {"type": "enabled", "budget_tokens": 16384}
    assert interleaved.betas == ("interleaved-thinking-2025-05-14",)
    assert ClaudeThinking.adaptive().betas == ()


def test_is_immutable_and_the_same_class_on_both_modules() -> None:
    config = ClaudeThinking.adaptive()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.type = "disabled"  # type: ignore[misc]
    assert bedrock_module.ClaudeThinking is anthropic_module.ClaudeThinking


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"type": "enabled"}, "needs budget_tokens"),
        ({"type": "enabled", "budget_tokens": 1023}, "at least 1024"),
        ({"type": "enabled", "budget_tokens": 2048.0}, "must be an integer"),
        ({"type": "enabled", "budget_tokens": True}, "must be an integer"),
        ({"type": "adaptive", "budget_tokens": 2048}, "only applies to thinking type 'enabled'"),
        ({"type": "disabled", "budget_tokens": 2048}, "only applies to thinking type 'enabled'"),
        ({"type": "disabled", "display": "omitted"}, "display does not apply"),
        ({"type": "adaptive", "display": "hidden"}, "'summarized', 'omitted' or 'updates'"),
        ({"type": "on"}, "'adaptive', 'enabled', 'disabled' or 'between_tools'"),
        ({"type": "between_tools", "display": "omitted"}, "display does not apply"),
        ({"type": "adaptive", "prefix_mismatch_behavior": "ignore"}, "'error' or 'drop_block'"),
        (
            {"type": "disabled", "prefix_mismatch_behavior": "error"},
            "adaptive or budgeted thinking only",
        ),
        ({"type": "adaptive", "interleaved": True}, "budgeted thinking only"),
    ],
)
def test_invalid_configurations_name_the_problem(kwargs: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        ClaudeThinking(**kwargs)


def test_a_type_is_required() -> None:
    # what the acceptance script relies on: only `type=` builds a config
    for kwargs in ({"adaptive": True}, {"budget_tokens": 2048}, {"mode": "adaptive"}):
        with pytest.raises(TypeError):
            ClaudeThinking(**kwargs)


@pytest.mark.parametrize("model_class", [AnthropicModel, BedrockModel])
def test_budget_must_stay_below_max_tokens(model_class: Any) -> None:
    with pytest.raises(
        ConfigurationError, match=r"budget_tokens \(4096\) must be below max_tokens"
    ):
        model_class(
            "claude-sonnet-4-6",
            client=object(),
            thinking=ClaudeThinking.budget(4096),
            max_tokens=4096,
        )
    with pytest.raises(ConfigurationError, match="must be below max_tokens"):
        model_class(
            "claude-sonnet-4-6",
            client=object(),
            thinking=ClaudeThinking.budget(4096),
            settings={"max_tokens": 2000},
        )
    model_class(
        "claude-sonnet-4-6", client=object(), thinking=ClaudeThinking.budget(4096), max_tokens=4097
    )
    # interleaved, the budget covers the whole turn and may exceed max_tokens
    model_class(
        "claude-sonnet-4-6",
        client=object(),
        thinking=ClaudeThinking.budget(16384, interleaved=True),
        max_tokens=4096,
    )


@pytest.mark.parametrize("model_class", [AnthropicModel, BedrockModel])
def test_other_options_are_checked(model_class: Any) -> None:
    with pytest.raises(ConfigurationError, match="effort must be one of"):
        model_class("claude-opus-4-7", client=object(), effort="maximum")
    with pytest.raises(ConfigurationError, match="foreign_reasoning must be 'drop' or 'text'"):
        model_class("claude-opus-4-7", client=object(), foreign_reasoning="keep")
    with pytest.raises(ConfigurationError, match="max_tokens must be a positive integer"):
        model_class("claude-opus-4-7", client=object(), max_tokens=0)


def test_reprs_show_the_model_and_scope_only() -> None:
    import anthropic

    secret = "sk-ant-api03-very-secret-key"
    model = AnthropicModel("claude-opus-4-7", client=anthropic.AsyncAnthropic(api_key=secret))
    assert repr(model) == "AnthropicModel(model_name='claude-opus-4-7', scope='anthropic')"
    assert secret not in repr(model)
    bedrock = BedrockModel("anthropic.claude-opus-4-7-v1:0", client=object())
    assert repr(bedrock) == (
        "BedrockModel(model_name='anthropic.claude-opus-4-7-v1:0', scope='bedrock')"
    )
    assert (model.scope, bedrock.scope) == ("anthropic", "bedrock")


@pytest.mark.parametrize(
    ("model", "name", "default"),
    [
        ("claude-opus-4-7", "claude-opus-4-7", False),
        ("claude-opus-4-7-20260301", "claude-opus-4-7-20260301", False),
        ("claude-opus-4-6", "claude-opus-4-6", False),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20250929", False),
        ("claude-3-7-sonnet-20250219", "claude-3-7-sonnet-20250219", False),
        ("claude-sonnet-5", "claude-sonnet-5", True),
        ("claude-opus-5-5", "claude-opus-5-5", True),
        ("claude-haiku-5-5", "claude-haiku-5-5", True),
        ("claude-mythos-preview", "claude-mythos-preview", True),
        ("claude-fable-5", "claude-fable-5", True),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929", False),
        ("global.anthropic.claude-opus-5-v1:0", "claude-opus-5", True),
        (
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-opus-5-5-v1:0",
            "claude-opus-5-5",
            True,
        ),
        ("gpt-5", None, False),
        ("amazon.nova-pro-v1:0", None, False),
    ],
)
def test_which_models_think_by_default(model: str, name: str | None, default: bool) -> None:
    assert claude_name(model) == name
    assert thinks_by_default(model) is default


@pytest.mark.parametrize(
    ("raw", "normalised"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "tool_call"),
        ("max_tokens", "length"),
        ("model_context_window_exceeded", "model_context_window_exceeded"),
        ("refusal", "refusal"),
        ("guardrail_intervened", "content_filter"),
        ("content_filtered", "content_filter"),
        ("malformed_tool_use", "error"),
        ("pause_turn", "pause_turn"),
        ("a_reason_added_later", None),
        (None, None),
    ],
)
def test_finish_reasons(raw: str | None, normalised: str | None) -> None:
    assert finish_reason(raw) == normalised
    assert (
        AnthropicModel.map_finish_reason(raw) == BedrockModel.map_finish_reason(raw) == normalised
    )


async def test_missing_credentials_are_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_CONFIG_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    model = AnthropicModel("claude-opus-4-7", max_tokens=1024)
    with pytest.raises(ConfigurationError, match="no Anthropic credentials"):
        await Agent(model).run("Hi")
    await model.client.close()


def test_a_bedrock_model_without_a_region_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(ConfigurationError, match="no AWS region"):
        BedrockModel("anthropic.claude-opus-4-7-v1:0")
    model = BedrockModel("anthropic.claude-opus-4-7-v1:0", region_name="eu-west-1")
    config = model.client.meta.config
    assert config.region_name == "eu-west-1"
    assert config.retries["mode"] == "standard"


def test_both_models_implement_the_model_port() -> None:
    assert isinstance(AnthropicModel("claude-opus-4-7", client=object()), Model)  # type: ignore[arg-type]
    assert isinstance(BedrockModel("anthropic.claude-opus-4-7-v1:0", client=object()), Model)
