"""What the Anthropic and Bedrock adapters share: the thinking configuration, the mapping of the
one thinking knob, Claude's replay policy (scopes, model readability, preserved thinking's prefix
check, the current tool loop's thinking rule), finish reasons, usage, and `ClaudeModel`, their
base class.

Pure Python: no vendor SDK is imported here. The user-facing names are exported by
`thinkagent.providers.claude`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any, Generic, Literal, NoReturn, TypeVar, cast, get_args

from pydantic import JsonValue

from ..._memo import shared
from ...errors import ConfigurationError, HistoryError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    Document,
    FinishReason,
    Image,
    Message,
    OpaqueBlock,
    Part,
    ProviderDetails,
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import WarningEvent
from .._common import (
    AdapterBase,
    ClientT,
    check_prompt_cache,
    merge_settings,
    tool_choice_name,
)
from .._system_notes import (
    check_note_tools,
    current_prompt,
    note_text,
    notes_as_text_warning,
    same_turn,
    shown_notes,
)
from ..base import (
    ModelRequest,
    ModelSettings,
    PromptCacheTTL,
    Thinking,
    ToolDefinition,
    check_thinking,
)
from ._binding import DIGESTS, PrefixChain
from ._models import ClaudeInfo, ThinkingKind, claude_info
from ._notes import BASE, base_details, kept_base, note_for, recorded_base

__all__ = [
    "BINDING_BETA",
    "CLAUDE_PLATFORMS",
    "CLEAR_AT_BETA",
    "MIN_BUDGET_TOKENS",
    "NO_NOTES_PLATFORMS",
    "OPENING",
    "TOOL_CHANGES_BETA",
    "ClaudeModel",
    "ClaudeThinking",
    "Effort",
    "PrefixMismatchBehavior",
    "Prepared",
    "PromptCache",
    "ThinkingDisplay",
    "ThinkingType",
    "Turn",
    "check_effort",
    "check_max_tokens",
    "finish_reason",
    "raise_mapped",
    "thinking_signers",
    "thinks_by_default",
    "token_usage",
    "transformations_warning",
]

ThinkingType = Literal["adaptive", "enabled", "disabled", "between_tools"]
ThinkingDisplay = Literal["summarized", "omitted", "updates"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
PrefixMismatchBehavior = Literal["error", "drop_block"]

MIN_BUDGET_TOKENS = 1024
"""The smallest thinking budget Claude accepts."""

BINDING_BETA = "thinking-binding-controls-2026-08-01"
"""The beta that lets a request set `thinking.block_binding`."""
_DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"
TOOL_CHANGES_BETA = "mid-conversation-tool-changes-2026-07-01"
"""The beta of `tool_addition` / `tool_removal` by reference in a system message."""
CLEAR_AT_BETA = "mid-conversation-system-clear-at-2026-08-21"
"""The beta of a system message's `clear_at`."""
_INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"

CLAUDE_PLATFORMS = frozenset(
    {"anthropic", "bedrock", "anthropic-aws", "anthropic-vertex", "anthropic-foundry"}
)
"""The scopes of Claude's own platforms (the Claude API, Amazon Bedrock, Claude Platform on
AWS, Google Cloud, Microsoft Foundry), whose thinking signatures Anthropic documents as
compatible across them (gated by model readability, prefix and account): a Claude conversation
may move between them and keep its thinking. Any other endpoint is a scope of its own."""

NO_NOTES_PLATFORMS = frozenset({"anthropic-foundry"})
"""Claude's platforms without mid-conversation system messages (Microsoft Foundry). The Claude
API, Claude Platform on AWS, Amazon Bedrock and Google Cloud take them, on the models that
do, as does any other endpoint serving a Claude model by its name (a gateway, the emulator)."""

OPENING = "Please go ahead."
"""The user turn sent first when a conversation opens with the model's message (a run started
from instructions alone): the Messages API needs a user message first. Never kept."""

_TYPES: tuple[str, ...] = get_args(ThinkingType)
_DISPLAYS: tuple[str, ...] = get_args(ThinkingDisplay)
_EFFORTS: tuple[str, ...] = get_args(Effort)
_BEHAVIORS: tuple[str, ...] = get_args(PrefixMismatchBehavior)

_BUDGETS: Mapping[str, int] = {"low": 2048, "medium": 4096, "high": 8192, "max": 16384}
"""The thinking budget each level of the thinking knob asks for on models that only think
within a budget (Claude 4.5 and earlier); `True` asks for `medium`."""

_BINDING = "block_binding"
"""The `provider_details` key recording the prefix mismatch behaviour a message was produced
with: `drop_block` must be sent on every later request of the conversation (the service does not
remember it between requests)."""

_TRANSFORMATIONS = "input_transformations"

_FALLBACK_BLOCKS = "fallback_blocks"
"""The `provider_details` key of the positions of a response's `fallback` blocks: each goes
back exactly there (the service validates the thinking on each side of it as one model's)."""

_STOP_DETAILS = "stop_details"


