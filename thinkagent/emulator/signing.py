"""Server-side proofs for reasoning content, shared by every wire API.

Every opaque proof the emulator hands out (an Anthropic or Bedrock thinking signature,
a redacted payload, a Gemini thought signature, an OpenAI encrypted reasoning item) is a
*seal* made by :class:`Signer`: a binary blob that carries a SHA-256 digest of the content
it covers and an HMAC-SHA256 over ``(scope, kind, digest, size)`` keyed with the
emulator's secret, padded with bytes derived from that MAC to a realistic length.

* The **scope** is the endpoint that issued the proof (see :data:`SCOPES`); a seal from
  one scope never opens in another, so a Bedrock signature is invalid on Anthropic.
* The **kind** says what the proof is for (``"thinking"``, ``"redacted"``,
  ``"thought"``...); a seal of one kind never opens as another.
* The **digest** binds the exact content. :meth:`Signer.verify` checks a seal against
  the content presented with it; :meth:`Signer.open` returns the embedded digest for
  self-verifying payloads (redacted thinking, signatures whose text was omitted).

Sealing is deterministic: the same secret, scope, kind and content always give the same
bytes, which keeps conversations reproducible and signed histories valid across
emulator restarts that use the same secret. Any change to any byte of a seal (or a
different secret) makes it fail.

Layout: ``0x12 varint(len(body)) body`` with ``body = 0x01 digest(32) mac(32) pad``; the
protobuf-like prefix makes base64 renderings start with ``E`` as the real ones do.
"""

from __future__ import annotations

import hashlib
import hmac

from .encoding import b64decode, b64encode

__all__ = ["DEFAULT_SECRET", "SCOPES", "Signer", "expand"]

#: The fixed default secret: proofs stay valid across emulator instances in one test
#: suite unless a test passes its own ``secret=``.
DEFAULT_SECRET = b"thinkagent-emulator/default-secret/v1"

#: The provider scopes the built-in wire APIs sign for. A scope is any string; these
#: are the names in use so that wire modules agree on them.
SCOPES = ("anthropic", "bedrock", "gemini", "vertex", "openai", "azure")

_VERSION = 1
_HEADER = 0x12
_DIGEST = 32
_MAC = 32
_MIN_SIZE = 2 + 1 + _DIGEST + _MAC


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int] | None:
    shift = 0
    value = 0
    while pos < len(data) and shift < 35:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None


def expand(seed: bytes, n: int) -> bytes:
    """``n`` bytes derived from ``seed`` (SHA-256 in counter mode): seal padding, key streams."""
    out = bytearray()
    counter = 0
    while len(out) < n:
        out += hashlib.sha256(seed + counter.to_bytes(4, "big")).digest()
        counter += 1
    return bytes(out[:n])


class Signer:
    """Makes and checks seals with one secret. Thread-safe (it holds no mutable state)."""

    def __init__(self, secret: bytes | str = DEFAULT_SECRET) -> None:
        self._secret = secret.encode() if isinstance(secret, str) else bytes(secret)

    def _mac(self, scope: str, kind: str, digest: bytes, pad: int) -> bytes:
        msg = b"\x00".join((scope.encode(), kind.encode(), digest, str(pad).encode()))
        return hmac.new(self._secret, msg, hashlib.sha256).digest()

    def _build(self, scope: str, kind: str, digest: bytes, pad: int) -> bytes:
        mac = self._mac(scope, kind, digest, pad)
        body = bytes((_VERSION,)) + digest + mac + expand(mac, pad)
        return bytes((_HEADER,)) + _varint(len(body)) + body

    def seal(
        self, scope: str, kind: str, content: bytes | str, *, size: int | None = None
    ) -> bytes:
        """Seal ``content`` for ``scope``/``kind``. ``size`` is the total length in bytes
        (default: grows with the content, 150 to 1,100 bytes, i.e. 200 to ~1,500 base64
        characters like real Claude signatures)."""
        data = _utf8(content) if isinstance(content, str) else content
        digest = hashlib.sha256(data).digest()
        if size is None:
            size = min(150 + len(data) // 2, 1100)
        body_len = max(size - 3, 1 + _DIGEST + _MAC)
        pad = body_len - 1 - _DIGEST - _MAC
        return self._build(scope, kind, digest, pad)

    def open(self, scope: str, kind: str, blob: bytes) -> bytes | None:
        """The content digest inside ``blob`` if it is an intact seal of ``kind`` made by
        this secret for ``scope``; ``None`` otherwise."""
        if len(blob) < _MIN_SIZE or blob[0] != _HEADER:
            return None
        parsed = _read_varint(blob, 1)
        if parsed is None:
            return None
        body_len, pos = parsed
        if pos + body_len != len(blob) or blob[pos] != _VERSION:
            return None
        digest = blob[pos + 1 : pos + 1 + _DIGEST]
        pad = body_len - 1 - _DIGEST - _MAC
        if pad < 0:
            return None
        expected = self._build(scope, kind, digest, pad)
        return digest if hmac.compare_digest(expected, blob) else None

    def verify(self, scope: str, kind: str, blob: bytes, content: bytes | str) -> bool:
        """True if ``blob`` is a seal of exactly ``content`` for ``scope``/``kind``."""
        digest = self.open(scope, kind, blob)
        data = _utf8(content) if isinstance(content, str) else content
        return digest is not None and hmac.compare_digest(digest, hashlib.sha256(data).digest())

    # Text helpers for the common base64 renderings.

    def seal_b64(
        self, scope: str, kind: str, content: bytes | str, *, size: int | None = None
    ) -> str:
        """:meth:`seal` rendered as standard base64 text."""
        return b64encode(self.seal(scope, kind, content, size=size))

    def open_b64(self, scope: str, kind: str, text: str) -> bytes | None:
        """:meth:`open` for a base64 rendering (``None`` if not canonical base64)."""
        blob = b64decode(text)
        return None if blob is None else self.open(scope, kind, blob)

    def verify_b64(self, scope: str, kind: str, text: str, content: bytes | str) -> bool:
        """:meth:`verify` for a base64 rendering."""
        blob = b64decode(text)
        return blob is not None and self.verify(scope, kind, blob, content)


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8, a lone surrogate (a scripted reply may hold one) kept as its
    three bytes so that what is sealed stays what was said."""
    return text.encode("utf-8", "surrogatepass")
