"""The prefix each Claude thinking block was produced under, as a digest thinkagent records.

On models with preserved thinking, the service checks every replayed `thinking` and
`redacted_thinking` block against its prefix: the top-level `system`, the `tools`, every message
before it, and the thinking block before it (each block records its predecessor; thinking itself
is not part of the prefix). A block whose prefix changed is refused with a 400 ("The block is
bound to a different conversation") or, with `drop_block`, dropped
(platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks).

A mid-conversation system message is part of the prefix of the blocks after it, like any
message: appended, it leaves the earlier blocks' prefix as it was.

`PrefixChain` computes the same kind of digest on thinkagent's side, from what a request sends:
the adapter records each new block's digest with the message (`provider_details`, key
`prefix_digests`) and, before a later request, recomputes it for every kept block. A different
digest means the block would be refused, so it is left out of what is sent (or refused with
`HistoryError`) before anything leaves the process. The digest covers values, not formatting:
the same conversation sent to the Claude API or to Bedrock has the same digests. Formatting,
`cache_control` markers, effort, `max_tokens`, `tool_choice` and the thinking configuration are
not in it, as they are not in the service's prefix.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ...messages import (
    Document,
    Image,
    OpaqueBlock,
    Part,
    ServerToolCall,
    ServerToolResult,
    SystemNote,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from .._common import arguments_object
from ..base import ToolDefinition

__all__ = ["DIGESTS", "PrefixChain"]

DIGESTS = "prefix_digests"
"""The `provider_details` key of a message's recorded digests, one per thinking block in order."""

_VERSION = b"thinkagent-claude-prefix/1\x00"


def _canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def _media(part: Image | Document) -> list[Any]:
    source = hashlib.sha256(part.data).hexdigest() if part.data is not None else part.url
    return [part.kind, part.media_type, source, getattr(part, "name", None)]


class PrefixChain:
    """A running digest of what a request sends before each thinking block.

    Built from the request's `system` text and tools; then the parts go in, in the order they
    are sent: `add` for every part that is not thinking, `block` at each thinking block (its
    digest, from everything so far and the block kept before it), `keep` for a block that goes
    out (it becomes the next block's predecessor).
    """

    __slots__ = ("_hash", "_previous", "_role", "_start")

    def __init__(self, system: str | None, tools: Sequence[ToolDefinition]) -> None:
        start = hashlib.sha256(_VERSION)
        start.update(
            _canonical([system or "", [[t.name, t.description, t.parameters] for t in tools]])
        )
        self._start = start
        self._hash = start.copy()
        self._role = ""
        self._previous = b""

    def add(self, role: str, part: Part) -> None:
        """A part that is sent, and is not thinking."""
        if isinstance(part, OpaqueBlock) and part.type == "fallback":
            return  # not rendered into the prompt: not part of it
        if isinstance(part, OpaqueBlock) and part.type == "compaction":
            if part.data.get("content") is None:
                return  # a failed compaction: a no-op for the service
            # The service checks the prefix from the latest compaction block on.
            self._hash = self._start.copy()
            self._hash.update(_canonical(["compaction", part.data]))
            self._role = role
            return
        if role != self._role:
            self._hash.update(b"\x01" + role.encode())
            self._role = role
        self._hash.update(b"\x02" + _canonical(_item(part)))

    def block(self) -> str:
        """The digest of a thinking block at this point of the request."""
        digest = self._hash.copy()
        digest.update(b"\x03" + self._previous)
        return digest.hexdigest()[:32]

    def keep(self, block: ThinkingBlock) -> None:
        """`block` goes out: the next block's predecessor."""
        proof = block.redacted if block.redacted is not None else block.signature or ""
        self._previous = hashlib.sha256(proof.encode()).digest()

    def key(self) -> bytes:
        """What the chain starts from (the system and the tools), as a digest."""
        return self._start.digest()

    def restore(self, other: PrefixChain) -> None:
        """Continue from where `other` is (a copy of its state)."""
        self._start = other._start
        self._hash = other._hash.copy()
        self._role = other._role
        self._previous = other._previous

    def copy(self) -> PrefixChain:
        other = PrefixChain.__new__(PrefixChain)
        other._start = self._start
        other._hash = self._hash.copy()
        other._role = self._role
        other._previous = self._previous
        return other


def _item(part: Part) -> list[Any]:
    if isinstance(part, TextPart):
        return ["text", part.text]
    if isinstance(part, ToolCall):
        return ["tool_use", part.id, part.name, arguments_object(part)]
    if isinstance(part, ToolResult):
        media = [_media(m) for m in part.media]
        return ["tool_result", part.call_id, part.content_text(), part.is_error, media]
    if isinstance(part, (Image, Document)):
        return _media(part)
    if isinstance(part, OpaqueBlock | ServerToolCall | ServerToolResult):
        return ["opaque", part.data]  # as when server tools' blocks were opaque
    if isinstance(part, SystemNote):
        return ["system", part.text, part.clear_at, part.add_tools, part.remove_tools]
    raise TypeError(f"a thinking block is not part of the prefix: {part!r}")
