"""The extras the emulator's server and its client factories need, named in thinkagent's one
wording for a missing extra (`thinkagent/_extras.py`; the emulator imports nothing from the rest
of thinkagent, so it words its own)."""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["missing_extra", "needs"]

_EXTRAS: dict[str, tuple[str, frozenset[str]]] = {
    "anthropic": (
        "anthropic",
        frozenset({"anthropic", "httpx", "httpcore", "httpx2", "httpcore2"}),
    ),
    "bedrock": ("boto3", frozenset({"boto3", "botocore", "s3transfer", "jmespath"})),
    "gemini": ("google-genai", frozenset({"google", "httpx", "httpcore", "httpx2", "httpcore2"})),
    "openai": ("openai", frozenset({"openai", "httpx", "httpcore", "httpx2", "httpcore2"})),
    "emulator": ("starlette, uvicorn", frozenset({"starlette", "uvicorn", "httptools", "anyio"})),
}


def missing_extra(extra: str, what: str) -> str:
    package = _EXTRAS[extra][0]
    hint = f"{what} needs the {extra!r} extra ({package}): pip install 'thinkagent[{extra}]'"
    if extra == "gemini" and sys.version_info < (3, 11):
        hint += " (google-genai 3, which it needs, installs on Python 3.11 or newer)"
    return hint


@contextmanager
def needs(extra: str, what: str) -> Generator[None]:
    """Re-raise the import error of a module `extra` brings as the one naming the extra."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in _EXTRAS[extra][1]:
            raise
        raise ModuleNotFoundError(missing_extra(extra, what), name=exc.name) from None
