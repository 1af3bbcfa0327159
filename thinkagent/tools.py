"""Tools from plain functions: a JSON schema from type hints and docstring, arguments validated
by pydantic before the function runs."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import inspect
import math
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast, get_args, get_origin

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PydanticUserError,
    ValidationError,
    create_model,
)

from .context import RunContext
from .errors import ToolError
from .messages import Document, Image
from .output import without_titles
from .providers.base import ToolDefinition

__all__ = [
    "TOOL_THREADS",
    "ApprovalPredicate",
    "ApprovalRequired",
    "Tool",
    "ToolFunction",
    "ToolThreads",
    "ToolTimedOut",
]

DEFAULT_MAX_RETRIES = 2
"""How many model turns in a row a tool may fail (its errors going back to the model) before
the run stops."""

ToolFunction = Callable[..., Any]
"""A plain sync or async function; its parameters become the tool's arguments (a first
parameter annotated `RunContext[D]` receives the run's context instead)."""

ApprovalPredicate = Callable[[RunContext[Any], dict[str, Any]], bool | Awaitable[bool]]
"""Whether one call needs approval, from the run's context and the call's arguments (the
model's JSON object, before validation): a plain or async function."""


class ApprovalRequired(Exception):  # a request, not an error: hence no "Error" in the name
    """Raised by a tool to stop its call until a person approves it: the run ends with the
    call in `RunResult.pending_approvals` and `reason` in `RunResult.approval_reasons`.

    Approved (`approvals={call_id: True}`), the tool is called again with
    `ctx.tool_call_approved` true, and must not raise it again.
    """

    def __init__(self, reason: str = "This call needs approval.") -> None:
        super().__init__(reason)
        self.reason = reason


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?)\s*:?\s*$")
_GOOGLE_PARAM = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:\w+\s+)?(\w+)\s*:\s*(.*)$")


