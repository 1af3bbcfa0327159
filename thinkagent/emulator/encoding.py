"""The encoding helpers every wire API shares: typed access to decoded JSON, compact JSON,
Server-Sent Events, the pieces a reply is streamed in, base64 and deterministic
identifiers. (The AWS event-stream framing Bedrock streams use is
:mod:`~thinkagent.emulator.eventstream`.)

They are on the per-event hot path of streamed responses, so they stay plain and cheap.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, cast

__all__ = [
    "arguments_json",
    "as_list",
    "as_mapping",
    "b64decode",
    "b64encode",
    "chunk_text",
    "dumps",
    "hex_id",
    "list_or_none",
    "mapping_or_none",
    "request_id",
    "split_json",
    "sse_data",
    "sse_event",
    "stable_id",
    "uuid_id",
]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


# --- decoded JSON ----------------------------------------------------------------------


def mapping_or_none(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a JSON object, or ``None`` if it is not one."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def as_mapping(value: Any) -> Mapping[str, Any]:
    """``value`` as a JSON object (empty if it is not one)."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` as a JSON array (empty if it is not one)."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def list_or_none(value: Any) -> list[Any] | None:
    """``value`` as a JSON array, or ``None`` if it is not one."""
    return cast("list[Any]", value) if isinstance(value, list) else None


# --- JSON and Server-Sent Events ---------------------------------------------------------


def dumps(obj: Any) -> bytes:
    """Compact UTF-8 JSON, as the services send it. A lone surrogate (a scripted reply may hold
    one; UTF-8 cannot) is sent as its JSON escape, ``"\\ud800"``: valid JSON that a client's
    parser reads back into the same string, as a hostile or broken server would send it."""
    text = _ENCODER.encode(obj)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _escape_surrogates(text).encode()


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """Tool-call arguments as the JSON text the APIs send (``{"city": "Paris"}``); a lone
    surrogate as its escape, as a model writing one would."""
    text = json.dumps(dict(arguments), ensure_ascii=False)
    return text if text.isascii() or _encodable(text) else _escape_surrogates(text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _escape_surrogates(json_text: str) -> str:
    """JSON text with each surrogate code point (only in its strings: JSON has them nowhere
    else) replaced by its ``\\uXXXX`` escape."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


def sse_event(event: str, data: Any) -> bytes:
    """One SSE event with its ``event:`` line (Anthropic and OpenAI Responses style)."""
    return b"event: " + event.encode() + b"\ndata: " + dumps(data) + b"\n\n"


def sse_data(data: Any) -> bytes:
    """One data-only SSE event (OpenAI Chat Completions and Gemini style).

    A ``str`` is sent verbatim (for ``[DONE]``); anything else is JSON-encoded.
    """
    payload = data.encode() if isinstance(data, str) else dumps(data)
    return b"data: " + payload + b"\n\n"


# --- streamed pieces ---------------------------------------------------------------------


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


def split_json(text: str, pieces: int = 3) -> list[str]:
    """Split a JSON text into a few fragments, as streamed tool-call arguments carry it."""
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


# --- base64 ------------------------------------------------------------------------------


def b64encode(data: bytes, *, urlsafe: bool = False) -> str:
    """Standard (or URL-safe) base64 with padding."""
    return (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(data).decode("ascii")


def b64decode(text: str, *, urlsafe: bool = False) -> bytes | None:
    """Strict standard (or URL-safe) base64 decode; ``None`` if ``text`` is not canonical
    base64 of that alphabet."""
    try:
        raw = base64.b64decode(
            text.encode("ascii"), altchars=b"-_" if urlsafe else None, validate=True
        )
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    # Reject non-canonical encodings (changed padding bits decode to the same bytes).
    return raw if b64encode(raw, urlsafe=urlsafe) == text else None


# --- identifiers -------------------------------------------------------------------------


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


def request_id(prefix: str, seq: int) -> str:
    """A realistic request id for request number ``seq``."""
    return stable_id(prefix, "request", str(seq), length=24)


def hex_id(prefix: str, *parts: str, length: int = 48) -> str:
    """A deterministic id of lower-case hex digits, as the Responses API prints them
    (``resp_68c42d28...``, ``rs_...``, ``fc_...``, ``msg_...``)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    while len(digest) < length:
        digest += hashlib.sha256(digest.encode()).hexdigest()
    return prefix + digest[:length]


def uuid_id(*parts: str) -> str:
    """A deterministic UUID-formatted id (DeepSeek's completion ids, Azure's
    ``apim-request-id``)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"
