"""Small encoding helpers shared by every wire API: compact JSON, Server-Sent Events,
text chunking for deltas and deterministic identifiers.

They are on the per-event hot path of streamed responses, so they stay plain and cheap.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["chunk_text", "dumps", "sse_data", "sse_event", "stable_id"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON, as the services send it."""
    return _ENCODER.encode(obj).encode()


def sse_event(event: str, data: Any) -> bytes:
    """One SSE event with its ``event:`` line (Anthropic and OpenAI Responses style)."""
    return b"event: " + event.encode() + b"\ndata: " + dumps(data) + b"\n\n"


def sse_data(data: Any) -> bytes:
    """One data-only SSE event (OpenAI Chat Completions and Gemini style).

    A ``str`` is sent verbatim (for ``[DONE]``); anything else is JSON-encoded.
    """
    payload = data.encode() if isinstance(data, str) else dumps(data)
    return b"data: " + payload + b"\n\n"


def chunk_text(text: str, size: int = 24) -> list[str]:
    """Split ``text`` into deltas of roughly ``size`` characters, cutting after a space
    where possible. Joining the pieces gives back ``text`` exactly; an empty text gives
    no pieces."""
    pieces: list[str] = []
    start = 0
    n = len(text)
    while start < n:
        end = start + size
        if end >= n:
            pieces.append(text[start:])
            break
        cut = text.rfind(" ", start + 1, end + 1)
        end = cut + 1 if cut > start else end
        pieces.append(text[start:end])
        start = end
    return pieces


def stable_id(prefix: str, *parts: str, length: int = 24) -> str:
    """A deterministic, realistic-looking identifier: ``prefix`` plus ``length`` base62
    characters derived from ``parts`` (the same parts always give the same id)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    number = int.from_bytes(digest, "big")
    chars: list[str] = []
    for _ in range(length):
        number, rem = divmod(number, 62)
        chars.append(_BASE62[rem])
    return prefix + "".join(chars)
