"""The Claude rules: request validation, the thinking proofs' checks (integrity, model
readability, account, preserved thinking's prefix check), compaction, media and reply blocks,
shared by the Anthropic Messages wire and the Bedrock Converse wire.

Bedrock runs Claude behind its own envelope: the Bedrock wire translates a Converse request into
the Anthropic Messages shape and calls :func:`parse_request` with its own platform name, so both
wires enforce the same rules with the same messages (Bedrock wraps them in ``ValidationException:
The model returned the following errors: ...``). A refused request raises
:class:`~thinkagent.emulator.framework.WireError` with Anthropic's status and message.

Models (:mod:`.profiles`): which thinking types each accepts, whether it thinks when asked
nothing, its default ``display``, whether it keeps (and verifies) earlier turns' thinking.

Proofs (:mod:`.binding`): every Claude signature and redacted payload is valid on both
platforms and records the model, account and platform it was made on. On replay, a block the
model cannot read is dropped, as is an account-bound model's block (Sonnet and Haiku 5.5) from
another account; on the models with preserved thinking (Fable and Mythos 5.1+, Opus, Sonnet and
Haiku 5.5) a block whose prefix changed gets the 400 "The block is bound to a different
conversation", or, with ``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` (beta
``thinking-binding-controls-2026-08-01``), is dropped with every later block and listed in the
response's ``input_transformations``. Accounts are treated as created after 2026-08-31: the
check is enforced whenever the model runs it.

Compaction (beta ``compact-2026-01-12``, ``context_management.edits`` with ``compact_20260112``):
when the conversation's input passes the edit's trigger (``input_tokens``, at least 50,000,
default 150,000) the reply opens with a ``compaction`` block summarizing it; later requests are
read from their latest compaction block on, and the prefix of the blocks after it starts there,
so a compaction block not sent back breaks the thinking produced after it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from ..brain import TurnTokens, reply_usage
from ..encoding import arguments_json, list_or_none, mapping_or_none, stable_id
from ..framework import WireError
from ..model import Call, CallResult, Conversation, Media, Reply, Settings, ToolSpec, Turn
from ..signing import Signer
from . import server_tools
from .binding import SCOPE, Prefix, Record, open_proof, seal_proof
from .caching import CachePlan, check_markers, plan_cache
from .profiles import ClaudeProfile, claude_profile
from .system import check_clear_at, check_system_messages

__all__ = [
    "BINDING_BETA",
    "ClaudeBlock",
    "ClaudeProfile",
    "ClaudeRequest",
    "claude_profile",
    "parse_request",
    "render_blocks",
]

EFFORTS = ("low", "medium", "high", "xhigh", "max")
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
BINDING_BETA = "thinking-binding-controls-2026-08-01"
DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"
COMPACTION_BETA = "compact-2026-01-12"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

#: Signing kinds used by Claude proofs.
KIND_COMPACTION = "claude.compaction"
KIND_CREDIT = "claude.fallback_credit"
KIND_THINKING = "claude.thinking"
KIND_OMITTED = "claude.thinking.omitted"
KIND_REDACTED = "claude.redacted"

_MAX_IMAGE_BYTES = 5 * 1024 * 1024
_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_MIN_TRIGGER = 50_000
_DEFAULT_TRIGGER = 150_000

_BOUND = (
    "messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block is bound to a "
    "different conversation. Remove the block, or set "
    '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
)
_NEEDS_BETA = (
    " That setting requires the `thinking-binding-controls-2026-08-01` value in the "
    "`anthropic-beta` header."
)
# What changed, as the service names it (its wording is not stable).
_CHANGED = {
    "system": " The `system` prompt changed since the block was produced.",
    "tools": " The `tools` changed since the block was produced.",
    "prefix": " The content before the block changed since it was produced.",
    "previous": " A thinking block before it is missing or out of order.",
}


def _invalid(message: str) -> WireError:
    return WireError(400, message, type="invalid_request_error")


@dataclass(frozen=True)
class _Mint:
    """What the reply's thinking is bound to: the request's model, account and platform, and
    (on prefix-checked models) the prefix after the request and the last thinking block kept."""

    model: ClaudeProfile
    account: str
    platform: str
    prefix: Prefix | None
    previous: str
    continues: bool = False  # the request ends with an assistant turn the reply continues

    def record(
        self,
        before: Sequence[Mapping[str, Any]] = (),
        *,
        model: ClaudeProfile | None = None,
        previous: str | None = None,
    ) -> Record:
        """The record of a reply's thinking block: signed by ``model`` (the request's, or a
        fallback's), after the reply's ``before`` blocks and the thinking block ``previous``
        (by default the request's last kept one)."""
        signer = model or self.model
        base = Record(model=signer.key, account=self.account, platform=self.platform)
        if self.prefix is None or not signer.checks_prefix:
            return base
        prefix = self.prefix.copy()
        if not self.continues:
            prefix.message("assistant")
        for block in before:
            prefix.block(block)
        return replace(
            base,
            system=prefix.system,
            tools=prefix.tools,
            prefix=prefix.digest(),
            previous=self.previous if previous is None else previous,
        )


@dataclass(frozen=True)
class ClaudeRequest:
    """A validated Claude request: its neutral conversation and settings, plus what the
    renderers need (display, streaming, the model, what the reply's thinking is bound to, the
    compaction summary to open the reply with, the ``input_transformations`` to report: None
    without the binding beta, and how prompt caching reads it)."""

    model: ClaudeProfile
    conversation: Conversation
    settings: Settings
    display: Literal["summarized", "omitted", "updates"]
    stream: bool
    mint: _Mint
    between_tools: bool = False
    compaction: str | None = None
    transformations: list[dict[str, Any]] | None = field(default=None)
    cache: CachePlan | None = None
    fallbacks: tuple[str, ...] = ()
    credit: bool = False
    server_tools: frozenset[str] = frozenset()
    model_name: str = ""


# --- validation ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Thinking:
    on: bool
    kind: str | None
    budget: int | None
    display: Literal["summarized", "omitted", "updates"]
    behavior: str | None


def _thinking(
    raw: Any, model: ClaudeProfile, max_tokens: int | None, betas: Sequence[str]
) -> _Thinking:
    if raw is None:
        on = model.thinks_by_default
        return _Thinking(on, "adaptive" if on else None, None, model.default_display, None)
    config = mapping_or_none(raw)
    if config is None:
        raise _invalid(
            "thinking: Input should be a valid dictionary or object to extract fields from"
        )
    kind = config.get("type")
    if kind not in ("enabled", "adaptive", "disabled", "between_tools"):
        raise _invalid(
            f"thinking: Input tag '{kind}' found using 'type' does not match any of the expected tags: "
            "'adaptive', 'between_tools', 'disabled', 'enabled'"
        )
    if kind in ("enabled", "adaptive") and not model.reasons:
        # The Messages API's text; Bedrock's wording for the same refusal is a guess (the same).
        raise _invalid(f"'{model.name}' does not support thinking.")
    refusal = model.refusal(kind)
    if refusal is not None:
        raise _invalid(refusal)
    if kind in ("disabled", "between_tools"):
        for extra in ("display", "block_binding", "budget_tokens"):
            if extra in config:
                raise _invalid(f"thinking.{kind}.{extra}: Extra inputs are not permitted")
        return _Thinking(kind == "between_tools", kind, None, model.default_display, None)
    display = config.get("display") or model.default_display
    displays = (
        ("summarized", "omitted", "updates")
        if DISPLAY_UPDATES_BETA in betas
        else ("summarized", "omitted")
    )
    if display not in displays:
        raise _invalid(f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'")
    behavior = _behavior(config.get("block_binding"), kind, betas)
    if kind == "adaptive":
        return _Thinking(True, kind, None, display, behavior)
    budget = config.get("budget_tokens")
    if budget is None:
        raise _invalid("thinking.enabled.budget_tokens: Field required")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
    if budget < 1024:
        raise _invalid(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    # With interleaved thinking the budget covers the whole turn and may exceed max_tokens.
    if max_tokens is not None and budget >= max_tokens and INTERLEAVED_BETA not in betas:
        raise _invalid(
            "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
            f"{THINKING_DOCS}#max-tokens-and-context-window-size"
        )
    return _Thinking(True, kind, budget, display, behavior)


def _behavior(raw: Any, kind: str, betas: Sequence[str]) -> str | None:
    """``thinking.block_binding.prefix_mismatch_behavior`` (None when not set)."""
    if raw is None:
        return None
    if BINDING_BETA not in betas:
        raise _invalid(f"thinking.{kind}.block_binding: Extra inputs are not permitted")
    binding = mapping_or_none(raw) or {}
    behavior = binding.get("prefix_mismatch_behavior")
    if behavior not in ("error", "drop_block"):
        raise _invalid(
            f"thinking.{kind}.block_binding.prefix_mismatch_behavior: Input should be 'error' or "
            "'drop_block'"
        )
    return cast("str", behavior)


def _effort(raw: Any, model: ClaudeProfile, kind: str | None, cap: bool) -> str | None:
    output_config = mapping_or_none(raw)
    effort = output_config.get("effort") if output_config is not None else None
    if effort is None:
        return None
    if effort not in EFFORTS:
        raise _invalid(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
        )
    if effort in ("xhigh", "max"):
        # Bedrock caps the effort at `high` when thinking is off; the Claude API refuses
        # more on Opus 5 and with `between_tools` (the emulator's words: not published).
        if kind == "disabled" and cap:
            return "high"
        if kind == "between_tools" or (kind == "disabled" and model.key == "opus-5-0"):
            raise _invalid(
                f'output_config.effort: "{effort}" is not supported with "thinking.type.{kind}" '
                "on this model. Use 'low', 'medium' or 'high'."
            )
    return cast("str", effort)


def _response_schema(raw: Any) -> Mapping[str, Any] | None:
    output_config = mapping_or_none(raw)
    fmt = mapping_or_none(output_config.get("format")) if output_config is not None else None
    if fmt is None:
        return None
    if fmt.get("type") != "json_schema":
        raise _invalid("output_config.format.type: Input should be 'json_schema'")
    schema = mapping_or_none(fmt.get("schema"))
    if schema is None:
        raise _invalid("output_config.format.json_schema.schema: Field required")
    return schema


def _compaction_trigger(raw: Any, betas: Sequence[str]) -> int | None:
    """The input-token threshold of a ``compact_20260112`` edit, or None without one."""
    if raw is None:
        return None
    if COMPACTION_BETA not in betas and "context-management-2025-06-27" not in betas:
        raise _invalid("context_management: Extra inputs are not permitted")
    edits = list_or_none((mapping_or_none(raw) or {}).get("edits")) or []
    for index, item in enumerate(edits):
        edit = mapping_or_none(item) or {}
        if edit.get("type") != "compact_20260112":
            continue
        trigger = mapping_or_none(edit.get("trigger")) or {}
        value = trigger.get("value", _DEFAULT_TRIGGER)
        if not isinstance(value, int) or value < _MIN_TRIGGER:
            raise _invalid(
                f"context_management.edits.{index}.trigger.value: Input should be greater than or "
                f"equal to {_MIN_TRIGGER}"
            )
        return value
    return None


def _tools(raw: Any) -> tuple[ToolSpec, ...]:
    if raw is None:
        return ()
    items = list_or_none(raw)
    if items is None:
        raise _invalid("tools: Input should be a valid list")
    specs: list[ToolSpec] = []
    for index, item in enumerate(items):
        tool = mapping_or_none(item)
        if tool is None:
            raise _invalid(
                f"tools.{index}: Input should be a valid dictionary or object to extract fields from"
            )
        kind = tool.get("type", "custom")
        if kind not in ("custom", None):
            continue  # a server tool (web search, bash...): accepted, never called by the brain
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid(f"tools.{index}.custom.name: Field required")
        schema = mapping_or_none(tool.get("input_schema"))
        if schema is None:
            raise _invalid(f"tools.{index}.custom.input_schema: Field required")
        description = tool.get("description")
        specs.append(ToolSpec(name, description if isinstance(description, str) else "", schema))
    return tuple(specs)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for item in list_or_none(content) or []:
        block = mapping_or_none(item)
        if block is None:
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(cast("str", block["text"]))
        elif block.get("type") is not None:
            parts.append(f"[{block.get('type')}]")
    return "\n".join(parts)


def _blocks(message: Mapping[str, Any], index: int) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    items = list_or_none(content)
    if items is None:
        raise _invalid(f"messages.{index}.content: Input should be a valid list")
    blocks: list[Mapping[str, Any]] = []
    for j, item in enumerate(items):
        block = mapping_or_none(item)
        if block is None or not isinstance(block.get("type"), str):
            raise _invalid(f"messages.{index}.content.{j}.type: Field required")
        blocks.append(block)
    return blocks


_FINAL_THINKING = (
    "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
    "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
    "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. "
    "Please consult our documentation at " + THINKING_DOCS
)
_DISABLED_THINKING = (
    "messages.{i}.content.{j}: When thinking is disabled, an `assistant` message in the final position "
    "cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."
)
_THINKING = ("thinking", "redacted_thinking")

Parsed = list[tuple[str, list[Mapping[str, Any]]]]


_STRING_FIELDS: Mapping[str, tuple[str, ...]] = {
    "thinking": ("thinking", "signature"),
    "redacted_thinking": ("data",),
    "tool_use": ("id", "name"),
    "tool_result": ("tool_use_id",),
}


def _check_block_fields(block: Mapping[str, Any], i: int, j: int) -> None:
    """The string fields of a block are present and strings (the service's messages)."""
    kind = block["type"]
    for key in _STRING_FIELDS.get(kind, ()):
        value = block.get(key)
        if value is None:
            raise _invalid(f"messages.{i}.content.{j}.{kind}.{key}: Field required")
        if not isinstance(value, str):
            raise _invalid(f"messages.{i}.content.{j}.{kind}.{key}: Input should be a valid string")


def _check_pairs(messages: Parsed) -> None:
    """Every block's fields, then: tool results answer the tool uses of the message just
    before them, and every tool use is answered in the next message."""
    for i, (_, blocks) in enumerate(messages):
        for j, block in enumerate(blocks):
            _check_block_fields(block, i, j)
    for i, (role, blocks) in enumerate(messages):
        if role == "assistant":
            use_ids = [cast("str", b["id"]) for b in blocks if b["type"] == "tool_use"]
            if use_ids and i + 1 < len(messages):
                next_role, next_blocks = messages[i + 1]
                answered: set[Any] = (
                    {b.get("tool_use_id") for b in next_blocks if b["type"] == "tool_result"}
                    if next_role == "user"
                    else set()
                )
                missing = [u for u in use_ids if u not in answered]
                if missing:
                    raise _invalid(
                        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                        f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                        "in the next message."
                    )
        elif role == "user":
            previous = messages[i - 1] if i > 0 else None
            offered: set[Any] = (
                {b.get("id") for b in previous[1] if b["type"] == "tool_use"}
                if previous and previous[0] == "assistant"
                else set()
            )
            for j, block in enumerate(blocks):
                if block["type"] == "tool_result" and block.get("tool_use_id") not in offered:
                    raise _invalid(
                        f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                        "block in the previous message."
                    )


def _current_turn(messages: Parsed) -> list[int]:
    """The current assistant turn: every assistant message after the last user message without
    tool results (a user message with any tool result, even beside text, continues it)."""
    last_user = -1
    for i, (role, blocks) in enumerate(messages):
        if role == "user" and not any(b["type"] == "tool_result" for b in blocks):
            last_user = i
    return [i for i in range(last_user + 1, len(messages)) if messages[i][0] == "assistant"]


def _proof_of(block: Mapping[str, Any]) -> str:
    return cast("str", block["signature"] if block["type"] == "thinking" else block["data"])


@dataclass
class _Replay:
    """The request's thinking, checked: what is kept, what was dropped and why."""

    model: ClaudeProfile
    platform: str
    account: str
    signer: Signer
    behavior: str | None
    betas: Sequence[str]
    transformations: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    previous: str = ""
    dropping: bool = False

    def check(self, messages: Parsed, in_context: set[int], prefix: Prefix | None) -> Parsed:
        kept: Parsed = []
        for i, (role, blocks) in enumerate(messages):
            if prefix is not None:
                prefix.message(role)
            out: list[Mapping[str, Any]] = []
            for j, block in enumerate(blocks):
                if block["type"] not in _THINKING:
                    if prefix is not None:
                        prefix.block(block)
                    out.append(block)
                elif i in in_context and self._keep(block, i, j, prefix):
                    self.previous = hashlib.sha256(_proof_of(block).encode()).hexdigest()[:32]
                    out.append(block)
            kept.append((role, out))
        return kept

    def _keep(self, block: Mapping[str, Any], i: int, j: int, prefix: Prefix | None) -> bool:
        bound = _verify_block(block, i, j, self.platform, self.signer)
        record = bound.record
        if record is None:
            return True  # an unbound proof of an older emulator
        if not self.model.reads(record.model, claude_api=self.platform == "anthropic"):
            return self._drop(i, j, "model_binding_mismatch")
        if record.model in ("sonnet-5-5", "haiku-5-5") and record.account != self.account:
            return self._drop(i, j, "organization_binding_mismatch")
        if prefix is None or not record.prefix:
            return True
        if self.dropping:
            return self._drop(i, j, "prefix_binding_mismatch")
        changed = (
            "system"
            if record.system != prefix.system
            else "tools"
            if record.tools != prefix.tools
            else "prefix"
            if record.prefix != prefix.digest()
            else "previous"
            if record.previous != self.previous
            else None
        )
        if changed is None:
            return True
        if self.behavior == "drop_block":
            self.dropping = True
            return self._drop(i, j, "prefix_binding_mismatch")
        message = _BOUND.format(i=i, j=j)
        if BINDING_BETA not in self.betas:
            message += _NEEDS_BETA
        raise _invalid(message + _CHANGED[changed])

    def _drop(self, i: int, j: int, reason: str) -> bool:
        self.transformations.append(
            {"type": "thinking_dropped", "path": f"messages.{i}.content.{j}", "reason": reason}
        )
        return False


def _verify_block(block: Mapping[str, Any], i: int, j: int, platform: str, signer: Signer) -> Any:
    """The proof's record; the 400 when it does not verify (tampered, truncated, another
    service's), whatever ``prefix_mismatch_behavior`` says."""
    if block["type"] == "thinking":
        text = cast("str", block["thinking"])
        signature = cast("str", block["signature"])
        bound = open_proof(
            signer, KIND_THINKING, signature, text, legacy_scope=platform
        ) or open_proof(signer, KIND_OMITTED, signature, None, legacy_scope=platform)
        if bound is None:
            raise _invalid(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
        return bound
    bound = open_proof(
        signer, KIND_REDACTED, cast("str", block["data"]), None, legacy_scope=platform
    )
    if bound is None:
        raise _invalid(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")
    return bound


def _media(block: Mapping[str, Any], where: str, documents: frozenset[str]) -> Media:
    """An ``image`` or ``document`` block as the brain sees it, refused as the service refuses
    it (an unknown source, an image type it does not take, an image over 5 MB)."""
    kind = cast("Literal['image', 'document']", block["type"])
    source = mapping_or_none(block.get("source")) or {}
    source_type = source.get("type")
    if source_type == "url" and isinstance(source.get("url"), str):
        return Media(kind, "application/octet-stream", url=cast("str", source["url"]))
    if source_type == "text" and kind == "document" and isinstance(source.get("data"), str):
        data = cast("str", source["data"]).encode()
        return Media(kind, "text/plain", size=len(data))
    if source_type != "base64":
        raise _invalid(
            f"{where}.source: Input tag '{source_type}' found using 'type' does not match any of the "
            "expected tags: 'base64', 'url'" + (", 'text'" if kind == "document" else "")
        )
    media_type = source.get("media_type")
    if kind == "image" and media_type not in _IMAGE_TYPES:
        raise _invalid(
            f"{where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
            "'image/gif' or 'image/webp'"
        )
    if kind == "document" and media_type not in documents:
        raise _invalid(f"{where}.source.base64.media_type: Input should be 'application/pdf'")
    try:
        data = base64.b64decode(cast("str", source.get("data") or ""), validate=True)
    except (binascii.Error, TypeError):
        raise _invalid(f"{where}.source.base64.data: Invalid base64 data") from None
    if kind == "image" and len(data) > _MAX_IMAGE_BYTES:
        raise _invalid(
            f"{where}.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > "
            f"{_MAX_IMAGE_BYTES} bytes"
        )
    return Media(kind, cast("str", media_type), size=len(data))


def _neutral(
    role: str, blocks: Sequence[Mapping[str, Any]], where: str, documents: frozenset[str]
) -> tuple[Turn, tuple[int, ...]]:
    """The turn ``blocks`` make, and the input tokens of the turn each prefix of them makes
    (its first ``k + 1`` blocks, as :func:`~thinkagent.emulator.brain.prefix_tokens` counts a
    turn), for prompt caching."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[Call] = []
    results: list[CallResult] = []
    media: list[Media] = []
    tokens = TurnTokens()
    totals: list[int] = []
    for j, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(cast("str", block["text"]))
            tokens.text(texts[-1])
        elif kind == "thinking":
            thinking.append(cast("str", block.get("thinking") or ""))
            tokens.thinking(thinking[-1])
        elif kind == "tool_use":
            arguments = mapping_or_none(block.get("input")) or {}
            calls.append(Call(cast("str", block["id"]), cast("str", block["name"]), arguments))
            tokens.call(calls[-1])
        elif kind == "tool_result":
            content = block.get("content", "")
            items = [mapping_or_none(item) or {} for item in list_or_none(content) or []]
            seen = tuple(
                _media(item, f"{where}.{j}.content.{k}", documents)
                for k, item in enumerate(items)
                if item.get("type") in ("image", "document")
            )
            results.append(
                CallResult(
                    cast("str", block["tool_use_id"]),
                    _text_of(content),
                    bool(block.get("is_error")),
                    media=seen,
                )
            )
            tokens.result(results[-1])
        elif kind in ("image", "document") and role == "user":
            media.append(_media(block, f"{where}.{j}", documents))
        totals.append(tokens.tokens)
    turn = Turn(
        role="assistant" if role == "assistant" else "user",
        text="\n".join(texts),
        thinking="\n".join(thinking),
        calls=tuple(calls),
        results=tuple(results),
        media=tuple(media),
        server_uses=server_tools.read_blocks(blocks) if role == "assistant" else (),
    )
    return turn, tuple(totals)


def _turns(messages: Parsed, documents: frozenset[str]) -> tuple[Turn, ...]:
    """The conversation the model reads: from the latest compaction block on (its summary read
    as the opening user turn), system messages left out."""
    start, summary = 0, None
    for i, (_, blocks) in enumerate(messages):
        for j, block in enumerate(blocks):
            if block["type"] == "compaction" and block.get("content") is not None:
                start, summary = i, (i, j, str(block.get("content", "")))
    turns: list[Turn] = []
    if summary is not None:
        i, j, text = summary
        turns.append(Turn(role="user", text=text))
        rest = messages[i][1][j + 1 :]
        if rest:
            turns.append(_neutral(messages[i][0], rest, f"messages.{i}.content", documents)[0])
        start = i + 1
    for i in range(start, len(messages)):
        role, blocks = messages[i]
        if role != "system":
            turns.append(_neutral(role, blocks, f"messages.{i}.content", documents)[0])
    return tuple(turns)


_FALLBACK_BETAS = ("server-side-fallback-2026-06-01", "server-side-fallback-2026-07-01")
_CREDIT_BETAS = ("fallback-credit-2026-06-01", "fallback-credit-2026-07-01")
_FALLBACK_FIELDS = frozenset({"model", "max_tokens", "thinking", "output_config", "speed"})
# The emulator's choice: the service's default fallback configuration is not published.
_DEFAULT_FALLBACK = "claude-opus-4-8"


def _check_compaction(messages: Parsed, signer: Signer) -> None:
    """Compaction blocks as the service takes them back: `content` a summary or null (a failed
    compaction, a no-op), never empty; `encrypted_content` exactly as it was returned."""
    for i, (_, blocks) in enumerate(messages):
        for j, block in enumerate(blocks):
            if block["type"] != "compaction":
                continue
            content = block.get("content")
            if content == "":
                raise _invalid(  # guess: pydantic's wording for the documented refusal
                    f"messages.{i}.content.{j}.compaction.content: String should have at least 1 "
                    "character"
                )
            sealed = block.get("encrypted_content")
            intact = not (isinstance(content, str) and isinstance(sealed, str)) or (
                signer.verify_b64(SCOPE, KIND_COMPACTION, sealed, content)
            )
            if not intact:
                raise _invalid(  # guess
                    f"messages.{i}.content.{j}: Invalid `encrypted_content` in `compaction` block"
                )


def _signed_by(block: Mapping[str, Any], platform: str, signer: Signer) -> str | None:
    """The model a thinking block's proof records (None when it records none or does not
    verify: the replay check reports that)."""
    try:
        bound = _verify_block(block, 0, 0, platform, signer)
    except WireError:
        return None
    return bound.record.model if bound.record is not None else None


def _check_seams(messages: Parsed, platform: str, signer: Signer) -> None:
    """The `fallback` blocks of each assistant turn where they were: the server validates the
    thinking on each side of one as two models' spans, so thinking of two models with no block
    between them (the block left out) and a block with one model's thinking on both sides (the
    block moved) are refused (SDK `beta_fallback_block_param.py`). Between blocks that are not
    thinking, where the block sits does not matter."""
    for i, (role, blocks) in enumerate(messages):
        if role != "assistant" or not any(b["type"] in _THINKING for b in blocks):
            continue
        span: str | None = None
        seam: tuple[int, str | None] | None = None
        for j, block in enumerate(blocks):
            if block["type"] == "fallback":
                seam, span = (j, span), None
                continue
            if block["type"] not in _THINKING:
                continue
            model = _signed_by(block, platform, signer)
            if model is None:
                continue
            if span is None:
                if seam is not None and seam[1] == model:
                    raise _invalid(  # guess: the wording is not published
                        f"messages.{i}.content.{seam[0]}: a `fallback` block sits inside one "
                        "model's thinking: send it back in its original position"
                    )
                span = model
            elif model != span:
                raise _invalid(  # guess
                    f"messages.{i}.content.{j}: thinking from two models without the `fallback` "
                    "block between them: send the block back in its original position"
                )


def _fallbacks(raw: Any, betas: Sequence[str], model: str) -> tuple[str, ...]:
    """The models of a request's `fallbacks` (up to three, or the model's default)."""
    if raw is None:
        return ()
    if not any(b in betas for b in _FALLBACK_BETAS):
        raise _invalid("fallbacks: Extra inputs are not permitted")
    if raw == "default":
        return (_DEFAULT_FALLBACK if model != _DEFAULT_FALLBACK else "claude-opus-5",)
    items = list_or_none(raw)
    if items is None:
        raise _invalid("fallbacks: Input should be a valid list or 'default'")
    if not items or len(items) > 3:
        raise _invalid(  # guess
            f"fallbacks: List should have at least 1 item and at most 3 items, not {len(items)}"
        )
    models: list[str] = []
    for k, item in enumerate(items):
        entry = mapping_or_none(item) or {}
        name = entry.get("model")
        if not isinstance(name, str) or not name:
            raise _invalid(f"fallbacks.{k}.model: Field required")
        extra = sorted(set(entry) - _FALLBACK_FIELDS)
        if extra:
            raise _invalid(f"fallbacks.{k}.{extra[0]}: Extra inputs are not permitted")
        if claude_profile(name) is None:
            raise WireError(404, f"model: {name}", type="not_found_error")
        models.append(name)
    return tuple(models)


def _check_credit(raw: Any, betas: Sequence[str], signer: Signer, fallbacks: Sequence[str]) -> None:
    """A retry's `fallback_credit_token`: one this service minted (a bare string, or with the
    credit beta an object `{token, mode}`), never together with `fallbacks`."""
    if raw is None:
        return
    token: Any = raw
    if isinstance(raw, Mapping):
        if not any(b in betas for b in _CREDIT_BETAS):
            raise _invalid("fallback_credit_token: Input should be a valid string")
        token = cast("Mapping[str, Any]", raw).get("token")
    if fallbacks:
        raise _invalid(  # guess
            "fallback_credit_token: cannot be combined with `fallbacks`"
        )
    if not isinstance(token, str) or signer.open_b64(SCOPE, KIND_CREDIT, token) is None:
        raise _invalid("fallback_credit_token: Invalid token")  # guess


def parse_request(
    body: Mapping[str, Any],
    *,
    platform: str,
    signer: Signer,
    account: str = "",
    model_name: str | None = None,
    require_max_tokens: bool = True,
    betas: Sequence[str] = (),
    cap_effort: bool = False,
    documents: frozenset[str] = frozenset({"application/pdf"}),
) -> ClaudeRequest:
    """Validate an Anthropic Messages request body and build its neutral view.

    ``platform`` is the service (``"anthropic"`` or ``"bedrock"``: proofs are valid on both,
    but record where they were made); ``account`` is who asks (a digest of the credentials:
    account-bound models' thinking is valid only there); ``model_name`` overrides
    ``body["model"]``; ``betas`` are the ``anthropic-beta`` flags; ``cap_effort`` caps the
    effort at ``high`` with thinking off (Bedrock) instead of refusing it; ``documents`` are the
    media types a document may have as base64 (PDF; Bedrock takes more). With a thinking
    budget and no ``interleaved-thinking-2025-05-14`` beta, Claude thinks only at the start of
    an assistant turn, not after tool results; adaptive thinking is always interleaved. Raises
    :class:`~thinkagent.emulator.framework.WireError` with the real status, type and message.
    """
    name = model_name if model_name is not None else body.get("model")
    if not isinstance(name, str) or not name:
        raise _invalid("model: Field required")
    model = claude_profile(name)
    if model is None:
        raise WireError(404, f"model: {name}", type="not_found_error")
    max_tokens = body.get("max_tokens")
    if max_tokens is None and require_max_tokens:
        raise _invalid("max_tokens: Field required")
    if max_tokens is not None and (
        not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1
    ):
        raise _invalid("max_tokens: Input should be greater than or equal to 1")
    raw_messages = body.get("messages")
    if raw_messages is None:
        raise _invalid("messages: Field required")
    items = list_or_none(raw_messages)
    if items is None:
        raise _invalid("messages: Input should be a valid list")
    if not items:
        raise _invalid("messages: List should have at least 1 item after validation, not 0")

    thinking = _thinking(body.get("thinking"), model, max_tokens, betas)
    effort = _effort(body.get("output_config"), model, thinking.kind, cap_effort)
    response_schema = _response_schema(body.get("output_config"))
    trigger = _compaction_trigger(body.get("context_management"), betas)

    raw_tools = [mapping_or_none(t) or {} for t in list_or_none(body.get("tools")) or []]
    tools = _tools(body.get("tools"))
    choice = mapping_or_none(body.get("tool_choice")) or {"type": "auto"}
    choice_type = choice.get("type")
    if choice_type not in ("auto", "any", "tool", "none"):
        raise _invalid(
            f"tool_choice: Input tag '{choice_type}' found using 'type' does not match any of the expected tags: "
            "'auto', 'any', 'tool', 'none'"
        )
    if choice_type == "tool" and not isinstance(choice.get("name"), str):
        raise _invalid("tool_choice.tool.name: Field required")
    if choice_type in ("any", "tool"):
        if model.refuses_forced_tools:
            raise _invalid('tool_choice: type "tool" and "any" are not supported for this model.')
        if thinking.kind == "enabled":
            raise _invalid("Thinking may not be enabled when tool_choice forces tool use.")

    system_parts: list[str] = []
    raw_system = body.get("system")
    system_blocks: list[Mapping[str, Any]] = []
    if raw_system is not None:
        system_parts.append(_text_of(raw_system))
        system_blocks = (
            [{"type": "text", "text": raw_system}]
            if isinstance(raw_system, str)
            else [mapping_or_none(b) or {} for b in list_or_none(raw_system) or []]
        )

    parsed: Parsed = []
    clear_ats: list[str | None] = []
    for index, item in enumerate(items):
        message = mapping_or_none(item)
        if message is None:
            raise _invalid(
                f"messages.{index}: Input should be a valid dictionary or object to extract fields from"
            )
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            raise _invalid(
                f"messages.{index}.role: Input should be 'user', 'assistant' or 'system'"
            )
        clear_ats.append(check_clear_at(message, index, betas))
        blocks = _blocks(message, index)
        parsed.append((cast("str", role), blocks))
    if parsed[0][0] == "assistant":
        raise _invalid("messages: The first message must use the `user` role.")
    notes = check_system_messages(
        parsed, clear_ats, model=model, tools=raw_tools, betas=betas, platform=platform
    )
    _check_pairs(parsed)
    server_tools.check_replay(parsed, signer, platform)
    server = server_tools.declared(body.get("tools"), model, betas, body.get("mcp_servers"))
    check_markers(raw_tools, system_blocks, parsed, body.get("cache_control"))
    _check_compaction(parsed, signer)
    _check_seams(parsed, platform, signer)
    fallbacks = _fallbacks(body.get("fallbacks"), betas, name)
    _check_credit(body.get("fallback_credit_token"), betas, signer, fallbacks)

    # The prefix starts from the top-level `system`; a system message is part of the messages.
    top_system = "\n".join(p for p in system_parts if p)
    system = "\n".join(p for p in [top_system, *notes.texts] if p)
    tools = tuple(t for t in (*tools, *_tools(notes.defined)) if t.name in notes.available)
    turn = _current_turn(parsed)
    if not thinking.on:
        # Thinking off: only an assistant message in the final position (a prefill) may not
        # hold thinking; earlier ones are accepted (the service strips their thinking).
        in_context: set[int] = set()
        if parsed[-1][0] == "assistant":
            for j, block in enumerate(parsed[-1][1]):
                if block["type"] in _THINKING:
                    raise _invalid(_DISABLED_THINKING.format(i=len(parsed) - 1, j=j))
    elif model.keeps_earlier_thinking:
        in_context = {i for i, (role, _) in enumerate(parsed) if role == "assistant"}
    else:
        in_context = set(turn)
    if parsed[-1][0] == "assistant" and parsed[-1][1] and parsed[-1][1][-1]["type"] in _THINKING:
        last = len(parsed) - 1
        raise _invalid(  # guess: the rule is documented (SDK `lib/middleware/_fallbacks.py`), its text not
            f"messages.{last}.content.{len(parsed[last][1]) - 1}: the final `assistant` message "
            "cannot end with a `thinking` block"
        )
    replay = _Replay(model, platform, account, signer, thinking.behavior, betas)
    # guess: a tool declared with `defer_loading` is not rendered into the prompt, so it is
    # not part of the prefix either (added later, it leaves earlier thinking valid)
    shown_tools = [t for t in raw_tools if not t.get("defer_loading")]
    prefix = Prefix(top_system, shown_tools) if model.checks_prefix else None
    parsed = replay.check(parsed, in_context, prefix)
    if thinking.kind == "enabled" and any(
        b["type"] == "tool_use" for i in turn for b in parsed[i][1]
    ):
        first_blocks = parsed[turn[0]][1]
        first = first_blocks[0]["type"] if first_blocks else "nothing"
        if first not in _THINKING:
            raise _invalid(_FINAL_THINKING.format(i=turn[0], found=first))

    conversation = Conversation(
        system=system, turns=_turns(parsed, documents), tools=tools, server_tools=server
    )
    compaction = None
    if trigger is not None and reply_usage(conversation, Reply()).input_tokens >= trigger:
        question = next(
            (t.text for t in reversed(conversation.turns) if t.role == "user" and t.text.strip()),
            "",
        )
        compaction = question or "The conversation so far."
    cache = plan_cache(
        model=model,
        account=account,
        tools=raw_tools,
        system=system_blocks,
        messages=parsed,
        top_level=body.get("cache_control"),
        conversation=conversation,
        read_tokens=lambda role, blocks: _neutral(role, blocks, "messages", documents)[1],
        config={"thinking": [thinking.kind, thinking.budget], "effort": effort},
    )
    settings = Settings(
        thinking=thinking.on,
        budget_tokens=thinking.budget,
        effort=effort,
        max_tokens=max_tokens,
        tool_choice=choice_type,
        tool_name=cast("str | None", choice.get("name")),
        parallel_tool_calls=not bool(choice.get("disable_parallel_tool_use")),
        interleaved=thinking.kind != "enabled" or INTERLEAVED_BETA in betas,
        response_schema=response_schema,
    )
    return ClaudeRequest(
        model=model,
        model_name=name,
        fallbacks=fallbacks,
        credit=any(b in betas for b in _CREDIT_BETAS),
        server_tools=frozenset(
            cast("str", t["name"])
            for t in raw_tools
            if t.get("type") not in (None, "custom") and isinstance(t.get("name"), str)
        ),
        conversation=conversation,
        settings=settings,
        display=thinking.display,
        stream=body.get("stream") is True,
        mint=_Mint(
            model,
            account,
            platform,
            prefix,
            replay.previous,
            continues=parsed[-1][0] == "assistant",
        ),
        between_tools=thinking.kind == "between_tools",
        compaction=compaction,
        transformations=replay.transformations if BINDING_BETA in betas else None,
        cache=cache,
    )


# --- rendering -------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaudeBlock:
    """One content block of a Claude reply, before a wire renders it natively.

    ``type`` is ``thinking`` (``text``, ``signature``), ``redacted_thinking`` (``data``: the
    payload, base64), ``text`` (``text``), ``tool_use`` or ``server_tool_use`` (``id``,
    ``name``, ``input``), ``compaction`` (``text``: the summary, ``data``: its
    ``encrypted_content``) or ``fallback`` (``fields``: its ``from``, ``to`` and ``trigger``)."""

    type: Literal[
        "thinking",
        "redacted_thinking",
        "text",
        "tool_use",
        "server_tool_use",
        "compaction",
        "fallback",
    ]
    text: str = ""
    signature: str = ""
    data: str = ""
    id: str = ""
    name: str = ""
    input: Mapping[str, Any] = field(default_factory=dict[str, Any])
    fields: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @property
    def data_b64(self) -> str:
        return self.data

    @property
    def input_json(self) -> str:
        return arguments_json(self.input)

    def prefix_value(self) -> Mapping[str, Any] | None:
        """The block as the prefix of a later block sees it (None: thinking, which is not part
        of the prefix, and a `fallback` block, which is not rendered into the prompt)."""
        if self.type == "text":
            return {"type": "text", "text": self.text}
        if self.type == "tool_use":
            return {"type": "tool_use", "id": self.id, "name": self.name, "input": self.input}
        if self.type == "server_tool_use":
            return {
                "type": "server_tool_use",
                "id": self.id,
                "name": self.name,
                "input": dict(self.input),
            }
        if self.type == "compaction":
            return {"type": "compaction", "content": self.text}
        return None


def render_blocks(
    reply: Reply,
    request: ClaudeRequest,
    *,
    signer: Signer,
    tool_id_prefix: str,
    seed: str,
    fallback: Reply | None = None,
) -> list[ClaudeBlock]:
    """The content blocks of ``reply`` to ``request``: the compaction block when the request
    passed its trigger, thinking (or redacted thinking, or an omitted-text thinking block)
    bound to the request, then text, then tool uses (a call to a server tool the request
    declares is a ``server_tool_use``). Under ``between_tools`` the model does not think before
    its first tool call, only between tools.

    With ``fallback`` (the next model's reply, when ``reply`` refuses and the request has
    ``fallbacks``) the refusing model's partial output is followed by a ``fallback`` block and
    the fallback model's blocks, its thinking signed as that model's and bound to everything
    before it."""
    blocks: list[ClaudeBlock] = []
    if request.compaction is not None:
        sealed = signer.seal_b64(SCOPE, KIND_COMPACTION, request.compaction)
        blocks.append(ClaudeBlock("compaction", text=request.compaction, data=sealed))
    previous = _turn_blocks(
        blocks, reply, request, signer=signer, ids=(tool_id_prefix, seed), model=request.model
    )
    if fallback is not None and request.fallbacks:
        to = claude_profile(request.fallbacks[0]) or request.model
        trigger: dict[str, Any] = {"type": "refusal", "category": reply.refusal}
        blocks.append(
            ClaudeBlock(
                "fallback",
                fields={
                    "from": {"model": request.model_name},
                    "to": {"model": to.name},
                    "trigger": trigger,
                },
            )
        )
        _turn_blocks(
            blocks,
            fallback,
            request,
            signer=signer,
            ids=(tool_id_prefix, seed + "/fallback"),
            model=to,
            previous=previous,
        )
    return blocks


def _turn_blocks(
    blocks: list[ClaudeBlock],
    reply: Reply,
    request: ClaudeRequest,
    *,
    signer: Signer,
    ids: tuple[str, str],
    model: ClaudeProfile,
    previous: str | None = None,
) -> str | None:
    """Add one model's blocks for ``reply`` to ``blocks``; the digest of its last thinking
    proof (the next model's first block records it as its predecessor)."""
    thinking = reply.thinking
    turns = request.conversation.turns
    if request.between_tools and not (turns and turns[-1].results):
        thinking = None  # no thinking up front: only progress updates between tools
    if thinking is not None:
        before = [v for b in blocks if (v := b.prefix_value()) is not None]
        record = request.mint.record(before, model=model, previous=previous)
        if reply.redacted:
            size = min(400 + len(thinking.encode("utf-8", "surrogatepass")), 1100)
            data = seal_proof(signer, KIND_REDACTED, thinking, record, size=size)
            blocks.append(ClaudeBlock("redacted_thinking", data=data))
            previous = hashlib.sha256(data.encode()).hexdigest()[:32]
        else:
            omitted = request.display == "omitted"
            proof = KIND_OMITTED if omitted else KIND_THINKING
            signature = seal_proof(signer, proof, thinking, record)
            blocks.append(
                ClaudeBlock("thinking", text="" if omitted else thinking, signature=signature)
            )
            previous = hashlib.sha256(signature.encode()).hexdigest()[:32]
    refused = reply.stop == "refusal"
    if reply.text or not (
        refused or reply.tool_calls or any(b.type not in ("compaction", "fallback") for b in blocks)
    ):
        blocks.append(ClaudeBlock("text", text=reply.text))
    prefix, seed = ids
    for index, call in enumerate(() if refused else reply.tool_calls):
        if call.name in request.server_tools:
            call_id = call.id or stable_id("srvtoolu_01", seed, str(index))
            kind: Literal["tool_use", "server_tool_use"] = "server_tool_use"
        else:
            call_id = call.id or stable_id(prefix, seed, str(index))
            kind = "tool_use"
        blocks.append(ClaudeBlock(kind, id=call_id, name=call.name, input=dict(call.arguments)))
    return previous


def stop_details(
    reply: Reply, request: ClaudeRequest, signer: Signer, seed: str
) -> dict[str, Any] | None:
    """A refusal's `stop_details`: its category and explanation, and (with the credit beta)
    a `fallback_credit_token` the retry may redeem, with whether the partial turn may be
    resent as a prefill (it may when the refusal left any content)."""
    if reply.stop != "refusal":
        return None
    token = signer.seal_b64(SCOPE, KIND_CREDIT, seed) if request.credit else None
    return {
        "type": "refusal",
        "category": reply.refusal,
        # guess: the explanations' texts are not published (and not stable)
        "explanation": (f"This request was declined ({reply.refusal})." if reply.refusal else None),
        "fallback_credit_token": token,
        "fallback_has_prefill_claim": (
            bool(reply.text or reply.thinking) if token is not None else None
        ),
        "recommended_model": None,
    }
