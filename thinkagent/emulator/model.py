"""The emulator's neutral vocabulary, shared by the brain, the scripts and every wire API.

A wire parses its native request into a :class:`Conversation` (system text, turns with
their tool calls and results, offered tools) plus :class:`Settings`, asks for a
:class:`Reply` (scripted or planned by the brain) and renders that reply in its native
shape. Nothing here knows any provider, and no name here is one of the library's
(``thinkagent.Message``, ``Usage``...): the emulator is an oracle apart from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Call",
    "CallResult",
    "Conversation",
    "Media",
    "Reply",
    "ReplyUsage",
    "Settings",
    "StopReason",
    "ToolCallSpec",
    "ToolSpec",
    "Turn",
]

#: Neutral stop reasons; each wire API maps them to its own vocabulary.
StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered in the request: name, description and JSON schema of its input."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True)
class Media:
    """An image or a document the client sent: its kind, media type and, when it came as
    bytes, their size (a URL is kept instead when it came by reference)."""

    kind: Literal["image", "document"]
    media_type: str
    size: int | None = None
    url: str | None = None

    def describe(self) -> str:
        where = f"{self.size} bytes" if self.size is not None else f"at {self.url}"
        return (
            f"an {self.kind} ({self.media_type}, {where})"
            if self.kind == "image"
            else (f"a {self.kind} ({self.media_type}, {where})")
        )


@dataclass(frozen=True)
class Call:
    """A tool call already present in the conversation (an earlier assistant turn)."""

    id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])


@dataclass(frozen=True)
class CallResult:
    """A tool result sent back by the client; ``content`` is flattened to text."""

    call_id: str
    content: str
    is_error: bool = False
    media: tuple[Media, ...] = ()


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation. ``thinking`` is the visible reasoning replayed in an
    assistant turn (empty when it was omitted or redacted)."""

    role: Literal["user", "assistant"]
    text: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()
    results: tuple[CallResult, ...] = ()
    media: tuple[Media, ...] = ()


@dataclass(frozen=True)
class Conversation:
    """The neutral view of a request's conversation: system text, turns and tools."""

    system: str = ""
    turns: tuple[Turn, ...] = ()
    tools: tuple[ToolSpec, ...] = ()

    def digest(self) -> str:
        """A stable hex digest of the conversation, used to derive deterministic ids."""
        payload = json.dumps(
            [
                self.system,
                [
                    [
                        t.role,
                        t.text,
                        t.thinking,
                        [[c.id, c.name, c.arguments] for c in t.calls],
                        [[r.call_id, r.content, r.is_error] for r in t.results],
                        [[m.kind, m.media_type, m.size, m.url] for m in t.media],
                    ]
                    for t in self.turns
                ],
                [[t.name, t.description] for t in self.tools],
            ],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass(frozen=True)
class Settings:
    """Request settings the brain takes into account.

    ``tool_choice`` is ``"auto"``, ``"any"`` (must call some tool), ``"tool"`` (must call
    ``tool_name``) or ``"none"`` (must not call tools). ``interleaved=False`` means the
    model thinks only at the start of an assistant turn, not again after tool results
    (Claude with a budget and no interleaved-thinking beta). ``response_schema`` is the JSON
    schema the final answer must follow (a JSON-schema response format): the answer is then
    JSON text valid for it.
    """

    thinking: bool = False
    budget_tokens: int | None = None
    effort: str | None = None
    max_tokens: int | None = None
    tool_choice: Literal["auto", "any", "tool", "none"] = "auto"
    tool_name: str | None = None
    parallel_tool_calls: bool = True
    interleaved: bool = True
    response_schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ToolCallSpec:
    """A tool call in a :class:`Reply`. ``id`` is generated in the wire's native format
    when omitted."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    id: str | None = None


@dataclass(frozen=True)
class ReplyUsage:
    """Token counts of one reply. ``thinking_tokens`` are included in ``output_tokens``."""

    input_tokens: int
    output_tokens: int
    thinking_tokens: int = 0


@dataclass(frozen=True)
class Reply:
    """One assistant turn, provider-neutral: what the brain plans and what scripts queue.

    * ``thinking``: the reasoning text, or ``None`` for no thinking block. It is signed
      like any other thinking (and blanked when the request asks for
      ``display: "omitted"``).
    * ``redacted``: return the thinking as a redacted (encrypted) block instead, where the
      wire API has one.
    * ``text``: the visible answer (or a short preamble before tool calls).
    * ``tool_calls``: the calls, in order; several calls form one parallel step.
    * ``stop_reason``: default ``"tool_use"`` with calls, else ``"end_turn"``. ``"refusal"``:
      the model declines (``refusal``: the policy category a wire reports, where it has one);
      ``"pause_turn"``: the turn pauses (Claude: a server tool loop the next request resumes).
    * ``usage``: default computed from the text lengths.
    """

    text: str = ""
    thinking: str | None = None
    tool_calls: Sequence[ToolCallSpec] = ()
    redacted: bool = False
    stop_reason: StopReason | None = None
    usage: ReplyUsage | None = None
    refusal: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))

    @property
    def stop(self) -> StopReason:
        """The effective stop reason."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"
