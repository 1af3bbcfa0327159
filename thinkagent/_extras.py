"""The extra to install for each optional dependency: code imported without it says which.

Every module that needs an extra imports it inside `needs(extra, what)`; a `ModuleNotFoundError`
for one of the modules that extra brings becomes one worded the same way everywhere,
`<what> needs the '<extra>' extra (<package>): pip install 'thinkagent[<extra>]'`, without the
import's own chain (it only says the same thing less helpfully). Any other missing module is
raised as it is. The emulator, which imports nothing from the rest of thinkagent, words its own
the same way (`thinkagent/emulator/_extras.py`)."""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["EXTRAS", "missing_extra", "needs"]

_HTTP = frozenset({"httpx", "httpcore", "httpx2", "httpcore2"})

EXTRAS: dict[str, tuple[str, frozenset[str]]] = {
    # extra: (the package it is named by, the top-level modules it brings)
    "anthropic": ("anthropic", _HTTP | {"anthropic"}),
    "bedrock": ("boto3", frozenset({"boto3", "botocore", "s3transfer", "jmespath"})),
    "gemini": ("google-genai", _HTTP | {"google"}),
    "openai": ("openai", _HTTP | {"openai"}),
    "emulator": ("starlette, uvicorn", frozenset({"starlette", "uvicorn", "httptools", "anyio"})),
    "mcp": ("mcp", frozenset({"mcp", "mcp_types"})),
    "dbos": ("dbos", frozenset({"dbos"})),
    "otel": ("opentelemetry-api", frozenset({"opentelemetry"})),
    "sse": ("sse-starlette", frozenset({"sse_starlette", "starlette", "anyio"})),
}
"""What each extra of `pyproject.toml` brings."""


def missing_extra(extra: str, what: str) -> str:
    """The one message for `what` (a class, a module, a method) needing `extra`."""
    package = EXTRAS[extra][0]
    hint = f"{what} needs the {extra!r} extra ({package}): pip install 'thinkagent[{extra}]'"
    if extra == "gemini" and sys.version_info < (3, 11):
        hint += " (google-genai 3, which it needs, installs on Python 3.11 or newer)"
    return hint


@contextmanager
def needs(extra: str, what: str) -> Generator[None]:
    """Turn the import error of a module `extra` brings into the one naming the extra to install
    for `what`."""
    try:
        yield
    except ModuleNotFoundError as exc:
        module = (exc.name or "").partition(".")[0]
        if module not in EXTRAS[extra][1]:
            raise
        raise ModuleNotFoundError(missing_extra(extra, what), name=exc.name) from None
