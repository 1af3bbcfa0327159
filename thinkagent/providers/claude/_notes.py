"""Instructions and tools that change over a Claude conversation, appended instead of edited.

On the models that bind thinking to its prefix, a changed top-level `system` or `tools`
invalidates every thinking block produced before the change. The sanctioned way to change them
is a mid-conversation system message: the change is appended where it happens, nothing before
it is edited (platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages,
…/preserved-thinking/change-tools-or-instructions). In the shared schema that message is a
`SystemNote` ending a user turn.

The conversation's *base* is the `system` text and the `tools` a request sent as its own: the
response records them (`provider_details`, key `conversation`) on the models that bind thinking
and take system messages. A later request keeps sending that base, byte for byte, when the
history's notes since it account for the request's instructions and tools: the instructions
in force are the text of the latest note marked `instructions` (else the base's), the tools the
base's with each note's additions and removals. A tool the base did not have goes into `tools`
marked `defer_loading` (hidden until a note adds it, and not part of the rendered prompt), so
it can be added by reference. When the notes do not account for the request (an instruction
changed without a note, a tool rewritten), the request sends its own, and earlier thinking is
left out as before.

Pure Python: no vendor SDK is imported here.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from pydantic import JsonValue

from ..._memo import PerPrefix
from ...messages import Message, SystemNote
from .._system_notes import current_prompt
from ..base import ToolDefinition

__all__ = ["BASE", "Base", "base_details", "kept_base", "note_for", "recorded_base"]

BASE = "conversation"
"""The `provider_details` key of a response's recorded base (its request's own system and
tools)."""


@dataclass(frozen=True, slots=True)
class Base:
    """The `system` text and `tools` a conversation's thinking was produced under, and the index
    of the message that recorded them (notes after it change what is in force)."""

    system: str | None
    tools: tuple[ToolDefinition, ...]
    at: int
    instructions: str | None = None
    """The instructions in force after the messages it was read from (the latest note's)."""
    names: tuple[str, ...] = ()
    """The names of the tools in force after them (the base's, with the notes' changes)."""

    def after(self, note: SystemNote) -> Base:
        """What is in force after `note`."""
        instructions = (note.text or None) if note.instructions else self.instructions
        names = [name for name in self.names if name not in note.remove_tools]
        names += [name for name in note.add_tools if name not in names]
        return replace(self, instructions=instructions, names=tuple(names))


def base_details(system: str | None, tools: Sequence[ToolDefinition]) -> dict[str, JsonValue]:
    """The record of a request's own system and tools."""
    return {
        "system": system,
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in tools
        ],
    }


def recorded_base(messages: Sequence[Message], scopes: Collection[str]) -> Base | None:
    """The latest base recorded by a message of `scopes`, with what is in force after
    `messages` by it and the notes since, or None. A conversation's later requests read their
    new messages only (`PerPrefix`)."""
    kind = (BASE, frozenset(scopes))
    checked, kept = _IN_FORCE.resume(messages, kind)
    base = cast("Base | None", kept)
    prompt = current_prompt(messages)
    at_prompt = base  # what is in force before the last prompt, for the next run from there
    for index in range(checked, len(messages)):
        if index == prompt:
            at_prompt = base
        message = messages[index]
        if message.role == "assistant":
            if message.scope in scopes:
                raw = (message.provider_details or {}).get(BASE)
                if isinstance(raw, dict):
                    base = _parsed(cast("dict[str, Any]", raw), index)
        elif base is not None and base.at >= 0:
            for note in message.notes:
                base = base.after(note)
    base = base if base is not None and base.at >= 0 else None
    at_prompt = at_prompt if at_prompt is not None and at_prompt.at >= 0 else None
    _IN_FORCE.keep_ends(
        messages, checked, kind, lambda n: base if n == len(messages) else at_prompt, prompt
    )
    return base


_IN_FORCE = PerPrefix()


def _parsed(raw: dict[str, Any], at: int) -> Base:
    """The base a message recorded (`at: -1`: a record with a tool that is not an object, which
    makes the conversation's base unknown until the next one)."""
    system = raw.get("system")
    tools: list[ToolDefinition] = []
    for item in cast("list[Any]", raw.get("tools") if isinstance(raw.get("tools"), list) else []):
        if not isinstance(item, dict):
            return Base(None, (), -1)
        spec = cast("dict[str, Any]", item)
        tools.append(
            ToolDefinition(
                str(spec.get("name", "")),
                str(spec.get("description", "")),
                cast("dict[str, Any]", spec.get("parameters") or {}),
            )
        )
    system = system if isinstance(system, str) else None
    return Base(system, tuple(tools), at, system, tuple(t.name for t in tools))


def kept_base(
    base: Base,
    messages: Sequence[Message],
    instructions: str | None,
    tools: Sequence[ToolDefinition],
) -> tuple[str | None, tuple[ToolDefinition, ...], frozenset[str]] | None:
    """What a request keeps sending for `base` (its system, its tools with the ones added
    since, and the names of those, which go deferred), or None when the notes since the base do
    not account for the request's `instructions` and `tools`."""
    in_force, names = base.instructions, base.names
    if in_force != instructions:
        return None
    requested = {t.name: t for t in tools}
    if set(names) != set(requested):
        return None
    known = {t.name for t in base.tools}
    if any(t.name in requested and requested[t.name] != t for t in base.tools):
        return None  # a tool rewritten: a change no note can say
    added = tuple(requested[name] for name in names if name not in known)
    return base.system, base.tools + added, frozenset(t.name for t in added)


def note_for(
    base: Base,
    messages: Sequence[Message],
    instructions: str | None,
    tools: Sequence[ToolDefinition],
    *,
    new_tools: bool,
) -> SystemNote | None:
    """The note that brings the conversation from what is in force to `instructions` and
    `tools`, or None when nothing changed or a note cannot say the change (instructions
    removed, a tool of the base rewritten, a tool the base did not have where `new_tools` is
    false: a platform without deferred tools)."""
    in_force, names = base.instructions, base.names
    requested = {t.name: t for t in tools}
    if any(t.name in requested and requested[t.name] != t for t in base.tools):
        return None
    if instructions is None and in_force is not None:
        return None
    known = {t.name for t in base.tools}
    added = tuple(name for name in requested if name not in names)
    removed = tuple(name for name in names if name not in requested)
    if not new_tools and any(name not in known for name in added):
        return None
    text = instructions if instructions != in_force and instructions is not None else ""
    if not (text or added or removed):
        return None
    return SystemNote(text=text, instructions=bool(text), add_tools=added, remove_tools=removed)
