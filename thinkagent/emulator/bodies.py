"""Request bodies as each service validates them before it reads the conversation: the JSON
type of each top-level field, the range of its numbers, and (on Gemini and Bedrock) fields the
request type does not have. Each family's ``bodies`` module holds its APIs' checks
(:mod:`.claude.bodies`, :mod:`.gemini.bodies`, :mod:`.openai.bodies`); each wire calls its
API's check first, in one line (``check_anthropic(body)``...), so a client bug is refused as
the service would refuse it, never served.

NaN and infinities never reach these checks: they are not JSON, and the framework refuses a body
holding them as it refuses any body that is not JSON. Where a service publishes no text for a
refusal, the text is the emulator's own, marked ``guess`` beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["INT32_MAX", "Field", "Kind", "camel", "field", "fits", "kind_of", "number_text"]

Kind = Literal["boolean", "integer", "number", "string", "array", "object"]

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Field:
    """What a top-level field takes: one of ``kinds`` (``null`` too when ``nullable``), and
    for numbers ``minimum`` / ``maximum``."""

    kinds: tuple[Kind, ...]
    minimum: float | None = None
    maximum: float | None = None
    nullable: bool = True


def field(*kinds: Kind, minimum: float | None = None, maximum: float | None = None) -> Field:
    """A nullable :class:`Field` of ``kinds``."""
    return Field(kinds, minimum, maximum)


def kind_of(value: Any) -> Kind | Literal["null"]:
    """The JSON type of a decoded value (a bool is not an integer)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def fits(value: Any, kinds: tuple[Kind, ...]) -> bool:
    """Whether ``value`` is one of ``kinds`` (an integer is a number too)."""
    kind = kind_of(value)
    return kind in kinds or (kind == "integer" and "number" in kinds)


def number_text(value: float) -> str:
    """A bound as the services print it (``1``, ``0.5``)."""
    return str(int(value)) if value == int(value) else str(value)


def camel(snake: str) -> str:
    """``tool_config`` as protobuf's JSON also takes it: ``toolConfig``."""
    head, *rest = snake.split("_")
    return head + "".join(word.title() for word in rest)
