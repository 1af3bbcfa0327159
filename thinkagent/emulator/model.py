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
    "SearchHit",
    "ServerToolSpec",
    "ServerUse",
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
class ServerToolSpec:
    """A built-in tool the request declares, run by the service itself. ``kind`` is neutral
    (``web_search``, ``web_fetch``, ``code_execution``, ``file_search``, ``tool_search``,
    ``mcp``, ``image_generation``, ``url_context``); an MCP server has its ``name``, the
    ``tools`` it offers and whether its calls wait for the user's ``approval``;
    ``max_uses`` bounds a search's uses in one request."""

    kind: str
    name: str = ""
    tools: tuple[str, ...] = ()
    approval: bool = False
    max_uses: int | None = None


@dataclass(frozen=True)
class SearchHit:
    """One result of a (fake, deterministic) search or fetch."""

    url: str
    title: str
    snippet: str


@dataclass(frozen=True)
class ServerUse:
    """One use of a built-in tool inside an assistant turn: the call and what it returned.

    ``kind`` as on :class:`ServerToolSpec`; ``name`` is the tool's name (an MCP tool's for
    ``mcp``, with its ``server``); ``arguments`` the query or code; ``hits`` a search's
    results, ``output`` code's or an MCP tool's output. ``approval`` is ``"pending"`` for a
    call that waits for the user's approval (and returned nothing yet), ``"approved"`` for one
    run after it (``approval_id`` names the request it ran after), ``"denied"`` for one the
    user refused. ``id`` is generated in the wire's native format when omitted."""

    kind: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    hits: tuple[SearchHit, ...] = ()
    output: str = ""
    server: str = ""
    approval: Literal["none", "pending", "approved", "denied"] = "none"
    id: str | None = None
    approval_id: str | None = None


@dataclass(frozen=True)
class Turn:
    """One turn of the conversation. ``thinking`` is the visible reasoning replayed in an
    assistant turn (empty when it was omitted or redacted); ``server_uses`` the built-in tools
    it used; ``approvals`` a user turn's answers to calls awaiting approval (call id,
    approved)."""

    role: Literal["user", "assistant"]
    text: str = ""
    thinking: str = ""
    calls: tuple[Call, ...] = ()
    results: tuple[CallResult, ...] = ()
    media: tuple[Media, ...] = ()
    server_uses: tuple[ServerUse, ...] = ()
    approvals: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class Conversation:
    """The neutral view of a request's conversation: system text, turns and tools (with the
    built-in tools it declares in ``server_tools``)."""

    system: str = ""
    turns: tuple[Turn, ...] = ()
    tools: tuple[ToolSpec, ...] = ()
    server_tools: tuple[ServerToolSpec, ...] = ()

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
                        [[u.kind, u.name, u.arguments, u.approval] for u in t.server_uses],
                        list(t.approvals),
                    ]
                    for t in self.turns
                ],
                [[t.name, t.description] for t in self.tools],
                [[t.kind, t.name] for t in self.server_tools],
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
    * ``server_uses``: built-in tools the service ran in this turn, after the thinking and
      before the text (a use ``"pending"`` approval ends the turn).
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
    server_uses: Sequence[ServerUse] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "tool_calls", tuple(self.tool_calls))
        object.__setattr__(self, "server_uses", tuple(self.server_uses))

    @property
    def stop(self) -> StopReason:
        """The effective stop reason."""
        if self.stop_reason is not None:
            return self.stop_reason
        return "tool_use" if self.tool_calls else "end_turn"
