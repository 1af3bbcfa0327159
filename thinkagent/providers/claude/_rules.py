"""What the Anthropic and Bedrock adapters share: the thinking configuration, Claude's rules
(which models think by default, tool choice, the replay policy, the current tool loop's
thinking rule, finish reasons, usage) and `ClaudeModel`, their base class.

Pure Python: no vendor SDK is imported here. The user-facing names are exported by
`thinkagent.providers.claude`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, get_args

from ...errors import ConfigurationError, HistoryError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    FinishReason,
    Message,
    Part,
    ProviderDetails,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from .._common import AdapterBase, ClientT, merge_settings, tool_choice_name
from ..base import ModelRequest, ModelSettings, ToolDefinition

__all__ = [
    "MIN_BUDGET_TOKENS",
    "ClaudeModel",
    "ClaudeThinking",
    "Effort",
    "ThinkingDisplay",
    "ThinkingType",
    "Turn",
    "check_effort",
    "check_max_tokens",
    "check_thinking_first",
    "check_tool_choice",
    "claude_name",
    "finish_reason",
    "raise_mapped",
    "replay_turns",
    "stop_details",
    "thinking_active",
    "thinks_by_default",
    "token_usage",
]

ThinkingType = Literal["adaptive", "enabled", "disabled"]
ThinkingDisplay = Literal["summarized", "omitted"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]

MIN_BUDGET_TOKENS = 1024
"""The smallest thinking budget Claude accepts."""

_TYPES: tuple[str, ...] = get_args(ThinkingType)
_DISPLAYS: tuple[str, ...] = get_args(ThinkingDisplay)
_EFFORTS: tuple[str, ...] = get_args(Effort)


@dataclass(frozen=True, slots=True)
class ClaudeThinking:
    """How Claude thinks: adaptively, within a token budget, or not at all.

    ```python
    ClaudeThinking.adaptive()                      # {"type": "adaptive"}
    ClaudeThinking.adaptive(display="omitted")     # signed blocks with empty text
    ClaudeThinking.budget(4096)                    # {"type": "enabled", "budget_tokens": 4096}
    ClaudeThinking.disabled()                      # {"type": "disabled"}
    ```

    `display` is `"summarized"` (visible reasoning) or `"omitted"` (empty text, the signature
    still comes back and is replayed); `None` leaves the model's default. Invalid combinations
    raise `ConfigurationError` when the object is built; the model checks the budget against
    its `max_tokens`.
    """

    type: ThinkingType
    budget_tokens: int | None = None
    display: ThinkingDisplay | None = None

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem is not None:
            raise ConfigurationError(problem)

    def _problem(self) -> str | None:
        if self.type not in _TYPES:
            return f"thinking type must be 'adaptive', 'enabled' or 'disabled', got {self.type!r}"
        if self.display is not None and self.display not in _DISPLAYS:
            return f"thinking display must be 'summarized' or 'omitted', got {self.display!r}"
        if self.type == "enabled":
            budget = self.budget_tokens
            if budget is None:
                return (
                    "thinking type 'enabled' needs budget_tokens: use ClaudeThinking.budget(tokens)"
                )
            if not isinstance(budget, int) or isinstance(budget, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
                return f"thinking budget_tokens must be an integer, got {budget!r}"
            if budget < MIN_BUDGET_TOKENS:
                return f"thinking budget_tokens must be at least {MIN_BUDGET_TOKENS}, got {budget}"
            return None
        if self.budget_tokens is not None:
            return (
                f"budget_tokens only applies to thinking type 'enabled', not {self.type!r}: "
                "use ClaudeThinking.budget(tokens)"
            )
        if self.type == "disabled" and self.display is not None:
            return "display does not apply when thinking is disabled"
        return None

    @classmethod
    def adaptive(cls, display: ThinkingDisplay | None = None) -> ClaudeThinking:
        """Claude decides when and how much to think (the default on the newest models)."""
        return cls(type="adaptive", display=display)

    @classmethod
    def budget(cls, tokens: int, display: ThinkingDisplay | None = None) -> ClaudeThinking:
        """Extended thinking with a budget of `tokens` (at least 1024, below `max_tokens`)."""
        return cls(type="enabled", budget_tokens=tokens, display=display)

    @classmethod
    def disabled(cls) -> ClaudeThinking:
        """No thinking (rejected by models that always think adaptively)."""
        return cls(type="disabled")

    def to_param(self) -> dict[str, Any]:
        """The wire form: `thinking` on Anthropic, `additionalModelRequestFields.thinking` on
        Bedrock."""
        param: dict[str, Any] = {"type": self.type}
        if self.budget_tokens is not None:
            param["budget_tokens"] = self.budget_tokens
        if self.display is not None:
            param["display"] = self.display
        return param


def check_effort(effort: str | None) -> None:
    if effort is not None and effort not in _EFFORTS:
        raise ConfigurationError(
            f"effort must be one of {', '.join(repr(e) for e in _EFFORTS)}, got {effort!r}"
        )


def check_max_tokens(max_tokens: int, thinking: ClaudeThinking | None) -> None:
    """`max_tokens` is a positive integer above the thinking budget."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ConfigurationError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    budget = thinking.budget_tokens if thinking is not None else None
    if budget is not None and budget >= max_tokens:
        raise ConfigurationError(
            f"thinking budget_tokens ({budget}) must be below max_tokens "
            f"({max_tokens}): raise max_tokens or lower the budget"
        )


