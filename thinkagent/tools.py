"""Tools from plain functions: a JSON schema from type hints and docstring, arguments validated
by pydantic before the function runs."""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, create_model

from .errors import ToolError
from .providers.base import ToolDefinition

__all__ = ["Tool", "ToolFunction"]

DEFAULT_MAX_RETRIES = 2
"""How many consecutive failures of a tool go back to the model before the run stops."""

ToolFunction = Callable[..., Any]
"""A plain sync or async function; its parameters become the tool's arguments."""

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:?\s*$")
_GOOGLE_PARAM = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")


class Tool:
    """A function the model may call.

    The name defaults to the function's name and the description to its docstring's summary;
    parameter descriptions come from an `Args:` section (Google style) or `:param x:` lines.
    Invalid arguments, a raised exception or a timeout go back to the model as an error result;
    after `max_retries` consecutive failures the run stops with `ToolRetriesExceeded`.
    """

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
    ) -> None:
        if max_retries < 0:
            raise ToolError("max_retries cannot be negative")
        self.function = function
        self.name = name or function.__name__
        summary, param_docs = _parse_docstring(inspect.getdoc(function) or "")
        self.description = description if description is not None else summary
        self.max_retries = max_retries
        self.timeout = timeout
        self._arguments_model = _arguments_model(function, self.name, param_docs)
        self._is_async = inspect.iscoroutinefunction(function)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    @functools.cached_property
    def definition(self) -> ToolDefinition:
        """The tool as the model sees it."""
        schema = self._arguments_model.model_json_schema()
        return ToolDefinition(
            name=self.name, description=self.description, parameters=_without_titles(schema)
        )

    def validate_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The validated keyword arguments; raises pydantic's `ValidationError` when invalid."""
        validated = self._arguments_model.model_validate(dict(arguments))
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    async def call(self, arguments: Mapping[str, Any]) -> JsonValue:
        """Validate `arguments`, run the function (sync ones in a worker thread), with the timeout."""
        kwargs = self.validate_arguments(arguments)
        if self._is_async:
            call: Awaitable[Any] = self.function(**kwargs)
        else:
            call = asyncio.to_thread(self.function, **kwargs)
        result = await asyncio.wait_for(call, self.timeout) if self.timeout else await call
        return _jsonable(result)


def _jsonable(value: Any) -> JsonValue:
    if isinstance(value, str):
        return value
    return cast(JsonValue, pydantic_core.to_jsonable_python(value))


def describe_failure(tool: Tool, exc: BaseException) -> str:
    """The error text sent back to the model for a failed call."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        return f"Invalid arguments for tool {tool.name!r}: {problems}. Fix them and try again."
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return f"Tool {tool.name!r} timed out after {tool.timeout:g} seconds."
    return f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"


def _arguments_model(
    function: ToolFunction, tool_name: str, param_docs: dict[str, str]
) -> type[BaseModel]:
    try:
        signature = inspect.signature(function)
        hints = _parameter_hints(function)
    except (TypeError, ValueError, NameError, SyntaxError) as exc:
        raise ToolError(f"cannot read the signature of tool {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolError(
                f"tool {tool_name!r}: parameter {param.name!r} must be a plain or keyword "
                "parameter (no *args, **kwargs or positional-only parameters)"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default=default, description=param_docs.get(param.name)),
        )
    return create_model(
        f"{tool_name}_arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
        **fields,
    )


def _parameter_hints(function: ToolFunction) -> dict[str, Any]:
    """The parameters' type hints, evaluated like `typing.get_type_hints` does, but leaving the
    return annotation alone (it may name a type the tool's module cannot see)."""
    annotations: dict[str, Any] = dict(getattr(function, "__annotations__", {}))
    annotations.pop("return", None)
    if not any(isinstance(a, str) for a in annotations.values()):
        return annotations
    global_ns: dict[str, Any] = getattr(function, "__globals__", {})
    local_ns = (
        dict(inspect.getclosurevars(function).nonlocals) if inspect.isfunction(function) else {}
    )
    return {
        name: eval(hint, global_ns, local_ns) if isinstance(hint, str) else hint
        for name, hint in annotations.items()
    }


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and per-parameter descriptions."""
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current = ""
    for line in doc.splitlines():
        if match := _SPHINX_PARAM.match(line):
            section, current = "sphinx", match.group(1)
            params[current] = match.group(2).strip()
        elif match := _SECTION.match(line):
            section, current = match.group(1).lower(), ""
        elif section is None:
            summary.append(line)
        elif section in ("args", "arguments", "parameters") and (
            match := _GOOGLE_PARAM.match(line)
        ):
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
        elif section in ("args", "arguments", "parameters", "sphinx") and current and line.strip():
            params[current] = f"{params[current]} {line.strip()}"
    return "\n".join(summary).strip(), params


def _without_titles(schema: Any) -> Any:
    """Drop pydantic's generated `title` keys: they only add tokens to every request."""
    if isinstance(schema, dict):
        return {
            k: _without_titles(v)
            for k, v in cast(dict[str, Any], schema).items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_without_titles(v) for v in cast(list[Any], schema)]
    return schema
