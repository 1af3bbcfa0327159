"""The Chat Completions and Responses request bodies, checked as OpenAI checks them before
reading the conversation (see :mod:`thinkagent.emulator.bodies`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..bodies import INT32_MAX, Field, field, fits, kind_of, number_text
from ..encoding import as_list, mapping_or_none
from .rules import OpenAIError

__all__ = ["check_chat", "check_responses"]


_CHAT: Mapping[str, Field] = {
    "stream": field("boolean"),
    "max_tokens": field("integer", minimum=1, maximum=INT32_MAX),
    "max_completion_tokens": field("integer", minimum=1, maximum=INT32_MAX),
    "temperature": field("number", minimum=0, maximum=2),
    "top_p": field("number", minimum=0, maximum=1),
    "n": field("integer", minimum=1, maximum=128),
    "parallel_tool_calls": field("boolean"),
    "tools": field("array"),
    "stream_options": field("object"),
    "response_format": field("object"),
}

# `max_output_tokens` from 16: "Invalid 'max_output_tokens': integer below minimum value.
# Expected a value >= 16, but got 10 instead." (https://github.com/vectorize-io/hindsight/issues/58)
_RESPONSES: Mapping[str, Field] = {
    "stream": field("boolean"),
    "max_output_tokens": field("integer", minimum=16, maximum=INT32_MAX),
    "temperature": field("number", minimum=0, maximum=2),
    "top_p": field("number", minimum=0, maximum=1),
    "input": Field(("string", "array"), nullable=False),
    "instructions": field("string"),
    "tools": field("array"),
    "tool_choice": field("string", "object"),
    "reasoning": field("object"),
    "text": field("object"),
    "include": field("array"),
    "parallel_tool_calls": field("boolean"),
    "store": field("boolean"),
    "metadata": field("object"),
    "previous_response_id": field("string"),
}

_OPENAI_KIND = {
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}


def check_chat(body: Mapping[str, Any]) -> None:
    """Refuse what Chat Completions refuses of ``body``'s top-level fields, and tool-call
    arguments nested too deeply to parse, with OpenAI's 400 (``invalid_type``,
    ``integer_below_min_value``...)."""
    _check_openai(body, _CHAT)
    for i, message in enumerate(as_list(body.get("messages"))):
        calls = as_list((mapping_or_none(message) or {}).get("tool_calls"))
        for j, call in enumerate(calls):
            function = mapping_or_none((mapping_or_none(call) or {}).get("function")) or {}
            _check_arguments(function.get("arguments"), f"messages[{i}].tool_calls[{j}].function")


def check_responses(body: Mapping[str, Any]) -> None:
    """Refuse what the Responses API refuses of ``body``'s top-level fields (an ``input`` of
    ``null`` too), and function-call arguments nested too deeply to parse, with OpenAI's 400."""
    _check_openai(body, _RESPONSES)
    for i, item in enumerate(as_list(body.get("input"))):
        entry = mapping_or_none(item) or {}
        if entry.get("type") == "function_call":
            _check_arguments(entry.get("arguments"), f"input[{i}]")


def _check_openai(body: Mapping[str, Any], fields: Mapping[str, Field]) -> None:
    for name, spec in fields.items():
        if name not in body:
            continue
        value = body[name]
        if value is None and spec.nullable:
            continue
        if not fits(value, spec.kinds):
            expected = " or ".join(_OPENAI_KIND[k] for k in spec.kinds)
            if len(spec.kinds) > 1:
                expected = "one of " + expected
            got = kind_of(value)  # guess: "a decimal" for a number that is not an integer
            got = "null" if got == "null" else "a decimal" if got == "number" else _OPENAI_KIND[got]
            raise OpenAIError(
                400,
                f"Invalid type for '{name}': expected {expected}, but got {got} instead.",
                param=name,
                code="invalid_type",
            )
        if not isinstance(value, int | float):
            continue
        what = "integer" if spec.kinds[0] == "integer" else "decimal"
        if spec.minimum is not None and value < spec.minimum:
            raise OpenAIError(
                400,
                f"Invalid '{name}': {what} below minimum value. Expected a value >= "
                f"{number_text(spec.minimum)}, but got {value} instead.",
                param=name,
                code=f"{what}_below_min_value",
            )
        if spec.maximum is not None and value > spec.maximum:
            raise OpenAIError(  # guess: the counterpart of the minimum's text
                400,
                f"Invalid '{name}': {what} above maximum value. Expected a value <= "
                f"{number_text(spec.maximum)}, but got {value} instead.",
                param=name,
                code=f"{what}_above_max_value",
            )


def _check_arguments(arguments: Any, where: str) -> None:
    """Argument text the service's parser cannot take (nested deeper than it reads) is a 400;
    text that is merely not JSON is kept, as the services keep it."""
    if not isinstance(arguments, str) or arguments.count("[") + arguments.count("{") < 500:
        return  # too shallow to be too deep: spares the parse on every request
    try:
        json.loads(arguments)
    except RecursionError:
        raise OpenAIError(  # guess: OpenAI documents no text for it
            400,
            f"Invalid '{where}.arguments': the JSON is nested too deeply to be parsed.",
            param=f"{where}.arguments",
            code="invalid_value",
        ) from None
    except ValueError:
        return
