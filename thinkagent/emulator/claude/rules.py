"""The Claude rules: model profiles, request validation, replay rules and reply blocks,
shared by the Anthropic Messages wire and the Bedrock Converse wire.

Bedrock runs Claude behind its own envelope: the Bedrock wire translates a Converse
request into the Anthropic Messages shape and calls :func:`parse_request` with its own
signing scope, so both wires enforce the same rules with the same messages (Bedrock
wraps them in ``ValidationException: The model returned the following errors: ...``).
A refused request raises :class:`~thinkagent.emulator.framework.WireError` with
Anthropic's status and message.

Model defaults (by name: ``claude-opus-4-7``, ``claude-sonnet-4-5-20250929``,
``claude-3-7-sonnet-20250219``, ``claude-mythos-preview``...):

* Opus 4.7 and newer, and the Mythos and Fable models, think adaptively by default,
  accept only ``adaptive`` (``enabled`` and ``disabled`` get a 400) and default to
  ``display: "omitted"``.
* Every other Claude model does not think unless asked and accepts ``enabled`` (with a
  budget), ``adaptive`` and ``disabled``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..encoding import arguments_json, b64encode, list_or_none, mapping_or_none, stable_id
from ..framework import WireError
from ..model import Call, CallResult, Conversation, Reply, Settings, ToolSpec, Turn
from ..signing import Signer

__all__ = [
    "ClaudeBlock",
    "ClaudeProfile",
    "ClaudeRequest",
    "claude_profile",
    "parse_request",
    "render_blocks",
]

EFFORTS = ("low", "medium", "high", "xhigh", "max")
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"
THINKING_DOCS = "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"

#: Signing kinds used by Claude proofs.
KIND_THINKING = "claude.thinking"
KIND_OMITTED = "claude.thinking.omitted"
KIND_REDACTED = "claude.redacted"

_MODEL_RE = re.compile(
    r"^claude-(?:(?P<family>opus|sonnet|haiku)-(?P<major>\d)(?:-(?P<minor>\d{1,2}))?(?:-|$)"
    r"|(?P<omajor>\d)(?:-(?P<ominor>\d))?-(?P<ofamily>opus|sonnet|haiku)"
    r"|(?P<new>mythos|fable)\b)"
)


def _invalid(message: str) -> WireError:
    return WireError(400, message, type="invalid_request_error")


@dataclass(frozen=True)
class ClaudeProfile:
    """What the emulator knows about a Claude model name."""

    name: str
    adaptive_only: bool = False
    default_display: Literal["summarized", "omitted"] = "summarized"

    @property
    def thinks_by_default(self) -> bool:
        return self.adaptive_only


def claude_profile(name: str) -> ClaudeProfile | None:
    """The model's defaults, or ``None`` if ``name`` is not a Claude model."""
    if not name.startswith("claude-"):
        return None
    match = _MODEL_RE.match(name)
    if match is None:
        return ClaudeProfile(name)
    if match.group("new"):
        return ClaudeProfile(name, adaptive_only=True, default_display="omitted")
    family = match.group("family") or match.group("ofamily")
    major = int(match.group("major") or match.group("omajor"))
    minor = int(match.group("minor") or match.group("ominor") or 0)
    if (family == "opus" and (major, minor) >= (4, 7)) or major >= 5:
        return ClaudeProfile(name, adaptive_only=True, default_display="omitted")
    return ClaudeProfile(name)


@dataclass(frozen=True)
class ClaudeRequest:
    """A validated Claude request: its neutral conversation and settings, plus what the
    renderers need (display mode, streaming, the model)."""

    model: ClaudeProfile
    conversation: Conversation
    settings: Settings
    display: Literal["summarized", "omitted"]
    stream: bool


# --- validation ----------------------------------------------------------------------


