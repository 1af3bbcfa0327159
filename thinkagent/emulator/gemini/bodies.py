"""The Gemini ``generateContent`` request body, checked as Google checks it before reading the
conversation (see :mod:`thinkagent.emulator.bodies`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..bodies import camel
from ..framework import WireError

__all__ = ["check_gemini"]


# `GenerateContentRequest` (https://ai.google.dev/api/generate-content#request-body, and what
# google-genai sends: Vertex's `labels`, `modelArmorConfig`...); protobuf's JSON takes each
# name as lowerCamelCase or as in the proto (snake_case).
_GEMINI_FIELDS = frozenset(
    {
        "model",
        "contents",
        "tools",
        "toolConfig",
        "safetySettings",
        "systemInstruction",
        "generationConfig",
        "cachedContent",
        "labels",
        "serviceTier",
        "store",
        "modelArmorConfig",
        "outputConfig",
        "continuationToken",
    }
)


def check_gemini(body: Mapping[str, Any]) -> None:
    """Refuse a top-level field ``GenerateContentRequest`` does not have, as Google's JSON
    parser does: 400 ``INVALID_ARGUMENT``, ``Invalid JSON payload received. Unknown name
    "foo": Cannot find field.``"""
    for key in body:
        if key not in _GEMINI_FIELDS and camel(key) not in _GEMINI_FIELDS:
            raise WireError(
                400, f'Invalid JSON payload received. Unknown name "{key}": Cannot find field.'
            )
