"""The signing module: seals bind secret, scope, kind and content, and any change breaks them."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from thinkagent.emulator.encoding import b64decode, b64encode
from thinkagent.emulator.signing import DEFAULT_SECRET, SCOPES, Signer

SIGNER = Signer()


def test_round_trip_and_binding() -> None:
    blob = SIGNER.seal("anthropic", "thinking", "I should call get_weather.")
    assert SIGNER.verify("anthropic", "thinking", blob, "I should call get_weather.")
    assert not SIGNER.verify("anthropic", "thinking", blob, "I should call get_weather!")
    assert not SIGNER.verify("anthropic", "redacted", blob, "I should call get_weather.")
    assert not Signer(b"other").verify("anthropic", "thinking", blob, "I should call get_weather.")
    for scope in SCOPES[1:]:
        assert not SIGNER.verify(scope, "thinking", blob, "I should call get_weather.")
    assert Signer(DEFAULT_SECRET).seal("anthropic", "thinking", "x") == Signer().seal(
        "anthropic", "thinking", "x"
    )


def test_open_returns_the_digest_for_self_verifying_payloads() -> None:
    blob = SIGNER.seal("bedrock", "redacted", "hidden reasoning")
    digest = SIGNER.open("bedrock", "redacted", blob)
    assert digest is not None
    assert len(digest) == 32
    assert SIGNER.open("anthropic", "redacted", blob) is None


def test_realistic_sizes_and_alphabet() -> None:
    short = SIGNER.seal_b64("anthropic", "thinking", "ok")
    long = SIGNER.seal_b64("anthropic", "thinking", "x" * 20_000)
    assert short.startswith("E")
    assert long.startswith("E")
    assert 200 <= len(short) <= len(long) <= 1500
    assert base64.b64decode(short, validate=True)
    assert (
        len(SIGNER.seal("gemini", "thought", b"", size=10)) == 67
    )  # header, digest and MAC at least
    assert len(SIGNER.seal("gemini", "thought", b"abc", size=500)) == 500


def test_non_canonical_base64_is_rejected() -> None:
    assert b64decode("QQ==") == b"A"
    assert b64decode("QR==") is None  # same bytes, unused bits changed
    assert b64decode("not base64!") is None
    assert b64decode("\u00e9") is None
    assert b64encode(b"A") == "QQ=="


@settings(max_examples=60, deadline=None)
@given(
    content=st.text(max_size=300),
    position=st.integers(min_value=0),
    bit=st.integers(min_value=0, max_value=7),
)
def test_any_bit_flip_breaks_a_seal(content: str, position: int, bit: int) -> None:
    blob = bytearray(SIGNER.seal("anthropic", "thinking", content))
    blob[position % len(blob)] ^= 1 << bit
    assert not SIGNER.verify("anthropic", "thinking", bytes(blob), content)


@settings(max_examples=60, deadline=None)
@given(content=st.text(min_size=1, max_size=200), position=st.integers(min_value=0))
def test_any_character_change_in_base64_breaks_a_signature(content: str, position: int) -> None:
    text = SIGNER.seal_b64("anthropic", "thinking", content)
    i = position % len(text)
    changed = text[:i] + ("A" if text[i] != "A" else "B") + text[i + 1 :]
    assert not SIGNER.verify_b64("anthropic", "thinking", changed, content)
    assert not SIGNER.verify_b64("anthropic", "thinking", text[:i], content)


@settings(max_examples=100, deadline=None)
@given(garbage=st.binary(max_size=400))
def test_garbage_never_opens(garbage: bytes) -> None:
    assert SIGNER.open("anthropic", "thinking", garbage) is None