@dataclass(frozen=True, slots=True)
class ClaudeThinking:
    """How Claude thinks: adaptively, within a token budget, only between tools, or not at all.

    ```python
    ClaudeThinking.adaptive()                      # {"type": "adaptive"}
    ClaudeThinking.adaptive(display="omitted")     # signed blocks with empty text
    ClaudeThinking.adaptive(prefix_mismatch_behavior="drop_block")
    ClaudeThinking.budget(4096)                    # {"type": "enabled", "budget_tokens": 4096}
    ClaudeThinking.budget(16384, interleaved=True) # a budget for the whole tool loop
    ClaudeThinking.between_tools()                 # Sonnet 5.5: progress updates between tools
    ClaudeThinking.disabled()                      # {"type": "disabled"}
    ```

    `display` is `"summarized"` (visible reasoning), `"omitted"` (empty text, the signature
    still comes back and is replayed) or `"updates"` (short progress updates; beta); `None`
    leaves the model's default. `prefix_mismatch_behavior` is what the service does with a
    replayed block whose prefix changed on models with preserved thinking: `"error"` (a 400,
    which thinkagent raises as `HistoryError` before sending when it can tell) or
    `"drop_block"` (the service drops it and reports it: a `thinking_dropped` warning); `None`
    lets thinkagent leave such blocks out before sending, with a `thinking_stripped` warning.
    `interleaved` (with a budget) lets Claude think between tool calls, the budget then covering
    the whole turn (it may exceed `max_tokens`). The beta headers these need are sent for you.

    Invalid combinations raise `ConfigurationError` when the object is built; the model checks
    the rest (what it accepts, the budget against its `max_tokens`) when it is built.
    """

    type: ThinkingType
    budget_tokens: int | None = None
    display: ThinkingDisplay | None = None
    prefix_mismatch_behavior: PrefixMismatchBehavior | None = None
    interleaved: bool = False

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem is not None:
            raise ConfigurationError(problem)

    def _problem(self) -> str | None:
        if self.type not in _TYPES:
            return (
                "thinking type must be 'adaptive', 'enabled', 'disabled' or 'between_tools', "
                f"got {self.type!r}"
            )
        if self.display is not None and self.display not in _DISPLAYS:
            return f"thinking display must be 'summarized', 'omitted' or 'updates', got {self.display!r}"
        behavior = self.prefix_mismatch_behavior
        if behavior is not None and behavior not in _BEHAVIORS:
            return f"prefix_mismatch_behavior must be 'error' or 'drop_block', got {behavior!r}"
        if behavior is not None and self.type not in ("adaptive", "enabled"):
            return "prefix_mismatch_behavior applies to adaptive or budgeted thinking only"
        if self.interleaved and self.type != "enabled":
            return "interleaved applies to budgeted thinking only: adaptive thinking interleaves"
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
        if self.type in ("disabled", "between_tools") and self.display is not None:
            return f"display does not apply to thinking type {self.type!r}"
        return None

    @classmethod
    def adaptive(
        cls,
        display: ThinkingDisplay | None = None,
        *,
        prefix_mismatch_behavior: PrefixMismatchBehavior | None = None,
    ) -> ClaudeThinking:
        """Claude decides when and how much to think (the default on the newest models)."""
        return cls(
            type="adaptive", display=display, prefix_mismatch_behavior=prefix_mismatch_behavior
        )

    @classmethod
    def budget(
        cls,
        tokens: int,
        display: ThinkingDisplay | None = None,
        *,
        interleaved: bool = False,
        prefix_mismatch_behavior: PrefixMismatchBehavior | None = None,
    ) -> ClaudeThinking:
        """Extended thinking with a budget of `tokens` (at least 1024, below `max_tokens`
        unless `interleaved`)."""
        return cls(
            type="enabled",
            budget_tokens=tokens,
            display=display,
            interleaved=interleaved,
            prefix_mismatch_behavior=prefix_mismatch_behavior,
        )

    @classmethod
    def between_tools(cls) -> ClaudeThinking:
        """No thinking up front; short signed progress updates between tool calls (Sonnet 5.5,
        where it replaces `disabled`)."""
        return cls(type="between_tools")

    @classmethod
    def disabled(cls) -> ClaudeThinking:
        """No thinking (refused by the models that always think)."""
        return cls(type="disabled")

    @property
    def betas(self) -> tuple[str, ...]:
        """The `anthropic-beta` values this configuration needs."""
        betas: list[str] = []
        if self.prefix_mismatch_behavior is not None:
            betas.append(BINDING_BETA)
        if self.display == "updates":
            betas.append(_DISPLAY_UPDATES_BETA)
        if self.interleaved:
            betas.append(_INTERLEAVED_BETA)
        return tuple(betas)

    def to_param(self) -> dict[str, Any]:
        """The wire form: `thinking` on Anthropic, `additionalModelRequestFields.thinking` on
        Bedrock."""
        param: dict[str, Any] = {"type": self.type}
        if self.budget_tokens is not None:
            param["budget_tokens"] = self.budget_tokens
        if self.display is not None:
            param["display"] = self.display
        if self.prefix_mismatch_behavior is not None:
            param["block_binding"] = {"prefix_mismatch_behavior": self.prefix_mismatch_behavior}
        return param


def check_effort(effort: str | None) -> None:
    if effort is not None and effort not in _EFFORTS:
        raise ConfigurationError(
            f"effort must be one of {', '.join(repr(e) for e in _EFFORTS)}, got {effort!r}"
        )


def check_max_tokens(max_tokens: int, thinking: ClaudeThinking | None) -> None:
    """`max_tokens` is a positive integer above the thinking budget (unless the thinking is
    interleaved: the budget then covers the whole turn)."""
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ConfigurationError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    if thinking is None or thinking.interleaved:
        return
    budget = thinking.budget_tokens
    if budget is not None and budget >= max_tokens:
        raise ConfigurationError(
            f"thinking budget_tokens ({budget}) must be below max_tokens "
            f"({max_tokens}): raise max_tokens, lower the budget, or interleave the thinking "
            "(ClaudeThinking.budget(tokens, interleaved=True))"
        )


def thinks_by_default(model: str) -> bool:
    """Whether `model` thinks (adaptively) when the request has no `thinking` field."""
    info = claude_info(model)
    return info is not None and info.thinks_by_default


def _refuse(info: ClaudeInfo | None, model: str, kind: ThinkingKind) -> None:
    """`ConfigurationError` with the service's own reason when `model` refuses thinking `kind`."""
    reason = info.refusal(kind) if info is not None else None
    if reason is not None:
        raise ConfigurationError(f"{model} refuses this thinking configuration: {reason}")


def _check_effort_with(
    info: ClaudeInfo | None, kind: str | None, effort: str | None, model: str
) -> None:
    """Efforts the model refuses with this thinking: above `high` with thinking off on Opus 5
    and with `between_tools` (Anthropic does not publish these refusals' words)."""
    if effort not in ("xhigh", "max") or info is None:
        return
    if kind == "between_tools" or (kind == "disabled" and info.is_("opus", (5, 0))):
        raise ConfigurationError(
            f"{model} refuses effort {effort!r} with thinking {kind!r}: use 'low', 'medium' or "
            "'high'"
        )


def _knob(
    info: ClaudeInfo | None,
    knob: Thinking,
    config: ClaudeThinking | None,
    effort: Effort | None,
    max_tokens: int,
    *,
    scope: str,
    model: str,
) -> tuple[ClaudeThinking | None, Effort | None, list[WarningEvent]]:
    """The thinking and effort a request sends for the thinking knob (`ModelSettings`), over
    the model's own configuration (ADR 34): adaptive thinking with the level as its effort on
    models that take it, a budget on the older ones, `disabled` where thinking can be turned
    off. The configuration's `display`, prefix behaviour and interleaving are kept."""
    warnings: list[WarningEvent] = []
    display = (
        config.display if config is not None and config.type in ("adaptive", "enabled") else None
    )
    behavior = config.prefix_mismatch_behavior if config is not None else None
    if knob is False:
        if effort in ("xhigh", "max") and info is not None and info.is_("opus", (5, 0)):
            warnings.append(
                _clamped(model, scope, f"effort {effort!r} with thinking off", "'high'")
            )
            effort = "high"
        if info is None or info.can_disable:
            return ClaudeThinking.disabled(), effort, warnings
        if info.refusal("between_tools") is None:
            note = "between_tools was used (no thinking up front, short updates between tools)"
            warnings.append(_not_disabled(model, scope, note))
            return ClaudeThinking.between_tools(), effort, warnings
        warnings.append(_not_disabled(model, scope, "it keeps thinking adaptively"))
        return ClaudeThinking.adaptive(display, prefix_mismatch_behavior=behavior), effort, warnings
    if info is not None and not info.adaptive:
        level = "medium" if knob is True else knob
        budget = _BUDGETS[level]
        interleaved = config is not None and config.interleaved
        if not interleaved and budget >= max_tokens:
            if max_tokens - 1 < MIN_BUDGET_TOKENS:
                raise ConfigurationError(
                    f"max_tokens ({max_tokens}) leaves no room for a thinking budget on {model} "
                    f"(at least {MIN_BUDGET_TOKENS} tokens, below max_tokens): raise max_tokens"
                )
            warnings.append(
                _clamped(
                    model,
                    scope,
                    f"a {level!r} budget of {budget} tokens",
                    f"{max_tokens - 1} (below max_tokens)",
                )
            )
            budget = max_tokens - 1
        thinking = ClaudeThinking.budget(
            budget, display, interleaved=interleaved, prefix_mismatch_behavior=behavior
        )
        return thinking, effort, warnings
    chosen: Effort | None = effort if knob is True else knob
    return ClaudeThinking.adaptive(display, prefix_mismatch_behavior=behavior), chosen, warnings


def _clamped(model: str, scope: str, asked: str, used: str) -> WarningEvent:
    return WarningEvent(
        code="thinking_clamped",
        message=f"{model} cannot take {asked}; {used} was used instead",
        scope=scope,
    )