def _thinking(
    raw: Any, model: ClaudeProfile, max_tokens: int | None
) -> tuple[bool, int | None, Literal["summarized", "omitted"], bool]:
    """(thinking on, budget, display, adaptive)."""
    if raw is None:
        return model.thinks_by_default, None, model.default_display, model.thinks_by_default
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
    if model.adaptive_only and kind in ("enabled", "disabled"):
        raise _invalid(
            f'"thinking.type.{kind}" is not supported for this model. '
            'Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        )
    display = config.get("display", model.default_display)
    if display is None:
        display = model.default_display
    if display not in ("summarized", "omitted"):
        raise _invalid(f"thinking.{kind}.display: Input should be 'summarized' or 'omitted'")
    if kind == "enabled":
        budget = config.get("budget_tokens")
        if budget is None:
            raise _invalid("thinking.enabled.budget_tokens: Field required")
        if not isinstance(budget, int) or isinstance(budget, bool):
            raise _invalid("thinking.enabled.budget_tokens: Input should be a valid integer")
        if budget < 1024:
            raise _invalid(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if max_tokens is not None and budget >= max_tokens:
            raise _invalid(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                f"{THINKING_DOCS}#max-tokens-and-context-window-size"
            )
        return True, budget, display, False
    return kind == "adaptive", None, display, kind == "adaptive"


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


def _verify_block(block: Mapping[str, Any], i: int, j: int, scope: str, signer: Signer) -> None:
    if block["type"] == "thinking":
        text = cast("str", block["thinking"])
        signature = cast("str", block["signature"])
        ok = signer.verify_b64(scope, KIND_THINKING, signature, text) or (
            text == "" and signer.open_b64(scope, KIND_OMITTED, signature) is not None
        )
        if not ok:
            raise _invalid(f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
    elif (
        block["type"] == "redacted_thinking"
        and signer.open_b64(scope, KIND_REDACTED, cast("str", block["data"])) is None
    ):
        raise _invalid(f"messages.{i}.content.{j}: Invalid `data` in `redacted_thinking` block")


def _check_history(
    messages: list[tuple[str, list[Mapping[str, Any]]]], thinking: bool, scope: str, signer: Signer
) -> None:
    # Every block's fields first (ids are strings from here on), then: tool results must
    # answer the tool uses of the message just before them.
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

    # The current assistant turn is every assistant message after the last user message
    # without tool results (a user message with any tool result, even beside text,
    # continues the tool loop). Thinking before it is stripped by the service; thinking
    # in it must verify, and the turn must start with thinking.
    last_user = -1
    for i, (role, blocks) in enumerate(messages):
        if role == "user" and not any(b["type"] == "tool_result" for b in blocks):
            last_user = i
    turn = [i for i in range(last_user + 1, len(messages)) if messages[i][0] == "assistant"]
    if not turn:
        return
    if thinking:
        for i in turn:
            for j, block in enumerate(messages[i][1]):
                _verify_block(block, i, j, scope, signer)
        if any(b["type"] == "tool_use" for i in turn for b in messages[i][1]):
            first_blocks = messages[turn[0]][1]
            first = first_blocks[0]["type"] if first_blocks else "nothing"
            if first not in ("thinking", "redacted_thinking"):
                raise _invalid(_FINAL_THINKING.format(i=turn[0], found=first))
    elif messages[-1][0] == "assistant":
        # Thinking off: only an assistant message in the final position (a prefill) may
        # not hold thinking; earlier ones are accepted (the service strips their thinking).
        i = len(messages) - 1
        for j, block in enumerate(messages[i][1]):
            if block["type"] in ("thinking", "redacted_thinking"):
                raise _invalid(_DISABLED_THINKING.format(i=i, j=j))


def _neutral(role: str, blocks: list[Mapping[str, Any]]) -> Turn:
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[Call] = []
    results: list[CallResult] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(cast("str", block["text"]))
        elif kind == "thinking":
            thinking.append(cast("str", block.get("thinking") or ""))
        elif kind == "tool_use":
            arguments = mapping_or_none(block.get("input")) or {}
            calls.append(Call(cast("str", block["id"]), cast("str", block["name"]), arguments))
        elif kind == "tool_result":
            results.append(
                CallResult(
                    cast("str", block["tool_use_id"]),
                    _text_of(block.get("content", "")),
                    bool(block.get("is_error")),
                )
            )
    return Turn(
        role="assistant" if role == "assistant" else "user",
        text="\n".join(texts),
        thinking="\n".join(thinking),
        calls=tuple(calls),
        results=tuple(results),
    )


def parse_request(
    body: Mapping[str, Any],
    *,
    scope: str,
    signer: Signer,
    model_name: str | None = None,
    require_max_tokens: bool = True,
    betas: Sequence[str] = (),
) -> ClaudeRequest:
    """Validate an Anthropic Messages request body and build its neutral view.

    ``scope`` is the signing scope whose proofs replayed thinking must carry
    (``"anthropic"`` or ``"bedrock"``); ``model_name`` overrides ``body["model"]``;
    ``betas`` are the ``anthropic-beta`` flags. With a thinking budget and no
    ``interleaved-thinking-2025-05-14`` beta, Claude thinks only at the start of an
    assistant turn, not after tool results; adaptive thinking is always interleaved.
    Raises :class:`~thinkagent.emulator.framework.WireError` with the real status, type
    and message.
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

    thinking, budget, display, adaptive = _thinking(body.get("thinking"), model, max_tokens)

    effort: str | None = None
    output_config = mapping_or_none(body.get("output_config"))
    if output_config is not None and output_config.get("effort") is not None:
        effort = output_config.get("effort")
        if effort not in EFFORTS:
            raise _invalid(
                "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
            )

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
    if thinking and choice_type in ("any", "tool"):
        raise _invalid("Thinking may not be enabled when tool_choice forces tool use.")

    system_parts: list[str] = []
    raw_system = body.get("system")
    if raw_system is not None:
        system_parts.append(_text_of(raw_system))

    parsed: list[tuple[str, list[Mapping[str, Any]]]] = []
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
        blocks = _blocks(message, index)
        if role == "system":
            system_parts.append(_text_of(message.get("content")))
        parsed.append((cast("str", role), blocks))
    if parsed[0][0] == "assistant":
        raise _invalid("messages: The first message must use the `user` role.")
    _check_history(parsed, thinking, scope, signer)

    conversation = Conversation(
        system="\n".join(p for p in system_parts if p),
        turns=tuple(_neutral(r, b) for r, b in parsed if r != "system"),
        tools=tools,
    )
    settings = Settings(
        thinking=thinking,
        budget_tokens=budget,
        effort=effort,
        max_tokens=max_tokens,
        tool_choice=choice_type,
        tool_name=cast("str | None", choice.get("name")),
        parallel_tool_calls=not bool(choice.get("disable_parallel_tool_use")),
        interleaved=adaptive or INTERLEAVED_BETA in betas,
    )
    stream = body.get("stream") is True
    return ClaudeRequest(model, conversation, settings, display, stream)


# --- rendering -------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaudeBlock:
    """One content block of a Claude reply, before a wire renders it natively.

    ``type`` is ``thinking`` (``text``, ``signature``), ``redacted_thinking``
    (``data``: the sealed payload), ``text`` (``text``) or ``tool_use`` (``id``,
    ``name``, ``input``)."""

    type: Literal["thinking", "redacted_thinking", "text", "tool_use"]
    text: str = ""
    signature: str = ""
    data: bytes = b""
    id: str = ""
    name: str = ""
    input: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @property
    def data_b64(self) -> str:
        return b64encode(self.data)

    @property
    def input_json(self) -> str:
        return arguments_json(self.input)


def render_blocks(
    reply: Reply,
    *,
    scope: str,
    signer: Signer,
    display: Literal["summarized", "omitted"],
    tool_id_prefix: str,
    seed: str,
) -> list[ClaudeBlock]:
    """The content blocks of ``reply``, signed for ``scope``: thinking (or redacted
    thinking, or an omitted-text thinking block), then text, then tool uses."""
    blocks: list[ClaudeBlock] = []
    if reply.thinking is not None:
        if reply.redacted:
            size = min(400 + len(reply.thinking.encode()), 1100)
            blocks.append(
                ClaudeBlock(
                    "redacted_thinking",
                    data=signer.seal(scope, KIND_REDACTED, reply.thinking, size=size),
                )
            )
        elif display == "omitted":
            blocks.append(
                ClaudeBlock(
                    "thinking", signature=signer.seal_b64(scope, KIND_OMITTED, reply.thinking)
                )
            )
        else:
            blocks.append(
                ClaudeBlock(
                    "thinking",
                    text=reply.thinking,
                    signature=signer.seal_b64(scope, KIND_THINKING, reply.thinking),
                )
            )
    if reply.text or not (reply.tool_calls or blocks):
        blocks.append(ClaudeBlock("text", text=reply.text))
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id or stable_id(tool_id_prefix, seed, str(index))
        blocks.append(
            ClaudeBlock("tool_use", id=call_id, name=call.name, input=dict(call.arguments))
        )
    return blocks