class Tool:
    """A function the model may call.

    The name defaults to the function's name and the description to its docstring's summary;
    parameter descriptions come from an `Args:` section (Google style) or `:param x:` lines.
    Invalid arguments, a raised exception or a timeout go back to the model as an error result;
    after `max_retries` model turns in a row in which it failed the run stops with
    `ToolRetriesExceeded` (failed parallel calls of one turn count once).

    A first parameter annotated `RunContext[D]` receives the run's context (deps, usage,
    messages, the call's id, the retry count) and is left out of the schema. With
    `requires_approval=True` a call is not run until it is approved: the run ends with the
    call on `RunResult.pending_approvals`, and `agent.run(None, history=..., approvals=...)`
    runs, edits or denies it. `requires_approval` may also be a function of the run's context
    and the call's arguments (`ApprovalPredicate`) that says per call, and a tool may raise
    `ApprovalRequired(reason)` from inside. A tool may return an `Image` or a `Document`, or a
    list holding some: they go back to the model as the result's `media`.

    A plain `def` tool runs on `TOOL_THREADS`, so a slow one never blocks the event loop; with
    `inline=True` it runs on the event loop itself, sparing the hop to a thread: for fast
    functions (a lookup, a computation) that never block. An inline call cannot be timed out
    (nothing can stop it), so `inline` and `timeout` do not go together.

    `early_start=True` lets a streamed run start the tool as soon as the model has finished
    its call's arguments, while the rest of the model's message still streams (`None`, the
    default, follows the agent's `early_tool_start`, `False` never starts it early). Only for
    tools that are safe to run before the model's turn is complete: the call runs even if the
    model's stream then fails (the run cancels it), and before the turn's other calls are
    known. See `docs/streaming.md`.
    """

    def __init__(
        self,
        function: ToolFunction,
        *,
        name: str | None = None,
        description: str | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        requires_approval: bool | ApprovalPredicate = False,
        inline: bool = False,
        early_start: bool | None = None,
    ) -> None:
        _check_approval_setting(requires_approval)
        if max_retries < 0:
            raise ToolError("max_retries cannot be negative")
        is_async = inspect.iscoroutinefunction(function)
        if inline and (is_async or timeout is not None):
            what = "an async function" if is_async else "a timeout"
            raise ToolError(
                f"inline=True runs a plain `def` function on the event loop, so it cannot take "
                f"{what}: drop one of them"
            )
        self.function = function
        target = _unwrap(function)
        target_name: str | None = getattr(target, "__name__", None)
        if name is None and target_name is None:
            raise ToolError(f"give {function!r} a tool name: Tool(function, name=...)")
        self.name = name or cast("str", target_name)
        summary, param_docs = _parse_docstring(inspect.getdoc(target) or "")
        self.description = description if description is not None else summary
        self.max_retries = max_retries
        self.timeout = timeout
        self.requires_approval = requires_approval
        self.inline = inline
        self.early_start = early_start
        self._arguments_model, self.takes_context = _arguments_model(
            function, self.name, param_docs
        )
        self.returns_media = _returns_media(target)
        self._is_async = is_async
        self._schema: dict[str, Any] | None = None

    @classmethod
    def from_schema(
        cls,
        function: Callable[[dict[str, Any]], Awaitable[Any]],
        *,
        name: str,
        description: str,
        parameters: dict[str, Any],
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        requires_approval: bool | ApprovalPredicate = False,
        early_start: bool | None = None,
    ) -> Tool:
        """A tool defined by its JSON schema rather than by a signature (an MCP server's tools).

        `function` is an async function of the arguments object, which is passed as the model
        sent it: whoever serves the tool validates it against `parameters`.
        """
        _check_approval_setting(requires_approval)
        if max_retries < 0:
            raise ToolError("max_retries cannot be negative")
        tool = cls.__new__(cls)
        tool.function = function
        tool.name = name
        tool.description = description
        tool.max_retries = max_retries
        tool.timeout = timeout
        tool.requires_approval = requires_approval
        tool.inline = False
        tool.early_start = early_start
        tool.takes_context = False
        tool.returns_media = False
        tool._is_async = True
        tool._schema = parameters
        return tool

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    @functools.cached_property
    def definition(self) -> ToolDefinition:
        """The tool as the model sees it."""
        if self._schema is not None:
            schema = self._schema
        else:
            schema = without_titles(self._arguments_model.model_json_schema())
        return ToolDefinition(name=self.name, description=self.description, parameters=schema)

    async def asks_approval(self, ctx: RunContext[Any], arguments: dict[str, Any]) -> bool:
        """Whether this call must wait for approval before it runs (`requires_approval`)."""
        needs = self.requires_approval
        if isinstance(needs, bool):
            return needs
        answer = needs(ctx, arguments)
        if inspect.isawaitable(answer):
            answer = await answer
        return bool(answer)

    def validate_arguments(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The validated keyword arguments; raises pydantic's `ValidationError` when invalid."""
        if self._schema is not None:
            return dict(arguments)
        validated = self._arguments_model.model_validate(dict(arguments))
        return {name: getattr(validated, name) for name in type(validated).model_fields}

    async def call(
        self, arguments: Mapping[str, Any], ctx: RunContext[Any] | None = None
    ) -> JsonValue:
        """Validate `arguments`, run the function (sync ones on `TOOL_THREADS`, or on the event
        loop with `inline=True`), with the timeout;
        the result as JSON data. `ctx` is passed first to a tool that takes the run's context.

        Raises `ToolTimedOut` when the tool runs past `timeout` (a `TimeoutError` the tool raises
        itself propagates as it is)."""
        return _jsonable(await self.invoke(arguments, ctx))

    async def invoke(self, arguments: Mapping[str, Any], ctx: RunContext[Any] | None = None) -> Any:
        """`call`, returning what the function returned as it is (images included)."""
        kwargs = self.validate_arguments(arguments)
        if self._schema is not None:  # `from_schema`: the function takes the object itself
            return await self._limited(cast("Awaitable[Any]", self.function(kwargs)))
        args: tuple[Any, ...] = ()
        if self.takes_context:
            if ctx is None:
                raise ToolError(f"tool {self.name!r} takes the run's context: pass ctx")
            args = (ctx,)
        if self._is_async:
            call: Awaitable[Any] = self.function(*args, **kwargs)
        elif self.inline:
            return self.function(*args, **kwargs)
        else:
            call = TOOL_THREADS.run(self.name, functools.partial(self.function, *args, **kwargs))
        if self.timeout is None:  # no extra frame on the common path
            return await call
        return await self._limited(call)

    async def _limited(self, call: Awaitable[Any]) -> Any:
        """`call` awaited within the tool's timeout."""
        if self.timeout is None:
            return await call
        task = asyncio.ensure_future(call)
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timeout)
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if not done:
            raise ToolTimedOut(self.timeout)
        return task.result()