def _not_disabled(model: str, scope: str, how: str) -> WarningEvent:
    return WarningEvent(
        code="thinking_not_disabled",
        message=f"{model} cannot turn thinking off: {how}",
        scope=scope,
    )


def _check_tool_choice(
    choice: str | None,
    *,
    kind: str | None,
    info: ClaudeInfo | None,
    tools: Sequence[ToolDefinition],
    model: str,
) -> None:
    """Refuse, before anything is sent, a tool choice Claude rejects: a forced choice with a
    thinking budget, and on the models that refuse it on every request."""
    if choice is None or choice in ("auto", "none"):
        return
    if choice == "required":
        if not tools:
            raise ConfigurationError("tool_choice 'required' needs at least one tool on offer")
    else:
        tool_choice_name(choice, tools)
    if kind == "enabled":
        raise ConfigurationError(
            f"tool_choice {choice!r} forces tool use, which Claude refuses with a thinking "
            "budget: use tool_choice 'auto' (or 'none'), or adaptive thinking on a model that "
            "takes it"
        )
    if info is not None and info.refuses_forced_tools:
        raise ConfigurationError(
            f'{model} refuses tool_choice {choice!r}: tool_choice: type "tool" and "any" are '
            "not supported for this model. Use tool_choice 'auto' (or 'none')"
        )


_FINISH: Mapping[str, FinishReason] = {
    # Anthropic stop_reason
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_call",
    "max_tokens": "length",
    "model_context_window_exceeded": "model_context_window_exceeded",
    "refusal": "refusal",
    "pause_turn": "pause_turn",
    # Bedrock stopReason (the ones Anthropic does not share)
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}


def finish_reason(raw: str | None) -> FinishReason | None:
    """The normalised finish reason (None for values it does not know)."""
    if raw is None:
        return None
    return _FINISH.get(raw)


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


def transformations_warning(
    transformations: Sequence[Mapping[str, Any]], scope: str
) -> WarningEvent | None:
    """The `thinking_dropped` warning for a response's `input_transformations` (the thinking
    blocks the service dropped, with why), or None when it dropped none. Types and reasons the
    adapter does not know are reported as they are; other entries are ignored."""
    if not transformations:
        return None
    dropped = [
        f"{t.get('path', '?')} ({t.get('reason', 'unknown reason')})"
        for t in transformations
        if t.get("type") == "thinking_dropped"
    ]
    if not dropped:
        return None
    return WarningEvent(
        code="thinking_dropped",
        message=(
            f"the service dropped {len(dropped)} thinking block(s) it could not use: "
            + ", ".join(dropped)
        ),
        scope=scope,
    )


Role = Literal["user", "assistant", "system"]

Turn = tuple[Role, list[Part]]
"""One message to send: its role and the parts that go on the wire, in order (a `system`
turn holds the `SystemNote`s sent as one mid-conversation system message)."""


def _proven(block: ThinkingBlock) -> bool:
    """Whether `block` carries a proof Claude verifies: a redacted payload or a signature (an
    empty signature, which no Claude response carries, proves nothing)."""
    return block.redacted is not None or block.signature not in (None, "")


def _as_text(block: ThinkingBlock) -> TextPart:
    return TextPart(text=f"<thinking>\n{block.text}\n</thinking>")


def _sendable(part: Part) -> bool:
    """Whether a part that is not thinking goes on the wire in its message (Claude refuses
    blank text: "text content blocks must contain non-whitespace text"; a system note goes in
    a system message of its own)."""
    if isinstance(part, TextPart):
        return bool(part.text.strip())
    return not isinstance(part, SystemNote)


@dataclass(slots=True)
class _Origin:
    """Where a thinking block to send comes from, and the prefix digest it was recorded with."""

    message: int
    part: int
    digest: str | None


@dataclass(slots=True)
class _Entry:
    """One turn being built: its parts, and for each thinking part its origin."""

    role: Role
    parts: list[Part]
    origins: list[_Origin | None] | None  # None: not tracked (no prefix check)
    source: int  # the index in the history of its first message
    last: int | None = None  # the index of the message its last parts come from


_STEP = "claude-step"
_TURNS = "claude-turns"
_LINK = "claude-prefix"


@dataclass(frozen=True, slots=True)
class _Folded:
    """The turns of a history's first messages as `ClaudeModel._replay` folded them (never
    changed: a request resuming from them copies the last, which later messages may merge
    into), and the models whose thinking they hold that this one cannot read."""

    entries: tuple[_Entry, ...]
    unreadable: tuple[str, ...]
    prompt: int  # where the current turn started when they were folded (`same_turn`)


@dataclass(frozen=True, slots=True)
class _Step:
    """What one message sends, whatever comes before or after it (`ClaudeModel._step`): its
    role and parts; for each part, `(part index, recorded digest)` when it is a thinking block
    sent as itself (the prefix check's input), else None; a user message's notes with their
    part indexes (none when they went as text); the models whose thinking it holds that this
    one cannot read. The warnings name `index`, where it was."""

    role: Role
    parts: list[Part]
    marks: list[tuple[int, str | None] | None]
    notes: list[tuple[int, SystemNote]]
    unreadable: list[str]
    index: int


@dataclass(frozen=True, slots=True)
class _Link:
    """The prefix chain after one turn (`ClaudeModel._check_prefix`): the link before it, the
    turn's parts as they came (held, and compared by their ids), the parts that go, the
    positions of the thinking blocks left out, the chain after the turn, and the binding and
    the thinking blocks' recorded digests it was checked with."""

    parent: _Link | None
    given: tuple[Part, ...]
    ids: tuple[int, ...]
    kept: list[Part]
    stripped: tuple[int, ...]
    chain: PrefixChain
    binding: PrefixMismatchBehavior | None
    digests: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class _ChainPass:
    """What `ClaudeModel._check_prefix` found, turn by turn, for the conversation's next
    request: the link it started from, the turns it checked, and after each of them the link,
    how many turns were kept, the last of them, and how many blocks were left out. A kept turn
    is never changed once another follows it, and the last is replaced, not changed, when a
    turn merges into it: what was kept after each turn holds."""

    root: _Link
    entries: tuple[_Entry, ...]
    links: tuple[_Link, ...]
    counts: tuple[int, ...]
    tails: tuple[_Entry | None, ...]
    kept: tuple[_Entry, ...]
    stripped: tuple[_Origin, ...]
    dropped: tuple[int, ...]


_CHAIN_PASS = "claude-chain-pass"
_DROP_BLOCK = "claude-ran-with-drop-block"

_OPENING = TextPart(text=OPENING)

_ROOTS = 16
"""How many starts of the prefix chain (system, tools, binding) an adapter keeps."""


def _link(
    parent: _Link,
    entry: _Entry,
    binding: PrefixMismatchBehavior | None,
    ids: tuple[int, ...],
    digests: tuple[str | None, ...],
) -> _Link:
    """The link after `entry`: its parts fed into a copy of the chain so far, each thinking
    block checked against the digest it was recorded with (`ClaudeModel._check_prefix`)."""
    chain = parent.chain.copy()
    kept: list[Part] = []
    stripped: list[int] = []
    for position, (part, origin) in enumerate(zip(entry.parts, entry.origins or (), strict=True)):
        if isinstance(part, ThinkingBlock) and origin is not None:
            expected = chain.block()
            if binding != "drop_block" and origin.digest not in (None, expected):
                if binding == "error":
                    raise HistoryError(
                        _MISMATCH, message_index=origin.message, part_index=origin.part
                    )
                stripped.append(position)
                continue
            chain.keep(part)
        elif not isinstance(part, ThinkingBlock):
            chain.add(entry.role, part)
        kept.append(part)
    return _Link(parent, tuple(entry.parts), ids, kept, tuple(stripped), chain, binding, digests)


