"""Mid-conversation system messages and tool changes, as Claude takes them.

From platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages and the
project's provider rules: a ``{"role": "system"}`` entry of ``messages`` adds instructions from
where it stands, without editing the prefix before it. It is accepted on Opus 4.8 and newer,
Sonnet and Haiku 5.5, Fable and Mythos 5 and newer (older models answer ``role 'system' is not
supported on this model``), and only where the rules place it: never first, right after a
``user`` message (one holding only tool results counts) or an assistant message ending in a
server tool result, and before an ``assistant`` message or at the end (so never between a
``tool_use`` and its ``tool_result``, and never next to another system message). Its content
is text, and ``tool_addition`` / ``tool_removal`` blocks naming a tool by reference (beta
``mid-conversation-tool-changes-2026-07-01``; a ``tool_definition`` by value with beta
``inline-tools-2026-09-15``, on the Claude API only); a tool declared with ``defer_loading:
true`` stays hidden until one adds it. ``clear_at`` (beta
``mid-conversation-system-clear-at-2026-08-21``) makes a message turn-scoped: shown for the user
turn it follows only, text blocks only; it stays in the array and is sent again as it was.

Errors carry ``error.details.error_code``: ``tool_reference_unresolved`` (a change names a tool
not defined at that point) and ``tool_name_conflict`` (a tool defined by value takes a name
another tool holds). The 400 texts are the service's where the rules quote them; the others
are the emulator's (marked ``guess``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ..encoding import mapping_or_none
from ..framework import WireError
from .profiles import ClaudeProfile

__all__ = [
    "CLEAR_AT_BETA",
    "INLINE_TOOLS_BETA",
    "TOOL_CHANGES_BETA",
    "ClaudeError",
    "SystemMessages",
    "check_clear_at",
    "check_system_messages",
]

TOOL_CHANGES_BETA = "mid-conversation-tool-changes-2026-07-01"
INLINE_TOOLS_BETA = "inline-tools-2026-09-15"
CLEAR_AT_BETA = "mid-conversation-system-clear-at-2026-08-21"

_CHANGES = ("tool_addition", "tool_removal")
_TURN_SCOPED = "next_user_message"


class ClaudeError(WireError):
    """A 400 that names its cause in ``error.details.error_code``."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(400, message, type="invalid_request_error")
        self.code = code


def _invalid(message: str) -> WireError:
    return WireError(400, message, type="invalid_request_error")


def check_clear_at(message: Mapping[str, Any], index: int, betas: Sequence[str]) -> str | None:
    """A message's ``clear_at`` (None when it has none), refused as the service refuses it."""
    if "clear_at" not in message:
        return None
    value = message["clear_at"]
    if CLEAR_AT_BETA not in betas:
        raise _invalid(f"messages.{index}.clear_at: Extra inputs are not permitted")
    if message.get("role") != "system":
        raise _invalid(
            f"messages.{index}.clear_at: clear_at is only permitted on role 'system' messages"
        )
    if value is None:
        return None
    if value not in ("next_user_message", "never"):
        raise _invalid(f"messages.{index}.clear_at: Input should be 'next_user_message' or 'never'")
    return cast("str", value)


@dataclass
class SystemMessages:
    """What a request's system messages mean for the model: the texts it sees (a turn-scoped
    message after a later user turn is no longer shown), the tools available at the end, and
    the definitions of those added by value."""

    texts: list[str] = field(default_factory=list[str])
    available: list[str] = field(default_factory=list[str])
    defined: list[Mapping[str, Any]] = field(default_factory=list[Mapping[str, Any]])


def _server_tool_result(blocks: Sequence[Mapping[str, Any]]) -> bool:
    last = blocks[-1]["type"] if blocks else ""
    return isinstance(last, str) and last.endswith("_tool_result") and last != "tool_result"


