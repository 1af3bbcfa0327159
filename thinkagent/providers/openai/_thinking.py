"""The thinking knob on the OpenAI family: `OpenAIThinking` and `ModelSettings(thinking=...)`
turned into request fields, per Chat dialect switch and for the Responses API.

`ModelSettings(thinking=...)` decides whether reasoning is on and at which level; a level the
endpoint lacks is clamped to the nearest one it takes (`clamp_thinking`), a switch it lacks is
said in a `WarningEvent`. The model's `OpenAIThinking` fills in the rest (and decides both when
the setting is absent).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigurationError
from ...stream import WarningEvent
from ..base import THINKING_LEVELS, Thinking, ThinkingLevel, clamp_thinking
from ._wire import OpenAIThinking
from .dialects import ChatDialect

__all__ = [
    "ThinkingFields",
    "chat_thinking",
    "check_thinking_config",
    "default_context",
    "model_efforts",
    "reasons",
    "responses_effort",
]

_NO_THINKING = OpenAIThinking()

_NON_REASONING = re.compile(r"^(?:ft:)?(?:gpt-3|gpt-4|gpt-5-chat|chatgpt-)", re.IGNORECASE)
_O_SERIES = re.compile(r"^(?:ft:)?o[134]", re.IGNORECASE)
_GPT = re.compile(r"^(?:ft:)?gpt-(\d+)(?:\.(\d+))?", re.IGNORECASE)


def reasons(model: str) -> bool:
    """Whether an OpenAI model reasons at all (not `gpt-3*`, `gpt-4*`, `gpt-5-chat*`,
    `chatgpt-*`, which answer `reasoning_effort` with `Unsupported parameter`)."""
    return not _NON_REASONING.match(model.lower())


def model_efforts(model: str) -> tuple[str, ...]:
    """The `reasoning_effort` values an OpenAI-family model takes, from its name (the
    published tables: o-series low to high; gpt-5 minimal to high; gpt-5.1 none to high;
    gpt-5.2 to gpt-5.5 up to xhigh; the gpt-5.6 family and later up to max; DeepSeek none,
    low, high, max on Responses; unknown names: none to high)."""
    lower = model.lower()
    if lower.startswith("deepseek"):
        return ("none", "low", "high", "max")
    if _NON_REASONING.match(lower):
        return ()
    if _O_SERIES.match(lower):
        return ("low", "medium", "high")
    gpt = _GPT.match(lower)
    if gpt is not None and int(gpt.group(1)) >= 5:
        version = (int(gpt.group(1)), int(gpt.group(2) or 0))
        if version == (5, 0):
            return ("minimal", "low", "medium", "high")
        if version == (5, 1):
            return ("none", "low", "medium", "high")
        if version < (5, 6):
            return ("none", "low", "medium", "high", "xhigh")
        return ("none", "low", "medium", "high", "xhigh", "max")
    return ("none", "low", "medium", "high")


def default_context(model: str) -> str:
    """The `reasoning.context` a model uses when none is asked for: `all_turns` on the gpt-5.6
    family and later, `current_turn` before it (openai-python `shared_params/reasoning.py`)."""
    gpt = _GPT.match(model.lower())
    if gpt is None:
        return "current_turn"
    return "all_turns" if (int(gpt.group(1)), int(gpt.group(2) or 0)) >= (5, 6) else "current_turn"


@dataclass(slots=True)
class ThinkingFields:
    """What a request gets for thinking: SDK parameters (`reasoning_effort`), extra body fields
    (the dialect's own switches) and the warnings for what was adjusted."""

    params: dict[str, Any] = field(default_factory=dict[str, Any])
    body: dict[str, Any] = field(default_factory=dict[str, Any])
    warnings: list[WarningEvent] = field(default_factory=list[WarningEvent])


def _wire_level(
    level: ThinkingLevel, efforts: tuple[str, ...], *, scope: str, model: str
) -> tuple[str | None, WarningEvent | None]:
    """The effort to send for a shared level (`max` is `xhigh` where there is no `max`),
    clamped to the ones the endpoint takes."""
    ladder: dict[ThinkingLevel, str] = {"low": "low", "medium": "medium", "high": "high"}
    ladder["max"] = "max" if "max" in efforts else "xhigh"
    supported: list[ThinkingLevel] = [lv for lv in THINKING_LEVELS if ladder[lv] in efforts]
    if not supported:
        return None, WarningEvent(
            "thinking_clamped",
            f"{model} takes no thinking level; {level!r} was not sent (the model's default "
            "applies)",
            scope,
        )
    chosen, warning = clamp_thinking(level, supported, scope=scope, model=model)
    return ladder[chosen], warning


def _not_disabled(model: str, scope: str, detail: str = "") -> WarningEvent:
    return WarningEvent(
        "thinking_not_disabled",
        f"{model} cannot turn thinking off{detail}; it stays on",
        scope,
    )


def _efforts(dialect: ChatDialect, model: str) -> tuple[str, ...]:
    return dialect.efforts if dialect.efforts is not None else model_efforts(model)


def check_thinking_config(dialect: ChatDialect, thinking: OpenAIThinking | None) -> None:
    """Refuse an `OpenAIThinking` field the dialect has no switch for (before any request)."""
    if thinking is None:
        return
    switch = dialect.switch
    allowed = {
        "enabled": switch
        in ("deepseek", "kimi", "zai", "openrouter", "together", "qwen", "ollama", "vllm"),
        "format": switch == "reasoning_format",
        "split": switch == "minimax",
        "preserve": switch in ("kimi", "zai", "fireworks"),
        "budget_tokens": switch in ("openrouter", "qwen"),
        "effort": switch not in ("kimi", "qwen", "minimax", "none") and dialect.efforts != (),
    }
    for name, ok in allowed.items():
        if getattr(thinking, name) is not None and not ok:
            raise ConfigurationError(
                f"dialect {dialect.name!r} has no switch for OpenAIThinking.{name} "
                f"(its switch is {switch!r}); leave it unset or pass the field in extra_body"
            )


def chat_thinking(
    dialect: ChatDialect,
    model: str,
    thinking: OpenAIThinking | None,
    knob: Thinking | None,
    *,
    scope: str,
) -> ThinkingFields:
    """The thinking fields of one Chat Completions request (`knob`: the request's
    `ModelSettings(thinking=...)`, which overrides the config's `enabled` and `effort`)."""
    out = ThinkingFields()
    config = thinking or _NO_THINKING
    if knob is None and thinking is None and dialect.switch != "openrouter":
        return out  # nothing to send: the endpoint's defaults
    efforts = _efforts(dialect, model)
    enabled: bool | None = config.enabled
    effort: str | None = config.effort
    if knob is not None:
        enabled, effort = knob is not False, None
        if isinstance(knob, str) and "default" in efforts:  # on or off, no levels (Groq Qwen)
            effort = "default"
            out.warnings.append(
                WarningEvent(
                    "thinking_clamped",
                    f"{model} has no thinking levels; {knob!r} was sent as 'default'",
                    scope,
                )
            )
        elif isinstance(knob, str):
            effort, warning = _wire_level(knob, efforts, scope=scope, model=model)
            if warning is not None:
                out.warnings.append(warning)
    switch = dialect.switch
    if enabled is False and not dialect.can_disable:
        out.warnings.append(_not_disabled(model, scope))
        enabled = None
    if switch in ("reasoning_effort", "reasoning_format", "fireworks"):
        if enabled is False and effort is None:
            if switch == "reasoning_format" and "none" not in efforts:
                out.warnings.append(
                    _not_disabled(model, scope, " through this endpoint's switches")
                )
            else:
                effort = _off_effort(efforts, model, scope, out)
        elif enabled is True and effort is None and "none" in efforts:
            effort = "medium" if "medium" in efforts else next(e for e in efforts if e != "none")
        if switch == "reasoning_format" and config.format is not None:
            out.body["reasoning_format"] = config.format
        if switch == "fireworks" and config.preserve is not None:
            out.body["reasoning_history"] = "preserved" if config.preserve else "interleaved"
    elif switch in ("deepseek", "kimi", "zai"):
        thinking_field: dict[str, Any] = {}
        if enabled is not None:
            thinking_field["type"] = "enabled" if enabled else "disabled"
        if config.preserve is not None:
            if switch == "kimi" and config.preserve:
                thinking_field["keep"] = "all"
            elif switch == "zai":
                thinking_field["clear_thinking"] = not config.preserve
        if thinking_field:
            thinking_field.setdefault("type", "enabled")
            out.body["thinking"] = thinking_field
    elif switch in ("openrouter", "together"):
        reasoning: dict[str, Any] = {}
        if switch == "openrouter":
            if enabled is False:
                reasoning["effort"] = "none"
            elif effort is not None:
                reasoning["effort"], effort = effort, None
            elif config.budget_tokens is not None:
                reasoning["max_tokens"] = config.budget_tokens
            else:
                reasoning["enabled"] = True  # ask for reasoning: it is what is kept and replayed
        elif enabled is not None:
            reasoning["enabled"] = enabled
        if reasoning:
            out.body["reasoning"] = reasoning
    elif switch == "qwen":
        if enabled is not None:
            out.body["enable_thinking"] = enabled
        if config.budget_tokens is not None:
            out.body["thinking_budget"] = config.budget_tokens
    elif switch == "ollama":
        if effort is not None:
            out.body["think"], effort = effort, None
        elif enabled is not None:
            out.body["think"] = enabled
    elif switch == "vllm":
        if enabled is not None:
            out.body["chat_template_kwargs"] = {"enable_thinking": enabled, "thinking": enabled}
    elif switch == "minimax":
        if enabled is False:
            out.warnings.append(_not_disabled(model, scope))
        if config.split is not None:
            out.body["reasoning_split"] = config.split
    elif enabled is False:  # "none": nothing to switch
        out.warnings.append(_not_disabled(model, scope, " (this endpoint has no switch)"))
    if effort is not None:
        out.params["reasoning_effort"] = effort
    return out


def _off_effort(
    efforts: tuple[str, ...], model: str, scope: str, out: ThinkingFields
) -> str | None:
    """The lowest effort, for thinking turned off: `none` where the model takes it."""
    if "none" in efforts:
        return "none"
    out.warnings.append(_not_disabled(model, scope))
    return "minimal" if "minimal" in efforts else None


def responses_effort(
    model: str, thinking: OpenAIThinking | None, knob: Thinking | None, *, scope: str
) -> tuple[str | None, list[WarningEvent]]:
    """The `reasoning.effort` of one Responses request and the warnings for what was
    adjusted."""
    effort = thinking.effort if thinking is not None else None
    if knob is None:
        return effort, []
    out = ThinkingFields()
    efforts = model_efforts(model)
    if knob is False:
        return _off_effort(efforts, model, scope, out), out.warnings
    if knob is True:
        if "none" in efforts:  # off by default: on means the middle
            return "medium" if "medium" in efforts else "high", []
        return effort, []
    level, warning = _wire_level(knob, efforts, scope=scope, model=model)
    return level, [warning] if warning is not None else []