# Opus 4.7 and newer, every Claude 5 model, Mythos and Fable think adaptively when the request
# has no `thinking` field (and only accept adaptive thinking).
_CLAUDE = re.compile(
    r"^claude-(?:(?P<family>opus|sonnet|haiku)-(?P<major>\d+)(?:-(?P<minor>\d{1,2}))?(?:-|@|$)"
    r"|(?P<omajor>\d+)(?:-(?P<ominor>\d{1,2}))?-(?P<ofamily>opus|sonnet|haiku)"
    r"|(?P<new>mythos|fable))"
)
_BEDROCK_VERSION = re.compile(r"-v\d+(?::\d+)?$")


def claude_name(model_id: str) -> str | None:
    """The Claude model name behind an Anthropic model name or a Bedrock model id (region
    prefix, ARN and version suffix removed), or None when it is not a Claude model."""
    start = model_id.find("claude-")
    if start < 0:
        return None
    if start > 0 and not model_id[:start].endswith(("anthropic.", "/")):
        return None
    return _BEDROCK_VERSION.sub("", model_id[start:])


def thinks_by_default(model: str) -> bool:
    """Whether `model` thinks (adaptively) when the request has no `thinking` field."""
    name = claude_name(model)
    if name is None:
        return False
    match = _CLAUDE.match(name)
    if match is None:
        return False
    if match.group("new"):
        return True
    family = match.group("family") or match.group("ofamily")
    major = int(match.group("major") or match.group("omajor"))
    minor = int(match.group("minor") or match.group("ominor") or 0)
    return major >= 5 or (family == "opus" and (major, minor) >= (4, 7))


def thinking_active(thinking: ClaudeThinking | None, model: str) -> bool:
    """Whether a request with this configuration makes `model` think."""
    if thinking is None:
        return thinks_by_default(model)
    return thinking.type != "disabled"


def check_tool_choice(
    choice: str | None, *, thinking: bool, tools: Sequence[ToolDefinition]
) -> None:
    """Refuse, before anything is sent, a tool choice Claude rejects."""
    if choice is None or choice in ("auto", "none"):
        return
    if choice == "required":
        if not tools:
            raise ConfigurationError("tool_choice 'required' needs at least one tool on offer")
    else:
        tool_choice_name(choice, tools)
    if thinking:
        raise ConfigurationError(
            f"tool_choice {choice!r} forces tool use, which Claude refuses while thinking is on: "
            "use tool_choice 'auto' (or 'none'), or turn thinking off with "
            "ClaudeThinking.disabled() on a model that allows it"
        )


_FINISH: Mapping[str, FinishReason] = {
    # Anthropic stop_reason
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    # Bedrock stopReason (the ones Anthropic does not share)
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}


def finish_reason(raw: str | None) -> FinishReason | None:
    """The normalised finish reason (None for `pause_turn` and values it does not know)."""
    if raw is None:
        return None
    return _FINISH.get(raw)