@dataclass(frozen=True, slots=True)
class PromptCache:
    """Where a request's cache breakpoints go, worked out once for both wires: one at the end of
    `tools` and `system` (on the system text, or the last tool without one), and one at the end
    of each of the last two user turns (`marks`: turn and part indexes), the later ending what
    this request adds, the earlier what the request before it sent (a tool loop's previous
    request, or the previous run's last one), so the service finds that prefix whatever was
    added since. Only user turns are marked: never a thinking block, which may carry no
    breakpoint. `ttl` is the lifetime asked for (None: the service's default, 5 minutes)."""

    ttl: PromptCacheTTL | None
    marks: tuple[tuple[int, int], ...]


def _cache_marks(turns: Sequence[Turn]) -> tuple[tuple[int, int], ...]:
    """The last part that can carry a breakpoint in each of the last two user turns."""
    marks: list[tuple[int, int]] = []
    for k in range(len(turns) - 1, -1, -1):
        role, parts = turns[k]
        if role != "user":
            continue
        for j in range(len(parts) - 1, -1, -1):
            if isinstance(parts[j], _MARKABLE):
                marks.append((k, j))
                break
        if len(marks) == 2:
            break
    return tuple(reversed(marks))


_MARKABLE = (TextPart, ToolResult, Image, Document)
"""The parts of a user turn a breakpoint may sit on."""


@dataclass(slots=True)
class Prepared:
    """What one request sends, worked out once for both wires: the settings and `max_tokens`,
    the thinking and effort (after the thinking knob), the beta flags, the turns under the
    replay policy, the prefix chain that continues into the response (None when the model does
    not bind thinking to its prefix), the prefix mismatch behaviour in force, and the warnings
    to report with the response, and the cache breakpoints (None: prompt caching off).
    `system` and `tools` are what goes as the top-level system and tools (the conversation's
    base, kept while system notes account for the request's own; `deferred` names the tools
    that go hidden until a note adds them), and `record` the base the response records (the
    request's own system and tools, when it sent them). `sources` names, for each turn, the
    message its last parts come from: a turn's wire form is kept with it (ADR 180)."""

    settings: ModelSettings
    max_tokens: int
    thinking: ClaudeThinking | None
    effort: Effort | None
    betas: tuple[str, ...]
    turns: list[Turn]
    chain: PrefixChain | None
    binding: PrefixMismatchBehavior | None
    warnings: list[WarningEvent] = field(default_factory=list[WarningEvent])
    cache: PromptCache | None = None
    system: str | None = None
    tools: tuple[ToolDefinition, ...] = ()
    deferred: frozenset[str] = frozenset()
    record: ProviderDetails | None = None
    sources: list[Message | None] = field(default_factory=list[Message | None])


EncodedT = TypeVar("EncodedT")


@dataclass(frozen=True, slots=True)
class _TurnsEncoded(Generic[EncodedT]):
    """The turns a request sent, as `ClaudeModel._turns_encoded` encoded them: their parts,
    their encodings, and the turns that carried a breakpoint (whose encodings hold it)."""

    parts: tuple[list[Part], ...]
    encoded: tuple[EncodedT, ...]
    marked: frozenset[int]


_TURN_ENCODED = "claude-turn-encoded"