class ToolThreads:
    """The threads plain `def` tools run on: a bounded pool of their own.

    Apart from the event loop's default executor, so sync tools can never starve what uses that
    executor (DNS lookups of every HTTP client, `asyncio.to_thread`). A thread cannot be
    stopped: a sync call that timed out, or whose run was cancelled, keeps its thread until
    the function returns. When such abandoned calls hold every thread, a new call fails at
    once with `ToolError` saying so (sent back to the model as the call's error result),
    instead of waiting behind them.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a tool thread pool needs at least one thread")
        self.size = size
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._abandoned = 0

    @property
    def abandoned(self) -> int:
        """Calls still running in a thread that nobody waits for any more."""
        return self._abandoned

    async def run(self, tool_name: str, function: Callable[[], Any]) -> Any:
        """`function()` on one of the threads, in a copy of the caller's context."""
        with self._lock:
            if self._abandoned >= self.size:
                raise ToolError(
                    f"tool {tool_name!r} cannot start: all {self.size} threads for sync tools "
                    "are still running calls that timed out or were cancelled"
                )
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    self.size, thread_name_prefix="thinkagent-tool"
                )
            future = self._executor.submit(contextvars.copy_context().run, function)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if not future.cancel():  # already running: it holds its thread until it returns
                with self._lock:
                    self._abandoned += 1
                future.add_done_callback(self._released)
            raise

    def _released(self, _: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._abandoned -= 1


TOOL_THREADS = ToolThreads(16)
"""The pool every plain `def` tool runs on (16 threads, started as needed)."""


class ToolTimedOut(TimeoutError):
    """A tool ran past its `timeout` (and was cancelled)."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"timed out after {timeout:g} seconds")
        self.timeout = timeout


_MEDIA = (Image, Document)


def split_media(value: Any) -> tuple[JsonValue, tuple[Image | Document, ...]]:
    """A tool's return value as a result's `content` and `media`: an `Image` or `Document`, or
    those in a returned list or tuple, become media; the rest is the content (one item as it
    is, several as a list, none as None)."""
    if isinstance(value, _MEDIA):
        return None, (value,)
    if isinstance(value, list | tuple):
        items = cast("list[Any] | tuple[Any, ...]", value)
        media = tuple(item for item in items if isinstance(item, _MEDIA))
        if media:
            rest = [item for item in items if not isinstance(item, _MEDIA)]
            content = rest[0] if len(rest) == 1 else (rest or None)
            return _jsonable(content), media
    return _jsonable(value), ()


def _jsonable(value: Any) -> JsonValue:
    """The tool's result as JSON data, mended so the run can always be persisted: text that
    cannot be encoded (lone surrogates) gets "?" in their place, NaN and infinities become the strings
    "NaN", "Infinity" and "-Infinity"."""
    return _mend(value if isinstance(value, str) else pydantic_core.to_jsonable_python(value))


def _mend(value: Any) -> JsonValue:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value).replace("inf", "Infinity").replace("nan", "NaN")  # JSON has no NaN
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "replace").decode("utf-8")
        return value
    if isinstance(value, list):
        return [_mend(v) for v in cast("list[Any]", value)]
    if isinstance(value, dict):
        items = cast("dict[Any, Any]", value).items()
        return {cast("str", _mend(k)): _mend(v) for k, v in items}
    return cast("JsonValue", value)


def _check_approval_setting(value: object) -> None:
    if not (isinstance(value, bool) or callable(value)):
        raise ToolError(
            "requires_approval must be True, False or a function of (ctx, arguments) that "
            f"says whether a call needs approval; got {value!r}"
        )


def _returns_media(function: ToolFunction) -> bool:
    """Whether the function's return annotation names `Image` or `Document` (anywhere in it: a
    union, a list): its calls may return media, which the agent checks the model can take
    before the first request."""
    annotation: Any = getattr(function, "__annotations__", {}).get("return")
    if isinstance(annotation, str):
        return any(name in annotation for name in ("Image", "Document"))
    pending: list[Any] = [annotation]
    while pending:
        item = pending.pop()
        if item in _MEDIA:
            return True
        pending.extend(get_args(item))
    return False


def describe_failure(tool: Tool, exc: BaseException) -> str:
    """The error text sent back to the model for a failed call."""
    if isinstance(exc, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        return f"Invalid arguments for tool {tool.name!r}: {problems}. Fix them and try again."
    if isinstance(exc, ToolTimedOut):
        return f"Tool {tool.name!r} {exc}."
    return f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"


def _arguments_model(
    function: ToolFunction, tool_name: str, param_docs: dict[str, str]
) -> tuple[type[BaseModel], bool]:
    """The model that validates a tool's arguments, and whether its first parameter takes the
    run's context (then left out of the model)."""
    try:
        signature = inspect.signature(function)
        hints = _parameter_hints(function)
    except (TypeError, ValueError, NameError, SyntaxError) as exc:
        raise ToolError(f"cannot read the signature of tool {tool_name!r}: {exc}") from exc
    fields: dict[str, Any] = {}
    takes_context = False
    for position, param in enumerate(signature.parameters.values()):
        hint = hints.get(param.name, Any)
        origin = get_origin(hint) or hint
        if isinstance(origin, type) and issubclass(origin, RunContext):  # or a subclass of it
            if position != 0 or param.kind is param.KEYWORD_ONLY:
                raise ToolError(
                    f"tool {tool_name!r}: parameter {param.name!r} is a RunContext, which only "
                    "the first parameter may be"
                )
            takes_context = True
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise ToolError(
                f"tool {tool_name!r}: parameter {param.name!r} must be a plain or keyword "
                "parameter (no *args, **kwargs or positional-only parameters)"
            )
        if param.name.startswith("_"):
            raise ToolError(
                f"tool {tool_name!r}: parameter {param.name!r} starts with an underscore, which "
                "a tool's argument schema cannot carry: rename it"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (
            annotation,
            Field(default=default, description=param_docs.get(param.name)),
        )
    try:
        model = create_model(
            f"{tool_name}_arguments",
            __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
            **fields,
        )
    except PydanticUserError as exc:  # a parameter type pydantic cannot validate
        raise ToolError(f"tool {tool_name!r}: {exc.message}") from exc
    return model, takes_context


def _unwrap(function: ToolFunction) -> ToolFunction:
    """The function behind `functools.partial` layers (its name, docstring and hints)."""
    while isinstance(function, functools.partial):
        function = cast("ToolFunction", function.func)
    return function


def _parameter_hints(function: ToolFunction) -> dict[str, Any]:
    """The parameters' type hints, evaluated like `typing.get_type_hints` does, but leaving the
    return annotation alone (it may name a type the tool's module cannot see)."""
    target = _unwrap(function)
    annotations: dict[str, Any] = dict(getattr(target, "__annotations__", {}))
    annotations.pop("return", None)
    if not any(isinstance(a, str) for a in annotations.values()):
        return annotations
    global_ns: dict[str, Any] = getattr(target, "__globals__", {})
    local_ns = dict(inspect.getclosurevars(target).nonlocals) if inspect.isfunction(target) else {}
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