def check_system_messages(
    messages: Sequence[tuple[str, list[Mapping[str, Any]]]],
    clear_ats: Sequence[str | None],
    *,
    model: ClaudeProfile,
    tools: Sequence[Mapping[str, Any]],
    betas: Sequence[str],
    platform: str,
) -> SystemMessages:
    """Validate every system message of ``messages`` (model, placement, content, tool
    changes) and say what they add up to."""
    declared = {cast("str", t.get("name")): t for t in tools if isinstance(t.get("name"), str)}
    out = SystemMessages(
        available=[name for name, t in declared.items() if not t.get("defer_loading")]
    )
    defined: dict[str, str] = {name: str(t.get("type", "custom")) for name, t in declared.items()}
    for i, (role, blocks) in enumerate(messages):
        if role != "system":
            continue
        if not model.takes_system_messages:
            raise _invalid("role 'system' is not supported on this model")
        _check_place(messages, i)
        scoped = clear_ats[i] == _TURN_SCOPED
        texts: list[str] = []
        for j, block in enumerate(blocks):
            kind = block["type"]
            if kind == "text":
                texts.append(str(block.get("text", "")))
                continue
            if kind not in _CHANGES:
                raise _invalid(  # guess: the wording of the refusal is not published
                    f"messages.{i}.content.{j}: a system message holds text, tool_addition and "
                    f"tool_removal blocks, not `{kind}`"
                )
            if scoped:
                raise _invalid(
                    f"messages.{i}: a turn-scoped system message supports text blocks only "
                    "(clear_at: 'next_user_message')"
                )
            _change(out, defined, block, f"messages.{i}.content.{j}", betas, platform)
        later_user = any(r == "user" for r, _ in messages[i + 1 :])
        if not (scoped and later_user):
            out.texts += texts
    return out


def _check_place(messages: Sequence[tuple[str, list[Mapping[str, Any]]]], i: int) -> None:
    # guess: the placement refusals' wording is not published
    if i == 0:
        raise _invalid(
            "messages.0: a system message cannot be the first message: put the instructions in "
            "the top-level `system` field"
        )
    role, blocks = messages[i - 1]
    if role != "user" and not (role == "assistant" and _server_tool_result(blocks)):
        raise _invalid(
            f"messages.{i}: a system message must immediately follow a `user` message or an "
            "`assistant` message that ends in a server tool result"
        )
    if i + 1 < len(messages) and messages[i + 1][0] != "assistant":
        raise _invalid(
            f"messages.{i}: a system message must be followed by an `assistant` message or be "
            "the last message"
        )


def _change(
    out: SystemMessages,
    defined: dict[str, str],
    block: Mapping[str, Any],
    where: str,
    betas: Sequence[str],
    platform: str,
) -> None:
    kind = cast("str", block["type"])
    tool = mapping_or_none(block.get("tool")) or {}
    tool_type = tool.get("type")
    if tool_type == "tool_definition" and kind == "tool_addition":
        if INLINE_TOOLS_BETA not in betas or platform != "anthropic":
            raise _invalid(
                f"{where}.tool: Input tag 'tool_definition' found using 'type' does not match any "
                "of the expected tags: 'mcp_tool_reference', 'mcp_toolset_reference', "
                "'tool_reference'"
            )
        definition = mapping_or_none(tool.get("definition")) or {}
        name = definition.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid(f"{where}.tool.definition.name: Field required")
        if name in defined:
            raise ClaudeError(
                f"{where}: a tool named {name!r} is already available",
                code="tool_name_conflict",
            )
        defined[name] = str(definition.get("type", "custom"))
        out.available.append(name)
        out.defined.append(definition)
        return
    if TOOL_CHANGES_BETA not in betas:
        raise _invalid(
            f"{where}: Input tag '{kind}' found using 'type' does not match any of the expected "
            "tags: 'text'"
        )
    if tool_type not in ("tool_reference", "mcp_tool_reference", "mcp_toolset_reference"):
        raise _invalid(
            f"{where}.tool: Input tag '{tool_type}' found using 'type' does not match any of the "
            "expected tags: 'mcp_tool_reference', 'mcp_toolset_reference', 'tool_reference'"
        )
    name = tool.get("name")
    if not isinstance(name, str) or name not in defined:
        raise ClaudeError(
            f"{where}.tool: {name!r} is not a tool defined at this position in the conversation",
            code="tool_reference_unresolved",
        )
    if kind == "tool_addition":
        if name not in out.available:
            out.available.append(name)
    else:
        out.available = [n for n in out.available if n != name]
