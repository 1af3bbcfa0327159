"""Structured output: from an `output_type` to the schema a model is asked for, and back to a
validated value.

`OutputSchema` is built once per `Agent` (the JSON schema, the validator, the output tool's
definition), so a run only validates. A type that cannot be written as a JSON schema is refused
when the agent is built.
"""

from __future__ import annotations

import json
import types
from typing import Any, Generic, Literal, Union, cast, get_args, get_origin

from pydantic import (
    PydanticSchemaGenerationError,
    PydanticUserError,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic.errors import PydanticInvalidForJsonSchema
from typing_extensions import TypeVar

from .errors import ConfigurationError
from .providers.base import OutputMode, OutputSpec, ToolDefinition

__all__ = ["DEFAULT_OUTPUT_TOOL", "OutputSchema", "describe_errors"]

OutputT = TypeVar("OutputT", default=str)

DEFAULT_OUTPUT_TOOL = "final_result"
"""The name of the tool a model calls with its final answer (output mode `tool`)."""

_WRAPPED_KEY = "response"

_DEFAULT_DESCRIPTION = "Give the final answer with this tool."


class OutputSchema(Generic[OutputT]):
    """What an agent's `output_type` asks of the model and how the answer is validated.

    `text` is true for `str` alone: the answer is the model's text, no schema is sent.
    `allows_text` is true for a union with `str`: a plain text answer is taken as the `str`
    member, the schema serves the others. A non-object type (a primitive, a list, a union) is
    wrapped in an object, `{"response": ...}`, since tool arguments and most JSON-schema
    response formats must be objects; the wrapper is removed before the value is returned.
    """

    def __init__(self, output_type: Any, *, tool_name: str = DEFAULT_OUTPUT_TOOL) -> None:
        self.output_type = output_type
        self.tool_name = tool_name
        self.text = output_type is str
        self.allows_text = self.text or str in _union_members(output_type)
        self.wrapped = False
        self.json_schema: dict[str, Any] = {}
        self.description = _DEFAULT_DESCRIPTION
        if self.text:
            self._adapter: TypeAdapter[Any] = TypeAdapter(str)
            return
        try:
            self._adapter = TypeAdapter(output_type)
            schema = self._adapter.json_schema()
            if schema.get("type") != "object":
                fields: dict[str, Any] = {_WRAPPED_KEY: (output_type, ...)}
                wrapper = create_model(tool_name, **fields)
                self._adapter = TypeAdapter(wrapper)
                self.wrapped = True
                schema = self._adapter.json_schema()
        except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema) as exc:
            raise ConfigurationError(
                f"output_type {_name(output_type)} cannot be written as a JSON schema: {exc}"
            ) from exc
        except PydanticUserError as exc:
            raise ConfigurationError(f"output_type {_name(output_type)}: {exc.message}") from exc
        except (TypeError, ValueError) as exc:  # not a type at all
            raise ConfigurationError(f"output_type {output_type!r} is not a type: {exc}") from exc
        description = schema.pop("description", None)
        if isinstance(description, str) and description.strip():
            self.description = description.strip()
        self.json_schema = without_titles(schema)

    def spec(self, mode: OutputMode) -> OutputSpec:
        """The `ModelRequest.output` for `mode`."""
        return OutputSpec(
            name=self.tool_name, description=self.description, schema=self.json_schema, mode=mode
        )

    def tool_definition(self) -> ToolDefinition:
        """The output tool (mode `tool`)."""
        return ToolDefinition(
            name=self.tool_name, description=self.description, parameters=self.json_schema
        )

    def instructions(self, mode: OutputMode) -> str:
        """What the model is told, after the agent's own instructions, about how to answer."""
        if mode == "tool":
            text = " (or answer in plain text)" if self.allows_text else ""
            return (
                f"Give your final answer by calling the `{self.tool_name}` tool{text}; "
                "it ends the conversation turn."
            )
        return "Give your final answer as JSON that matches the response schema."

    def validate_object(self, data: object) -> OutputT:
        """The output from the output tool's arguments; pydantic's `ValidationError` when invalid."""
        value = self._adapter.validate_python(data)
        return cast("OutputT", value.response if self.wrapped else value)

    def validate_json(self, text: str) -> OutputT:
        """The output from a JSON text answer; pydantic's `ValidationError` when invalid."""
        value = self._adapter.validate_json(text)
        return cast("OutputT", getattr(value, _WRAPPED_KEY) if self.wrapped else value)

    def partial(self, text: str) -> tuple[bool, OutputT | None]:
        """`(True, value)` when the JSON `text` received so far already validates as far as it
        goes (the last string, number or list may be cut short), else `(False, None)`."""
        if not text:
            return False, None
        try:
            value = self._adapter.validate_json(text, experimental_allow_partial="trailing-strings")
        except (ValidationError, ValueError):
            return False, None
        return True, cast("OutputT", getattr(value, _WRAPPED_KEY) if self.wrapped else value)


def describe_errors(exc: ValidationError, *, wrapped: bool) -> str:
    """pydantic's errors as one line a model can act on (`where: what; ...`)."""
    problems: list[str] = []
    for error in exc.errors(include_url=False):
        loc = [str(x) for x in error["loc"]]
        if wrapped and loc and loc[0] == _WRAPPED_KEY:
            loc = loc[1:]
        problems.append(f"{'.'.join(loc) or 'output'}: {error['msg']}")
    return "; ".join(problems)


def errors_of(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors as plain JSON data (kept on `OutputValidationFailed.errors`)."""
    return cast("list[dict[str, Any]]", json.loads(exc.json(include_url=False)))


def _union_members(tp: Any) -> tuple[Any, ...]:
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        return get_args(tp)
    if origin is Literal:
        return ()
    return (tp,)


def _name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or repr(tp)


def without_titles(schema: Any) -> Any:
    """Drop pydantic's generated `title` keys: they only add tokens to every request."""
    if isinstance(schema, dict):
        return {
            k: without_titles(v)
            for k, v in cast(dict[str, Any], schema).items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [without_titles(v) for v in cast(list[Any], schema)]
    return schema
