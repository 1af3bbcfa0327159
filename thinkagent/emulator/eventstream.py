"""Encoder for the AWS event-stream framing (``application/vnd.amazon.eventstream``)
that Bedrock ConverseStream uses and ``botocore.eventstream`` parses.

Each message is ``[total length u32][headers length u32][prelude CRC32 u32][headers]
[payload][message CRC32 u32]``, big-endian, and each header is ``[name length u8][name]
[type u8][value length u16][value]``. Only string headers (type 7) are needed here.
botocore ships a parser but no encoder, and the maintained smithy encoder needs
Python 3.12, so this module is the small encoder, tested against botocore's parser.
"""

from __future__ import annotations

import struct
import zlib
from functools import lru_cache
from typing import TYPE_CHECKING

from .encoding import dumps

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["encode_headers", "encode_message", "event_message", "exception_message"]

_PRELUDE = struct.Struct(">II")
_U32 = struct.Struct(">I")
_STRING = 7


def encode_headers(headers: Iterable[tuple[str, str]]) -> bytes:
    """Encode string headers in the event-stream header format."""
    out = bytearray()
    for name, value in headers:
        raw_name = name.encode()
        raw_value = value.encode()
        if len(raw_name) > 255 or len(raw_value) > 65535:
            raise ValueError(f"event-stream header {name!r} is too long")
        out += bytes((len(raw_name),)) + raw_name + bytes((_STRING,))
        out += len(raw_value).to_bytes(2, "big") + raw_value
    return bytes(out)


def encode_message(headers: bytes, payload: bytes) -> bytes:
    """Frame already-encoded ``headers`` and ``payload`` as one event-stream message."""
    total = 16 + len(headers) + len(payload)
    prelude = _PRELUDE.pack(total, len(headers))
    head = prelude + _U32.pack(zlib.crc32(prelude))
    crc = zlib.crc32(payload, zlib.crc32(headers, zlib.crc32(head)))
    return head + headers + payload + _U32.pack(crc)


@lru_cache(maxsize=64)
def _event_headers(event_type: str) -> bytes:
    return encode_headers(
        (
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        )
    )


@lru_cache(maxsize=16)
def _exception_headers(exception_type: str) -> bytes:
    return encode_headers(
        (
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        )
    )


def event_message(event_type: str, payload: object) -> bytes:
    """An ``event`` message: ``event_type`` is the stream member (``messageStart``,
    ``contentBlockDelta``...) and ``payload`` its JSON members."""
    return encode_message(_event_headers(event_type), dumps(payload))


def exception_message(exception_type: str, payload: object) -> bytes:
    """An in-stream ``exception`` message (``throttlingException``...); botocore raises
    it as ``EventStreamError`` with that code."""
    return encode_message(_exception_headers(exception_type), dumps(payload))
