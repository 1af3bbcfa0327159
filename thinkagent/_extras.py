"""The extra to install for each vendor SDK: an adapter imported without its SDK says which.

Each adapter's package imports its SDK inside `needs(extra, what)`; a `ModuleNotFoundError` for
one of the modules that extra brings becomes one that names the `pip install` to run (the SDK's
own import error is left out: it only says the same thing less helpfully). Any other missing
module is raised as it is."""

from __future__ import annotations

import sys
from collections.abc import Generator
from contextlib import contextmanager

__all__ = ["needs"]

_MODULES = {
    "anthropic": frozenset({"anthropic", "httpx2", "httpcore2"}),
    "bedrock": frozenset({"boto3", "botocore"}),
    "gemini": frozenset({"google", "httpx2", "httpcore2"}),
    "openai": frozenset({"openai", "httpx2", "httpcore2"}),
}


@contextmanager
def needs(extra: str, what: str) -> Generator[None]:
    """Turn the import error of a module `extra` brings into one naming the extra to install
    for `what` (an adapter)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        module = (exc.name or "").partition(".")[0]
        if module not in _MODULES[extra]:
            raise
        package = "google-genai" if module == "google" else module
        hint = f"{what} needs the {package!r} package: pip install 'thinkagent[{extra}]'"
        if extra == "gemini" and sys.version_info < (3, 11):
            hint += " (google-genai 3, which it needs, installs on Python 3.11 or newer)"
        raise ModuleNotFoundError(hint, name=exc.name) from None