class ClaudeModel(AdapterBase[ClientT, ClaudeThinking]):
    """The base of both Claude adapters: the options every adapter has, and `effort` and
    `max_tokens`, all read-only and checked before the client is built (what the model refuses,
    with the service's own reason; the budget against `max_tokens`)."""

    def __init__(
        self,
        model_name: str,
        *,
        client: ClientT,
        scope: str,
        thinking: ClaudeThinking | None,
        effort: Effort | None,
        max_tokens: int,
        foreign_reasoning: ForeignReasoning,
        settings: ModelSettings | None,
    ) -> None:
        info = claude_info(model_name)
        check_effort(effort)
        check_max_tokens(max_tokens, thinking)
        if settings and "max_tokens" in settings:
            check_max_tokens(settings["max_tokens"], thinking)
        if thinking is not None:
            _refuse(info, model_name, thinking.type)
        _check_effort_with(info, thinking.type if thinking else None, effort, model_name)
        super().__init__(
            model_name,
            client=client,
            scope=scope,
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._info = info
        self._effort: Effort | None = effort
        self._max_tokens = max_tokens
        self._compatible: frozenset[str] = (
            CLAUDE_PLATFORMS - {scope} if scope in CLAUDE_PLATFORMS else frozenset()
        )
        self._caches = True
        """Whether requests get cache breakpoints (unless `prompt_cache=False`)."""
        self._binds = info is not None and info.binds_prefix
        """Whether the model binds thinking to its prefix (preserved thinking)."""
        self._roots: dict[tuple[bytes, PrefixMismatchBehavior | None], _Link] = {}
        """Where the prefix chain starts, by system, tools and binding (`_prefix_root`)."""
        self._takes_notes = (
            info is not None and info.takes_system_messages and scope not in NO_NOTES_PLATFORMS
        )
        """Whether the model and platform take mid-conversation system messages."""
        self._deferred_tools = True
        """Whether the wire can declare a tool hidden until a note adds it (`defer_loading`)."""
        self._turn_scoped_notes = True
        """Whether the wire can send a note's `clear_at`."""

    @property
    def effort(self) -> Effort | None:
        """How much effort the model spends (`output_config.effort`), or None for its default."""
        return self._effort

    @property
    def max_tokens(self) -> int:
        """The default output limit (a request's `max_tokens` setting overrides it)."""
        return self._max_tokens

    @property
    def takes_system_notes(self) -> bool:
        """Whether this model, on this platform, takes mid-conversation system messages (the
        `SystemNote`s of a history go as such; elsewhere their text goes as the user's)."""
        return self._takes_notes

    def system_note_for(
        self,
        messages: Sequence[Message],
        instructions: str | None,
        tools: Sequence[ToolDefinition],
    ) -> SystemNote | None:
        """The note to append to `messages` so that a run with these `instructions` and `tools`
        keeps the system and tools the conversation's thinking was produced under, or None
        when nothing changed, or the model (or platform) has no mid-conversation system
        messages or no thinking bound to them. The agent appends it at the end of the run's
        user turn (`Agent` asks every model that has this method)."""
        if not (self._takes_notes and self._binds):
            return None
        base = recorded_base(messages, {self.scope, *self._compatible})
        if base is None:
            return None
        return note_for(base, messages, instructions, tools, new_tools=self._deferred_tools)

    def _prepare(self, request: ModelRequest, tools: Sequence[ToolDefinition]) -> Prepared:
        """Everything one request sends but its wire shapes: `tools` are the tool declarations
        the wire sends (they are part of the prefix thinking is bound to)."""
        settings = merge_settings(self.settings, request.settings)
        max_tokens = settings.get("max_tokens", self._max_tokens)
        thinking, effort = self.thinking, self._effort
        warnings: list[WarningEvent] = []
        if "thinking" in settings:
            knob = check_thinking(settings["thinking"])
            thinking, effort, warnings = self._thinking_knob(knob, thinking, effort, max_tokens)
        if max_tokens != self._max_tokens or thinking is not self.thinking:
            check_max_tokens(max_tokens, thinking)
        kind = thinking.type if thinking is not None else None
        _check_tool_choice(
            settings.get("tool_choice"),
            kind=kind,
            info=self._info,
            tools=request.tools,
            model=self.model_name,
        )
        thinking, binding = self._binding(thinking, request.messages)
        warnings += self._notes_as_text(request)
        system, sent, deferred, record = self._base(request, tools)
        chain = (
            PrefixChain(system, [t for t in sent if t.name not in deferred])
            if self._binds
            else None
        )
        turns, sources = self._replay(
            request.messages,
            chain=chain,
            binding=binding,
            native_thinking=kind != "disabled",
            budgeted=kind == "enabled",
            warnings=warnings,
        )
        cache = check_prompt_cache(settings["prompt_cache"]) if "prompt_cache" in settings else True
        betas = list(thinking.betas) if thinking is not None else []
        notes = [p for role, parts in turns if role == "system" for p in parts]
        if any(isinstance(n, SystemNote) and (n.add_tools or n.remove_tools) for n in notes):
            betas.append(TOOL_CHANGES_BETA)
        if any(isinstance(n, SystemNote) and n.clear_at is not None for n in notes):
            betas.append(CLEAR_AT_BETA)
        return Prepared(
            settings=settings,
            max_tokens=max_tokens,
            thinking=thinking,
            effort=effort,
            betas=tuple(betas),
            turns=turns,
            chain=chain,
            binding=binding,
            warnings=warnings,
            cache=(
                PromptCache(None if cache is True else cache, _cache_marks(turns))
                if cache is not False and self._caches
                else None
            ),
            system=system,
            tools=sent,
            deferred=deferred,
            record=record,
            sources=sources,
        )

    def _base(
        self, request: ModelRequest, tools: Sequence[ToolDefinition]
    ) -> tuple[str | None, tuple[ToolDefinition, ...], frozenset[str], ProviderDetails | None]:
        """The system and tools a request sends, the names of those that go deferred, and the
        base its response records: the conversation's base while the history's notes account
        for the request's instructions and tools (`_notes`), else the request's own, recorded
        as the new base on the models that bind thinking and take notes."""
        own = (request.instructions, tuple(tools), frozenset[str](), None)
        if not (self._takes_notes and self._binds):
            return own
        base = recorded_base(request.messages, {self.scope, *self._compatible})
        kept = kept_base(base, request.messages, request.instructions, tools) if base else None
        if kept is not None and (self._deferred_tools or not kept[2]):
            return (*kept, None)
        return (*own[:3], base_details(request.instructions, tools))

    def _thinking_knob(
        self,
        knob: Thinking,
        thinking: ClaudeThinking | None,
        effort: Effort | None,
        max_tokens: int,
    ) -> tuple[ClaudeThinking | None, Effort | None, list[WarningEvent]]:
        """The thinking and effort a request sends for the thinking knob (`_knob`)."""
        return _knob(
            self._info, knob, thinking, effort, max_tokens, scope=self.scope, model=self.model_name
        )

    def _binding(
        self, thinking: ClaudeThinking | None, messages: Sequence[Message]
    ) -> tuple[ClaudeThinking | None, PrefixMismatchBehavior | None]:
        """The thinking to send with the prefix mismatch behaviour in force: the configured
        one, else `drop_block` when the conversation was run with it (it must be sent on every
        later request) and the model binds thinking to its prefix."""
        if thinking is not None and thinking.prefix_mismatch_behavior is not None:
            return thinking, thinking.prefix_mismatch_behavior
        if not self._binds:
            return thinking, None
        if not self._ran_with_drop_block(messages):
            return thinking, None
        if thinking is None:
            return ClaudeThinking.adaptive(prefix_mismatch_behavior="drop_block"), "drop_block"
        if thinking.type in ("adaptive", "enabled"):
            return replace(thinking, prefix_mismatch_behavior="drop_block"), "drop_block"
        return thinking, None

    def _ran_with_drop_block(self, messages: Sequence[Message]) -> bool:
        """Whether a response of this scope (or a compatible one) in `messages` was produced
        with `drop_block`; a conversation's later requests look at their new messages only."""
        scopes = {self.scope, *self._compatible}

        def test(message: Message) -> bool:
            return (
                message.role == "assistant"
                and message.scope in scopes
                and (message.provider_details or {}).get(_BINDING) == "drop_block"
            )

        return self._per_prefix.any(messages, _DROP_BLOCK, test, current_prompt(messages))

    def _replay(
        self,
        messages: Sequence[Message],
        *,
        chain: PrefixChain | None,
        binding: PrefixMismatchBehavior | None,
        native_thinking: bool,
        budgeted: bool,
        warnings: list[WarningEvent],
    ) -> tuple[list[Turn], list[Message | None]]:
        """The turns to send for `messages`, message by message, under the replay policy, and
        for each turn the message its last parts come from (`Prepared.sources`).

        Other scopes' proofs are removed first (`for_scope`; Claude's other platforms are
        compatible, their opaque blocks excepted). Then, in each assistant message, signed and
        redacted thinking stay where they are (only when `native_thinking`: a request with
        thinking explicitly off may not carry any), unless the model cannot read the model
        that signed them (a `thinking_unreadable` warning; after a `fallback` block the
        thinking is the fallback model's); thinking with no signature is never sent as
        thinking (dropped, or sent as text with `foreign_reasoning="text"`). Empty and
        whitespace-only text is left out, in both roles. User messages send their tool results
        first, then their text and media; their system notes go as a system message after the
        user turn (`_notes_turn`). Messages left empty are skipped and consecutive messages of
        one role are merged (Claude needs alternation); a conversation that opens with the
        model's message gets a user turn first (`OPENING`), and a final assistant message (a
        prefill, a paused turn) goes without trailing thinking, which Claude refuses there.

        Raises `HistoryError` before sending for what the service would refuse: a `fallback`
        block moved or left out of this scope's message, a compaction block with empty
        content, a note this wire cannot carry. With a `chain` (the model binds thinking to its
        prefix) each kept block is checked against the digest it was recorded with
        (`_check_prefix`). With `budgeted` thinking the current tool loop must start with
        thinking (`check_thinking_first`).
        """
        track = chain is not None  # each thinking block's origin, for the prefix check
        get = self._per_message.get
        prompt = current_prompt(messages)  # notes shown as text depend on it (`shown_notes`)
        # The turns of a conversation's first messages are kept, where this request's prompt
        # starts and at its end, for its next requests (`PerPrefix`): they fold the messages
        # after them only, when those were folded with the same turn (`same_turn`).
        folding = (_TURNS, native_thinking, track)
        start, kept = self._per_prefix.resume(messages, folding, same_turn(prompt))
        if kept is None:
            start, entries, unreadable = 0, [], []
        else:
            folded = cast("_Folded", kept)
            entries, unreadable = list(folded.entries), list(folded.unreadable)
            if entries:  # the one a later message may merge into: changed on a copy
                entries[-1] = copy(entries[-1])
        for index in range(start, len(messages) + 1):
            if index > start and index in (prompt, len(messages)):
                last = [copy(entries[-1])] if entries else []
                folded = _Folded((*entries[:-1], *last), tuple(unreadable), prompt)
                self._per_prefix.keep(messages, index, folding, folded)
            if index == len(messages):
                break
            message = messages[index]
            kind = (_STEP, native_thinking, index < prompt)
            step = get(message, kind, self._step, message, index, native_thinking, prompt)
            if step.unreadable and step.index != index:  # its warnings name its index
                step = self._step(message, index, native_thinking, prompt)
            if step.unreadable:
                unreadable += step.unreadable
            origins: list[_Origin | None] | None = None
            if track:
                origins = [None if m is None else _Origin(index, *m) for m in step.marks]
            if step.parts and (not entries or entries[-1].role != step.role):  # the usual case
                entries.append(_Entry(step.role, step.parts, origins, index, index))
            else:
                _append(entries, step.role, step.parts, origins, index, index)
            if step.notes:
                self._notes_turn(entries, step.notes, index, track)
                entries[-1].last = index
        if unreadable:
            warnings.append(
                WarningEvent(
                    code="thinking_unreadable",
                    message=(
                        f"{self.model_name} cannot read the thinking of "
                        + ", ".join(dict.fromkeys(unreadable))
                        + ": it was left out of the request (the history keeps it)"
                    ),
                    scope=self.scope,
                )
            )
        if not entries or entries[0].role != "user":
            first = 0 if messages else None
            entries.insert(0, _Entry("user", [_OPENING], [None] if track else None, 0, first))
        _without_trailing_thinking(entries)
        if chain is not None:
            entries = self._check_prefix(entries, messages, chain, binding, warnings)
        turns: list[Turn] = [(e.role, e.parts) for e in entries]
        if budgeted:
            check_thinking_first(turns, [e.source for e in entries])
        return turns, [None if e.last is None else messages[e.last] for e in entries]

    def _step(self, message: Message, index: int, native_thinking: bool, prompt: int) -> _Step:
        """What `message` (at `index`) sends, whatever else the history holds but where the
        current turn starts (`prompt`: it decides which notes are shown as text) (`_replay`).

        Other scopes' proofs are removed (`for_scope`). A user message sends its tool results
        first, then its sendable text and media, and its notes (or those shown as text, on a
        model without mid-conversation system messages: `shown_notes`). An assistant message
        of this scope is
        checked (`_check_own_blocks`); each of its thinking blocks goes as itself when it
        carries a proof and its signer is readable here (`native_thinking`: a request with
        thinking explicitly off may carry none), as text under `foreign_reasoning="text"`, or
        not at all."""
        (message,) = for_scope(
            (message,),
            self.scope,
            foreign_reasoning=self.foreign_reasoning,
            compatible=self._compatible,
        )
        marks: list[tuple[int, str | None] | None]
        if message.role == "user":
            given = message.parts
            parts: list[Part] = [p for p in given if isinstance(p, ToolResult)]
            if len(parts) < len(given):
                parts += [p for p in given if not isinstance(p, ToolResult) and _sendable(p)]
            notes = [(j, p) for j, p in enumerate(given) if isinstance(p, SystemNote)]
            if notes and not self._takes_notes:  # the shared rules of notes as text
                parts += [note_text(n) for n in shown_notes(message, index, prompt)]
                notes = []
            marks = [None] * len(parts)
            return _Step("user", parts, marks, notes, [], index)
        if message.scope == self.scope:
            _check_own_blocks(message, index)
        parts, marks = [], []
        unreadable: list[str] = []
        claude_api = self.scope == "anthropic"
        signers = _signers(message)
        digests = _recorded(message) if message.provider_details else []
        ordinal = 0
        for j, part in enumerate(message.parts):
            if isinstance(part, ThinkingBlock):
                native = native_thinking and self._readable(
                    message, signers[j], claude_api, unreadable, index
                )
                sent = self._thinking_part(part, native)
                if sent is not None:
                    parts.append(sent)
                    digest = digests[ordinal] if ordinal < len(digests) else None
                    marks.append((j, digest) if sent is part else None)
                ordinal += 1
            elif _sendable(part):
                parts.append(part)
                marks.append(None)
        return _Step("assistant", parts, marks, [], unreadable, index)

    def _notes_turn(
        self,
        entries: list[_Entry],
        notes: list[tuple[int, SystemNote]],
        index: int,
        track: bool,
    ) -> None:
        """Add a user message's notes (with their part indexes) as the system message after
        its turn, merged with the notes of the turn's earlier messages: two system messages
        may not follow each other, so one turn's notes share one `clear_at`."""
        merged = entries[-1] if entries and entries[-1].role == "system" else None
        parts: list[Part] = list(merged.parts) if merged is not None else []
        for j, note in notes:
            if note.clear_at is not None and not self._turn_scoped_notes:
                raise HistoryError(
                    f"{self.scope} cannot send a note's clear_at (a turn-scoped system message): "
                    "leave it unset",
                    message_index=index,
                    part_index=j,
                )
            first = cast("SystemNote", parts[0]) if parts else note
            if (note.clear_at or "never") != (first.clear_at or "never"):
                raise HistoryError(
                    "the system notes of one user turn go as one system message, so they share "
                    "one clear_at: put a turn-scoped note in a turn of its own",
                    message_index=index,
                    part_index=j,
                )
            parts.append(note)
        origins = _no_origins(len(parts)) if track else None
        if merged is not None:
            merged.parts, merged.origins = parts, origins
        else:
            entries.append(_Entry("system", parts, origins, index))

    def _turns_encoded(
        self, prepared: Prepared, encode: Callable[[int, str, list[Part]], EncodedT]
    ) -> list[EncodedT]:
        """`encode(k, role, parts)` for each turn of `prepared`, kept with the message the turn
        ends (`Prepared.sources`) while its parts are the same: a conversation's later requests
        encode their new turns only (ADR 180). A turn with a cache breakpoint is encoded each
        time (where the breakpoint goes changes from request to request)."""
        cache = prepared.cache
        marked = {turn for turn, _ in cache.marks} if cache is not None else set[int]()
        turns, sources = prepared.turns, prepared.sources
        peek, put = self._per_message.peek, self._per_message.put

        def encoded_turn(k: int) -> EncodedT:
            role, parts = turns[k]
            source = sources[k] if k < len(sources) and k not in marked else None
            if source is not None:
                found = peek(source, (_TURN_ENCODED, role))
                if found is not None and found[0] is parts:
                    return found[1]
            value = encode(k, role, parts)
            if source is not None:
                put(source, (_TURN_ENCODED, role), (parts, value))
            return value

        # The turns the conversation's last request sent, their parts and encodings (but
        # where its breakpoints were), serve as far as the same parts go.
        resumed, kept = self._per_prefix.resume(sources, _TURN_ENCODED, partial=True)
        encoded: list[EncodedT] = []
        if kept is not None:
            sent = cast("_TurnsEncoded[EncodedT]", kept)
            resumed = min(resumed, shared(sent.parts, map(itemgetter(1), turns)))
            encoded = list(sent.encoded[:resumed])
            for k in sent.marked:
                if k < resumed:
                    encoded[k] = encoded_turn(k)
        encoded += [encoded_turn(k) for k in range(resumed, len(turns))]
        for k in marked:
            if k >= resumed:  # encoded just now
                continue
            encoded[k] = encoded_turn(k)
        unmarked = _TurnsEncoded(tuple(p for _, p in turns), tuple(encoded), frozenset(marked))
        self._per_prefix.keep(sources, len(turns), _TURN_ENCODED, unmarked)
        return encoded

    def _notes_as_text(self, request: ModelRequest) -> list[WarningEvent]:
        """On a model or platform without mid-conversation system messages, the check of the
        notes' tool changes and the warning for the notes sent as text (`_system_notes`)."""
        if self._takes_notes:
            return []
        check_note_tools(request.messages, request.tools, scope=self.scope)
        why = (
            f"{self.model_name} takes no mid-conversation system messages"
            if self._info is not None and not self._info.takes_system_messages
            else f"{self.scope} takes no mid-conversation system messages"
        )
        note = notes_as_text_warning(request.messages, why=why, scope=self.scope)
        return [note] if note is not None else []

    def _thinking_part(self, block: ThinkingBlock, native: bool) -> Part | None:
        """What a thinking block of a message this scope replays goes back as: itself when it
        carries a proof and `native` (readable, with thinking not turned off), its text with
        `foreign_reasoning="text"` when it has no proof, else nothing."""
        if _proven(block):
            return block if native else None
        if self.foreign_reasoning == "text" and block.text.strip():
            return _as_text(block)
        return None

    def _readable(
        self,
        message: Message,
        signer: str | None,
        claude_api: bool,
        unreadable: list[str],
        index: int,
    ) -> bool:
        """Whether this model can read thinking of `message` that `signer` signed (the model,
        and the account its platform implies); noted in `unreadable` when it cannot."""
        if self._info is None or (signer == self.model_name and message.scope == self.scope):
            return True
        producer = claude_info(signer)
        if producer is None:
            return True
        if not self._info.reads(producer, claude_api=claude_api):
            unreadable.append(f"{producer} (messages[{index}])")
            return False
        if producer.account_bound and message.scope != self.scope:
            unreadable.append(
                f"{producer} on another platform (messages[{index}], another account)"
            )
            return False
        return True

    def _check_prefix(
        self,
        entries: list[_Entry],
        messages: Sequence[Message],
        chain: PrefixChain,
        binding: PrefixMismatchBehavior | None,
        warnings: list[WarningEvent],
    ) -> list[_Entry]:
        """Feed what is sent into `chain`, checking each thinking block against the digest it
        was recorded with. A block whose prefix changed (an edited instruction, tool or earlier
        message, a thinking block before it left out or moved) would be refused by the
        service: it is left out of the request with a `thinking_stripped` warning (every later
        block produced under the old prefix follows it), or refused with `HistoryError` under
        `"error"`; under `"drop_block"` it is sent, and the service drops it and says so.
        Blocks recorded without a digest (older histories, models without the check) go as
        they are.

        What the check found after each turn is kept for the conversation's next request
        (`_ChainPass`), which checks the turns after those it shares only; the chain after each
        turn is also kept with the turn's last message (`_Link`), for the same turn after the
        same links in another conversation.
        """
        root = self._prefix_root(chain, binding)
        link, stripped, kept = root, list[_Origin](), list[_Entry]()
        links: list[_Link] = []
        counts: list[int] = []
        tails: list[_Entry | None] = []
        dropped: list[int] = []
        start, found_pass = self._per_prefix.resume(messages, _CHAIN_PASS, partial=True)
        done = cast("_ChainPass | None", found_pass)
        if done is not None and done.root is root:
            start = shared(done.entries, entries)
            if start:
                links, counts = list(done.links[:start]), list(done.counts[:start])
                tails, dropped = list(done.tails[:start]), list(done.dropped[:start])
                link, count, tail = links[-1], counts[-1], tails[-1]
                kept = [*done.kept[: count - 1], tail] if tail is not None else []
                stripped = list(done.stripped[: dropped[-1]])
        else:
            start = 0
        peek, put = self._per_message.peek, self._per_message.put
        for entry in entries[start:]:
            origins = entry.origins
            assert origins is not None  # tracked whenever there is a chain
            ids = tuple(map(id, entry.parts))
            digests = tuple(o.digest if o is not None else None for o in origins)
            key = (_LINK, entry.role, entry.source)  # by position: a message may repeat
            last = None if entry.last is None else messages[entry.last]
            found = cast("_Link | None", peek(last, key)) if last is not None else None
            if (
                found is not None
                and found.parent is link
                and found.binding == binding
                and found.ids == ids
                and found.digests == digests
            ):
                link = found
            else:
                link = _link(link, entry, binding, ids, digests)
                if last is not None:
                    put(last, key, link)
            stripped += [cast("_Origin", origins[k]) for k in link.stripped]
            if link.kept:
                if kept and kept[-1].role == entry.role:  # merged into a copy: see `_ChainPass`
                    kept[-1] = copy(kept[-1])
                origins = _no_origins(len(link.kept))
                _append(kept, entry.role, link.kept, origins, entry.source, entry.last)
            links.append(link)
            counts.append(len(kept))
            tails.append(kept[-1] if kept else None)
            dropped.append(len(stripped))
        if start < len(entries):
            done = _ChainPass(
                root,
                tuple(entries),
                tuple(links),
                tuple(counts),
                tuple(tails),
                tuple(kept),
                tuple(stripped),
                tuple(dropped),
            )
            self._per_prefix.keep(messages, len(messages), _CHAIN_PASS, done)
        chain.restore(link.chain)
        if stripped:
            first = stripped[0]
            warnings.append(
                WarningEvent(
                    code="thinking_stripped",
                    message=(
                        f"{len(stripped)} thinking block(s) were left out of the request, from "
                        f"messages[{first.message}].parts[{first.part}] on: what came before "
                        "them changed since they were produced (the instructions, the tools, an "
                        "earlier message, or a thinking block before them), so Claude would "
                        "refuse them; the history keeps them"
                    ),
                    scope=self.scope,
                )
            )
        return kept

    def _prefix_root(self, chain: PrefixChain, binding: PrefixMismatchBehavior | None) -> _Link:
        """The link every request with this system, these tools and this binding starts from
        (the same object each time, so the links after it are found again)."""
        key = (chain.key(), binding)
        root = self._roots.get(key)
        if root is None:
            if len(self._roots) >= _ROOTS:
                del self._roots[next(iter(self._roots))]
            root = self._roots[key] = _Link(None, (), (), [], (), chain.copy(), binding)
        return root

    def _details(
        self,
        prepared: Prepared | None,
        parts: Sequence[Part],
        stop_reason: str | None,
        stop_sequence: str | None = None,
        transformations: Sequence[Mapping[str, Any]] = (),
        stop_details: Mapping[str, Any] | None = None,
    ) -> ProviderDetails | None:
        """`provider_details` for a response: Claude's stop reason (and stop sequence, and
        `stop_details`: a refusal's category, explanation and credit token), the prefix digest
        of each of its thinking blocks (on models that bind thinking to its prefix), the prefix
        mismatch behaviour it was produced with when it must be sent again, the service's
        `input_transformations`, where its `fallback` blocks are, and the conversation's base
        when the request sent its own system and tools (`_notes`)."""
        details: ProviderDetails = {}
        if stop_reason is not None:
            details["finish_reason"] = stop_reason
            if stop_sequence is not None:
                details["stop_sequence"] = stop_sequence
        if stop_details:
            details[_STOP_DETAILS] = cast("dict[str, JsonValue]", dict(stop_details))
        if prepared is not None and prepared.chain is not None:
            chain = prepared.chain.copy()
            digests: list[JsonValue] = []
            for part in parts:
                if isinstance(part, ThinkingBlock):
                    digests.append(chain.block())
                    chain.keep(part)
                elif _sendable(part):
                    chain.add("assistant", part)
            if digests:
                details[DIGESTS] = digests
        if prepared is not None and prepared.binding == "drop_block":
            details[_BINDING] = "drop_block"
        if transformations:
            details[_TRANSFORMATIONS] = [dict(t) for t in transformations]
        fallbacks: list[JsonValue] = [
            j for j, p in enumerate(parts) if isinstance(p, OpaqueBlock) and p.type == "fallback"
        ]
        if fallbacks:
            details[_FALLBACK_BLOCKS] = fallbacks
        if prepared is not None and prepared.record is not None and prepared.chain is not None:
            details[BASE] = prepared.record
        return details or None


_MISMATCH = (
    "this thinking block was produced under another prefix (the instructions, the tools or an "
    "earlier message changed since, or a thinking block before it was left out or moved), so "
    'Claude refuses it ("The block is bound to a different conversation"). Keep the '
    "conversation append-only (put an update in a new message at the end), or leave "
    "prefix_mismatch_behavior unset (thinkagent leaves such blocks out) or set it to "
    "'drop_block'"
)


def _signers(message: Message) -> list[str | None]:
    """The model that signed each part of an assistant message: the message's model, then,
    after each `fallback` block, the model that block hands over to (None for the block)."""
    signer = message.model
    signers: list[str | None] = []
    for part in message.parts:
        if isinstance(part, OpaqueBlock) and part.type == "fallback":
            signers.append(None)
            to = part.data.get("to")
            model = to.get("model") if isinstance(to, dict) else None
            signer = model if isinstance(model, str) else signer
        else:
            signers.append(signer)
    return signers


def thinking_signers(message: Message) -> list[str | None]:
    """The model that signed each thinking block of a Claude message, in order: the message's
    model, or after a server-side fallback (a `fallback` block) the model it handed over to."""
    signers = _signers(message)
    return [signers[j] for j, p in enumerate(message.parts) if isinstance(p, ThinkingBlock)]


def _check_own_blocks(message: Message, index: int) -> None:
    """Refuse what the service refuses of a message of this scope, before sending: its
    `fallback` blocks moved or left out (where they were is recorded with it), a compaction
    block with empty content (a failed one has `null`, and goes back as it is)."""
    parts = message.parts
    recorded = (message.provider_details or {}).get(_FALLBACK_BLOCKS)
    if isinstance(recorded, list):
        found = [
            j for j, p in enumerate(parts) if isinstance(p, OpaqueBlock) and p.type == "fallback"
        ]
        expected = [j for j in recorded if isinstance(j, int)]
        if found != expected:
            moved = next(
                (j for j in found if j not in expected),
                next((j for j in expected if j not in found), None),
            )
            raise HistoryError(
                "a fallback block was moved or left out: it marks where one model's output gives "
                f"way to the next, and goes back exactly where it was (parts {expected}), or "
                "Claude cannot validate the thinking on each side of it",
                message_index=index,
                part_index=moved if moved is not None and moved < len(parts) else None,
            )
    for j, part in enumerate(parts):
        if (
            isinstance(part, OpaqueBlock)
            and part.type == "compaction"
            and part.data.get("content") == ""
        ):
            raise HistoryError(
                "a compaction block with empty content: Claude refuses it (a failed "
                "compaction has null content, and goes back as it is)",
                message_index=index,
                part_index=j,
            )


def _without_trailing_thinking(entries: list[_Entry]) -> None:
    """Leave the trailing thinking out of a final assistant turn (a prefill, a paused turn):
    Claude refuses an assistant turn that ends with thinking there."""
    last = entries[-1] if entries else None
    if last is None or last.role != "assistant":
        return
    if not (last.parts and isinstance(last.parts[-1], ThinkingBlock)):
        return
    last.parts = list(last.parts)  # what `_step` derived is kept: changed on a copy
    if last.origins is not None:
        last.origins = list(last.origins)
    while last.parts and isinstance(last.parts[-1], ThinkingBlock):
        last.parts.pop()
        if last.origins is not None:
            last.origins.pop()
    if not last.parts:
        entries.pop()


def _recorded(message: Message) -> list[str | None]:
    """The prefix digests recorded with `message`, one per thinking block in order."""
    digests = (message.provider_details or {}).get(DIGESTS)
    if not isinstance(digests, list):
        return []
    return [d if isinstance(d, str) else None for d in digests]


def _append(
    entries: list[_Entry],
    role: Role,
    parts: list[Part],
    origins: list[_Origin | None] | None,
    source: int,
    last: int | None = None,
) -> None:
    """Add a message's parts as a turn, merged into the previous turn when it has the same role
    (a user turn sends all its tool results first). `origins` go with the parts when tracked;
    `last` is the message they come from. `parts` are kept as they are (never changed)."""
    if not parts:
        return
    if entries and entries[-1].role == role:
        previous = entries[-1]
        previous.last = previous.last if last is None else last
        if previous.origins is None or origins is None:
            previous.parts = previous.parts + parts
            if role == "user":
                previous.parts.sort(key=_after_results)
            return
        merged = list(zip(previous.parts + parts, previous.origins + origins, strict=True))
        if role == "user":
            merged.sort(key=lambda pair: _after_results(pair[0]))
        previous.parts = [p for p, _ in merged]
        previous.origins = [o for _, o in merged]
        return
    entries.append(_Entry(role, parts, origins, source, last))


def _no_origins(count: int) -> list[_Origin | None]:
    """Tracked origins for parts none of which is a kept thinking block."""
    return [None] * count


def _after_results(part: Part) -> bool:
    """The sort key that puts a user turn's tool results first."""
    return not isinstance(part, ToolResult)


def check_thinking_first(turns: Sequence[Turn], sources: Sequence[int]) -> None:
    """Claude's rule for a request with a thinking budget, checked before anything is sent.

    The current assistant turn is every assistant message after the last user message that is
    not only tool results (tool results continue the turn). When it has tool use, its first
    message must start with a `thinking` or `redacted_thinking` block, else Claude answers 400
    "Expected `thinking` or `redacted_thinking`, but found `tool_use`...". That happens when
    the tool loop was begun by another provider (its reasoning is not this scope's), or its
    thinking has no valid proof (a block cut off by a stream). Adaptive thinking relaxes the
    rule. Raises `HistoryError` naming that message (`sources[k]` is the index in the history
    of turn `k`'s first message).
    """
    last_user = -1
    for k in range(len(turns) - 1, -1, -1):  # from the end: the current turn is short
        role, parts = turns[k]
        if role == "user" and not any(isinstance(p, ToolResult) for p in parts):
            last_user = k
            break
    current = [k for k in range(last_user + 1, len(turns)) if turns[k][0] == "assistant"]
    if not any(isinstance(p, ToolCall) for k in current for p in turns[k][1]):
        return
    first = turns[current[0]][1][0]
    if isinstance(first, ThinkingBlock):
        return
    found = "tool_use" if isinstance(first, ToolCall) else "text"
    raise HistoryError(
        "Claude requires the assistant turn of the current tool loop to start with its own "
        f"thinking while thinking has a budget, and this one starts with {found} (the loop was "
        "begun by another provider, or its thinking has no signature valid here). Finish the "
        "turn on the provider that started it, use adaptive thinking, or continue with thinking "
        "disabled for this request (ClaudeThinking.disabled(), on a model that accepts it)",
        message_index=sources[current[0]],
    )


def raise_mapped(error: BaseException, cause: BaseException) -> NoReturn:
    """Raise `error`, what `map_error` made of the vendor exception `cause`, chained to it; an
    exception `map_error` did not know comes back as `cause` and is raised as it is (never
    chained to itself)."""
    if error is cause:
        raise cause
    raise error from cause