def stop_details(
    stop_reason: str | None, stop_sequence: str | None = None
) -> ProviderDetails | None:
    """`provider_details` for a response: Claude's own stop reason (and stop sequence)."""
    if stop_reason is None:
        return None
    details: ProviderDetails = {"finish_reason": stop_reason}
    if stop_sequence is not None:
        details["stop_sequence"] = stop_sequence
    return details


def token_usage(
    input_tokens: int | None,
    cache_read: int | None,
    cache_write: int | None,
    output_tokens: int | None,
    thinking_tokens: int | None = None,
) -> Usage:
    """Claude's counts in the shared form: its input count leaves the cached tokens out, so
    they are added back in."""
    read = cache_read or 0
    write = cache_write or 0
    return Usage(
        input_tokens=(input_tokens or 0) + read + write,
        output_tokens=output_tokens or 0,
        thinking_tokens=thinking_tokens or 0,
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


Turn = tuple[Literal["user", "assistant"], list[Part]]
"""One message to send: its role and the parts that go on the wire, in order."""


def _proven(block: ThinkingBlock) -> bool:
    """Whether `block` carries a proof Claude verifies: a redacted payload or a signature (an
    empty signature, which no Claude response carries, proves nothing)."""
    return block.redacted is not None or block.signature not in (None, "")


def _as_text(block: ThinkingBlock) -> TextPart:
    return TextPart(text=f"<thinking>\n{block.text}\n</thinking>")


def replay_turns(
    messages: Sequence[Message],
    scope: str,
    *,
    foreign_reasoning: ForeignReasoning,
    native_thinking: bool,
    thinking_required: bool = False,
) -> list[Turn]:
    """The parts to send for `messages`, message by message, under the replay policy.

    Other scopes' proofs are removed first (`for_scope`). Then, in each assistant message,
    signed and redacted thinking stay where they are (only when `native_thinking`: a request
    with thinking explicitly off may not carry any); thinking with no signature is never sent
    as thinking (dropped, or sent as text with `foreign_reasoning="text"`). Empty and
    whitespace-only text is left out, in both roles (Claude refuses it: "text content blocks
    must contain non-whitespace text"). User messages send their tool results first, then
    their text. Messages left empty are skipped and consecutive messages of one
    role are merged (Claude needs alternation).

    With `thinking_required` (the request will think) the result is checked against Claude's
    rule for the current tool loop (`check_thinking_first`): `HistoryError` when it would be
    refused.
    """
    turns: list[Turn] = []
    sources: list[int] = []  # for each turn, the index of the first message it came from
    for index, message in enumerate(
        for_scope(messages, scope, foreign_reasoning=foreign_reasoning)
    ):
        parts: list[Part] = []
        if message.role == "user":
            texts: list[Part] = []
            for part in message.parts:
                if isinstance(part, ToolResult):
                    parts.append(part)
                elif isinstance(part, TextPart) and part.text.strip():
                    texts.append(part)
            parts += texts
        else:
            for part in message.parts:
                if isinstance(part, ThinkingBlock):
                    if _proven(part):
                        if native_thinking:
                            parts.append(part)
                    elif foreign_reasoning == "text" and part.text.strip():
                        parts.append(_as_text(part))
                elif isinstance(part, TextPart):
                    if part.text.strip():
                        parts.append(part)
                elif isinstance(part, ToolCall):
                    parts.append(part)
        if not parts:
            continue
        if turns and turns[-1][0] == message.role:
            previous = turns[-1][1]
            if message.role == "user":
                merged = previous + parts
                parts = [p for p in merged if isinstance(p, ToolResult)]
                parts += [p for p in merged if not isinstance(p, ToolResult)]
                turns[-1] = (message.role, parts)
            else:
                previous += parts
            continue
        turns.append((message.role, parts))
        sources.append(index)
    if thinking_required:
        check_thinking_first(turns, sources)
    return turns


def check_thinking_first(turns: Sequence[Turn], sources: Sequence[int]) -> None:
    """Claude's rule for a request that thinks, checked before anything is sent.

    The current assistant turn is every assistant message after the last user message that is
    not only tool results (tool results continue the turn). When it has tool use, its first
    message must start with a `thinking` or `redacted_thinking` block, else Claude answers 400
    "Expected `thinking` or `redacted_thinking`, but found `tool_use`...". That happens when
    the tool loop was begun by another provider (its reasoning is not this scope's), or its
    thinking has no valid proof (a block cut off by a stream). Raises `HistoryError` naming
    that message (`sources[k]` is the index in the history of turn `k`'s first message).
    """
    last_user = -1
    for k, (role, parts) in enumerate(turns):
        if role == "user" and not any(isinstance(p, ToolResult) for p in parts):
            last_user = k
    current = [k for k in range(last_user + 1, len(turns)) if turns[k][0] == "assistant"]
    if not any(isinstance(p, ToolCall) for k in current for p in turns[k][1]):
        return
    first = turns[current[0]][1][0]
    if isinstance(first, ThinkingBlock):
        return
    found = "tool_use" if isinstance(first, ToolCall) else "text"
    raise HistoryError(
        "Claude requires the assistant turn of the current tool loop to start with its own "
        f"thinking while thinking is on, and this one starts with {found} (the loop was begun "
        "by another provider, or its thinking has no signature valid here). Finish the turn on "
        "the provider that started it, or continue with thinking disabled for this request "
        "(ClaudeThinking.disabled(), on a model that accepts it)",
        message_index=sources[current[0]],
    )


class ClaudeModel(AdapterBase[ClientT, ClaudeThinking]):
    """The base of both Claude adapters: the options every adapter has, and `effort` and
    `max_tokens`, all read-only and checked (the budget against `max_tokens`) before the
    client is built."""

    def __init__(
        self,
        model_name: str,
        *,
        client: ClientT | None,
        default_client: Callable[[], ClientT],
        scope: str,
        thinking: ClaudeThinking | None,
        effort: Effort | None,
        max_tokens: int,
        foreign_reasoning: ForeignReasoning,
        settings: ModelSettings | None,
    ) -> None:
        check_effort(effort)
        check_max_tokens(max_tokens, thinking)
        if settings and "max_tokens" in settings:
            check_max_tokens(settings["max_tokens"], thinking)
        super().__init__(
            model_name,
            client=default_client() if client is None else client,
            scope=scope,
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._effort: Effort | None = effort
        self._max_tokens = max_tokens
        self._thinking_on = thinking_active(thinking, model_name)
        # With no configuration the model's default decides, which the name may not tell
        # (an inference profile ARN, a model newer than these rules): this scope's signed
        # thinking goes back as it is (the model produced it, so it was thinking). Only an
        # explicit `disabled` leaves it out.
        self._replay_thinking = thinking is None or thinking.type != "disabled"

    @property
    def effort(self) -> Effort | None:
        """How much effort the model spends (`output_config.effort`), or None for its default."""
        return self._effort

    @property
    def max_tokens(self) -> int:
        """The default output limit (a request's `max_tokens` setting overrides it)."""
        return self._max_tokens

    def _replay(self, messages: Sequence[Message]) -> list[Turn]:
        """The turns to send for `messages` (see `replay_turns`), checked against Claude's
        thinking rule when the request is known to think."""
        return replay_turns(
            messages,
            self.scope,
            foreign_reasoning=self.foreign_reasoning,
            native_thinking=self._replay_thinking,
            thinking_required=self._thinking_on,
        )

    def _request_settings(self, request: ModelRequest) -> tuple[ModelSettings, int]:
        """The request's settings over the model's and the `max_tokens` to send, with both it
        and the tool choice checked."""
        settings = merge_settings(self.settings, request.settings)
        max_tokens = settings.get("max_tokens", self._max_tokens)
        if max_tokens != self._max_tokens:
            check_max_tokens(max_tokens, self.thinking)
        check_tool_choice(
            settings.get("tool_choice"), thinking=self._thinking_on, tools=request.tools
        )
        return settings, max_tokens


def raise_mapped(error: BaseException, cause: BaseException) -> NoReturn:
    """Raise `error`, what `map_error` made of the vendor exception `cause`, chained to it; an
    exception `map_error` did not know comes back as `cause` and is raised as it is (never
    chained to itself)."""
    if error is cause:
        raise cause
    raise error from cause
