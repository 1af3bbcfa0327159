"""Claude's thinking proofs: what each signature (or redacted payload) records, and the prefix a
block is bound to.

Anthropic documents Claude signatures as compatible across its platforms (the Claude API,
Bedrock, Google Cloud), each checked on replay for model readability, prefix and, on some
models, account. So every Claude proof is a seal of one scope, ``claude``, followed by a small
record of what it is bound to (the model that wrote it, the account and platform it was
written on, and, on models that run the prefix check, digests of the `system`, the `tools`,
everything before the block and the thinking block before it); the seal covers the record, so
it cannot be edited. Proofs an older emulator made (a seal of the wire's own scope, no record)
still verify, unbound.

The prefix (platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks):
the top-level ``system``, the ``tools`` and every message before the block, by value (not
formatting, key order or ``cache_control``); thinking blocks are not part of it, but each
records its predecessor. With server-side compaction the prefix starts at the latest
``compaction`` block.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..encoding import b64decode, b64encode, list_or_none, mapping_or_none
from ..signing import Signer

__all__ = ["SCOPE", "Bound", "Prefix", "Record", "open_proof", "seal_proof"]

SCOPE = "claude"
"""The signing scope of every Claude proof, on every platform."""


def _digest(value: Any) -> str:
    data = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(data.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Record:
    """What a proof is bound to: ``model`` (a profile key), ``account``, ``platform``
    (``anthropic`` or ``bedrock``), and for prefix-checked models the digests of ``system``,
    ``tools``, the ``prefix`` before the block and its ``previous`` thinking block."""

    model: str = ""
    account: str = ""
    platform: str = ""
    system: str = ""
    tools: str = ""
    prefix: str = ""
    previous: str = ""

    def dump(self) -> bytes:
        fields = {
            "m": self.model,
            "a": self.account,
            "p": self.platform,
            "s": self.system,
            "t": self.tools,
            "x": self.prefix,
            "v": self.previous,
        }
        return json.dumps(fields, separators=(",", ":"), sort_keys=True).encode()

    @classmethod
    def load(cls, raw: bytes) -> Record | None:
        try:
            fields = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(fields, dict):
            return None
        values = cast("dict[str, Any]", fields)
        if not all(isinstance(values.get(k, ""), str) for k in "mapstxv"):
            return None
        return cls(
            model=values.get("m", ""),
            account=values.get("a", ""),
            platform=values.get("p", ""),
            system=values.get("s", ""),
            tools=values.get("t", ""),
            prefix=values.get("x", ""),
            previous=values.get("v", ""),
        )


@dataclass(frozen=True)
class Bound:
    """A proof that verified: its record (None for an unbound proof of an older emulator)."""

    record: Record | None


def seal_proof(
    signer: Signer,
    kind: str,
    content: str,
    record: Record,
    *,
    size: int | None = None,
    scope: str = SCOPE,
) -> str:
    """A proof of ``content`` bound to ``record``, as standard base64 (``scope``: whose proof
    it is, Claude's by default)."""
    raw = record.dump()
    seal = signer.seal(scope, f"{kind}|{raw.decode()}", content, size=size)
    return b64encode(seal + raw + len(raw).to_bytes(2, "big"))


def open_proof(
    signer: Signer,
    kind: str,
    proof: str,
    content: str | None,
    *,
    legacy_scope: str,
    scope: str = SCOPE,
) -> Bound | None:
    """The record of a proof that verifies for ``content`` (None: check the seal only, for a
    block whose text was omitted), or None when it does not verify."""
    blob = b64decode(proof)
    if blob is None:
        return None
    size = int.from_bytes(blob[-2:], "big") if len(blob) > 2 else 0
    if 0 < size <= len(blob) - 2:
        raw = blob[-2 - size : -2]
        record = Record.load(raw)
        if record is not None and _opens(
            signer, f"{kind}|{raw.decode()}", blob[: -2 - size], content, scope
        ):
            return Bound(record)
    if _opens(signer, kind, blob, content, legacy_scope):
        return Bound(None)
    return None


def _opens(signer: Signer, kind: str, seal: bytes, content: str | None, scope: str) -> bool:
    if content is None:
        return signer.open(scope, kind, seal) is not None
    return signer.verify(scope, kind, seal, content)


class Prefix:
    """A running digest of a request's prefix, block by block."""

    def __init__(self, system: str, tools: Sequence[Mapping[str, Any]]) -> None:
        self.system = _digest(system)
        self.tools = _digest(
            [[t.get("name"), t.get("description") or "", t.get("input_schema")] for t in tools]
        )
        self._start = hashlib.sha256(f"{self.system}/{self.tools}".encode())
        self._hash = self._start.copy()

    def copy(self) -> Prefix:
        other = Prefix.__new__(Prefix)
        other.system, other.tools = self.system, self.tools
        other._start, other._hash = self._start, self._hash.copy()
        return other

    def message(self, role: str) -> None:
        """A new message begins."""
        self._hash.update(b"\x01" + role.encode())

    def block(self, block: Mapping[str, Any]) -> None:
        """A block that is not thinking (a compaction block starts the prefix over; a failed
        one, with null content, is a no-op, and a `fallback` block is not rendered into the
        prompt)."""
        kind = block.get("type")
        if kind == "fallback" or (kind == "compaction" and block.get("content") is None):
            return
        if kind == "compaction":
            self._hash = self._start.copy()
            self._hash.update(b"\x04" + str(block.get("content", "")).encode())
            return
        self._hash.update(b"\x02" + _digest(_value(block)).encode())

    def digest(self) -> str:
        return self._hash.hexdigest()[:32]


def _value(block: Mapping[str, Any]) -> Any:
    """A block by its values: tool results' content as its text and media, no cache markers."""
    kind = block.get("type")
    if kind == "text":
        return ["text", block.get("text")]
    if kind == "tool_use":
        return ["tool_use", block.get("id"), block.get("name"), block.get("input")]
    if kind == "tool_result":
        content = block.get("content")
        items: list[Any] = []
        if isinstance(content, str) and content:
            items.append(["text", content])
        for item in list_or_none(content) or []:
            inner = mapping_or_none(item) or {}
            if inner.get("type") != "text" or inner.get("text"):
                items.append(_value(inner))
        return ["tool_result", block.get("tool_use_id"), items, bool(block.get("is_error"))]
    if kind in ("image", "document"):
        source = mapping_or_none(block.get("source")) or {}
        return [kind, source.get("data") or source.get("url")]
    return {k: v for k, v in block.items() if k != "cache_control"}
