"""`BedrockModel`: Claude's thinking on AWS Bedrock through boto3's Converse API.

```python
from thinkagent import Agent
from thinkagent.providers.bedrock import BedrockModel, ClaudeThinking

model = BedrockModel(
    "us.anthropic.claude-sonnet-4-5-20250929-v1:0", thinking=ClaudeThinking.budget(4096)
)
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

`reasoningContent.reasoningText{text, signature}` becomes `ThinkingBlock.signed(text, signature)`
and `reasoningContent.redactedContent` (bytes) `ThinkingBlock.redacted_payload(base64)`, holding
the standard base64 of the exact bytes (replay decodes them back). Blocks keep the order Bedrock
returned them in and go back byte for byte to this scope (`"bedrock"`) only: Bedrock signatures
are not valid on the Anthropic API, nor the reverse.

boto3 is synchronous: `converse` runs in a small pool of Bedrock worker threads (not the
loop's default executor), and each `converse_stream` is read by a dedicated thread that feeds
the event loop; closing or cancelling the stream shuts the connection down and joins that
thread (before the response has begun, the thread is left to end when the call returns). A
cancelled non-streamed call finishes in its worker thread. See `docs/providers/bedrock.md`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import concurrent.futures
import contextlib
import contextvars
import functools
import importlib
import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, NoReturn, cast

from pydantic import JsonValue

from ..errors import ConfigurationError, HistoryError, ProviderError
from ..history import ForeignReasoning
from ..messages import Message, Part, TextPart, ThinkingBlock, ToolCall, ToolResult, Usage
from ..stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta
from ._claude import (
    ClaudeModel,
    ClaudeThinking,
    Effort,
    finish_reason,
    stop_details,
    token_usage,
)
from ._common import (
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    merge_settings,
    retryable_status,
)
from .base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent

__all__ = ["DEFAULT_MAX_TOKENS", "SCOPE", "BedrockModel", "ClaudeThinking"]

# botocore ships no type information: its names are reached through `Any`.
_botocore_exceptions: Any = importlib.import_module("botocore.exceptions")
_ClientError: type[Exception] = _botocore_exceptions.ClientError
_EventStreamError: type[Exception] = _botocore_exceptions.EventStreamError
_BotoCoreError: type[Exception] = _botocore_exceptions.BotoCoreError
_ParamValidationError: type[Exception] = _botocore_exceptions.ParamValidationError
_NoCredentialsError: type[Exception] = _botocore_exceptions.NoCredentialsError
_NoRegionError: type[Exception] = _botocore_exceptions.NoRegionError
_EventStreamBuffer: Any = getattr(
    importlib.import_module("botocore.eventstream"), "EventStreamBuffer", None
)

SCOPE = "bedrock"
"""The provider scope of messages this model produces (their signatures are valid only here)."""

DEFAULT_MAX_TOKENS = 8192
"""`inferenceConfig.maxTokens` when neither the model nor the request settings give one."""

_RETRYABLE_CODES = frozenset(
    {
        "throttlingexception",
        "serviceunavailableexception",
        "internalserverexception",
        "modelstreamerrorexception",
        "modelnotreadyexception",
        "modeltimeoutexception",
    }
)

_EXTRA_HEADERS: ContextVar[Mapping[str, str] | None] = ContextVar(
    "thinkagent_bedrock_extra_headers", default=None
)
_HEADERS_HOOK_ID = "thinkagent-extra-headers"


class BedrockModel(ClaudeModel[Any]):
    """A model behind AWS Bedrock's Converse API, through a boto3 `bedrock-runtime` client.

    - `client`: your boto3 client (its credentials, region, retries and timeouts apply);
      built from the environment with botocore's `standard` retry mode when omitted
      (`region_name` picks the region then).
    - `thinking`: a `ClaudeThinking`, sent as `additionalModelRequestFields.thinking`; `None`
      leaves the model's default.
    - `effort`: `outputConfig.effort`.
    - `max_tokens`: `inferenceConfig.maxTokens` (a request's `max_tokens` setting overrides it).
    - `foreign_reasoning`: `"drop"` (default) or `"text"` for reasoning that cannot go back as
      Bedrock reasoning content (another scope's, or a block without a signature).
    - `settings`: default `ModelSettings`, under each request's own.
    - `additional_model_request_fields`: passed through (e.g. `{"anthropic_beta": [...]}`).
    - `extra_headers`: HTTP headers added to every request.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: Any = None,
        thinking: ClaudeThinking | None = None,
        effort: Effort | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        additional_model_request_fields: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        region_name: str | None = None,
    ) -> None:
        super().__init__(
            model_name,
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._scope = SCOPE
        self._client = client if client is not None else _client_from_environment(region_name)
        self.additional_model_request_fields: dict[str, Any] = dict(
            additional_model_request_fields or {}
        )
        self.extra_headers: dict[str, str] = dict(extra_headers or {})

    # --- requests ---------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.converse` / `client.converse_stream`.

        Raises `ConfigurationError` for settings Claude or Converse would refuse, before
        anything is sent.
        """
        settings, max_tokens = self._request_settings(request)
        if settings.get("parallel_tool_calls") is False:
            raise ConfigurationError(
                "Bedrock Converse cannot disable parallel tool calls: leave parallel_tool_calls "
                "unset on BedrockModel"
            )

        messages = self.build_messages(request.messages)
        params: dict[str, Any] = {"modelId": self._model_name, "messages": messages}
        if request.instructions:
            params["system"] = [{"text": request.instructions}]
        inference: dict[str, Any] = {"maxTokens": max_tokens}
        copy_settings(
            settings,
            inference,
            temperature="temperature",
            top_p="topP",
            stop_sequences="stopSequences",
        )
        params["inferenceConfig"] = inference
        if request.tools:
            tool_config = _tool_config(request, settings.get("tool_choice"), messages)
            if tool_config is not None:
                params["toolConfig"] = tool_config
        elif _uses_tools(messages):
            # Converse refuses toolUse/toolResult blocks without a toolConfig ("The toolConfig
            # field must be defined when using toolUse and toolResult content blocks."):
            # declare the tools the history used, as unavailable.
            params["toolConfig"] = _history_tool_config(request.messages)
        additional = dict(self.additional_model_request_fields)
        if self.thinking is not None:
            additional["thinking"] = self.thinking.to_param()
        if additional:
            params["additionalModelRequestFields"] = additional
        if self.effort is not None:
            params["outputConfig"] = {"effort": self.effort}
        for key, value in settings.get("extra_body", {}).items():
            current = params.get(key)
            if isinstance(current, dict) and isinstance(value, Mapping):
                params[key] = {**current, **cast("Mapping[str, Any]", value)}
            else:
                params[key] = value
        return params

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The Converse `messages` for a history: this scope's reasoning replayed exactly."""
        try:
            return [
                {"role": role, "content": [_block(part) for part in parts]}
                for role, parts in self._replay(messages, SCOPE)
            ]
        except binascii.Error:
            raise _bad_payload(messages) from None

    def _headers(self, settings: ModelSettings) -> Mapping[str, str] | None:
        headers = settings.get("extra_headers")
        if self.extra_headers:
            headers = {**self.extra_headers, **(headers or {})}
        if headers:
            events: Any = self._client.meta.events
            for operation in ("Converse", "ConverseStream"):
                events.register_first(
                    f"before-sign.bedrock-runtime.{operation}",
                    _add_extra_headers,
                    unique_id=f"{_HEADERS_HOOK_ID}-{operation}",
                )
        return headers

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        settings = merge_settings(self.settings, request.settings)
        headers = self._headers(settings)
        call = _in_worker(_call, self._client.converse, params, headers)
        try:
            if "timeout" in settings:
                response = await asyncio.wait_for(call, settings["timeout"])
            else:
                response = await call
        except asyncio.TimeoutError:
            raise _timeout(settings) from None
        except Exception as exc:
            _raise(exc)
        return self.parse_response(response)

    def parse_response(self, response: Mapping[str, Any]) -> ModelResponse:
        """The shared form of a `converse` response: blocks in order, usage, stop reason."""
        parts: list[Part] = []
        for block in response["output"]["message"]["content"]:
            if "text" in block:
                parts.append(TextPart(text=block["text"]))
            elif "reasoningContent" in block:
                part = _reasoning(block["reasoningContent"])
                if part is not None:
                    parts.append(part)
            elif "toolUse" in block:
                use = block["toolUse"]
                parts.append(ToolCall(id=use["toolUseId"], name=use["name"], arguments=_args(use)))
        stop_reason = cast("str | None", response.get("stopReason"))
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=SCOPE,
                model=self._model_name,
                usage=_usage(response.get("usage")),
                finish_reason=finish_reason(stop_reason),
                provider_details=stop_details(stop_reason),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as Bedrock streams them, then the complete `ModelResponse`.

        Raises `StreamInterrupted` (with the unsigned partial message) when the stream ends
        before `messageStop` and `metadata`, and `ProviderError` for an exception event.
        """
        params = self.build_request(request)
        settings = merge_settings(self.settings, request.settings)
        headers = self._headers(settings)
        timeout = settings.get("timeout")
        reader = _StreamReader(
            lambda: _call(self._client.converse_stream, params, headers),
            asyncio.get_running_loop(),
        )
        assembler = MessageAssembler(json_arguments=True)
        add = assembler.add
        stop_reason: str | None = None
        usage: Mapping[str, Any] | None = None
        stopped = False
        reader.start()
        try:
            items = reader.items
            pop = items.popleft
            while True:
                if not items:
                    if timeout is None:
                        await reader.wait()
                    else:
                        try:
                            await asyncio.wait_for(reader.wait(), timeout)
                        except asyncio.TimeoutError:
                            raise _timeout(settings) from None
                event = pop()
                if event is _END:
                    reader.ended = True
                    break
                if isinstance(event, _Failure):
                    failure = event.error
                    if isinstance(failure, _ClientError) or not event.streaming:
                        _raise(failure)
                    if stopped and usage is not None:
                        continue  # the connection broke after the last event: nothing is lost
                    raise interrupted(
                        f"the stream broke before messageStop: {failure}",
                        assembler,
                        scope=SCOPE,
                        model=self._model_name,
                    ) from failure
                if "contentBlockDelta" in event:
                    body = event["contentBlockDelta"]
                    index = body["contentBlockIndex"]
                    delta = body["delta"]
                    if "text" in delta:
                        out: TextDelta | ThinkingDelta | ToolCallDelta = TextDelta(
                            index, delta["text"]
                        )
                    elif "reasoningContent" in delta:
                        reasoning = delta["reasoningContent"]
                        if "text" in reasoning:
                            out = ThinkingDelta(index, reasoning["text"])
                        elif "signature" in reasoning:
                            out = ThinkingDelta(index, signature=reasoning["signature"])
                        elif "redactedContent" in reasoning:
                            out = ThinkingDelta(index, redacted=_b64(reasoning["redactedContent"]))
                        else:
                            continue
                    elif "toolUse" in delta:
                        fragment = delta["toolUse"].get("input")
                        if not fragment:
                            continue
                        out = ToolCallDelta(index, args_fragment=fragment)
                    else:
                        continue
                    add(out)
                    yield out
                elif "contentBlockStart" in event:
                    body = event["contentBlockStart"]
                    use = body["start"].get("toolUse")
                    if use is None:
                        continue
                    out = ToolCallDelta(
                        body["contentBlockIndex"], id=use["toolUseId"], name=use["name"]
                    )
                    add(out)
                    yield out
                elif "messageStop" in event:
                    stop_reason = event["messageStop"].get("stopReason")
                    stopped = True
                elif "metadata" in event:
                    usage = event["metadata"].get("usage")
        finally:
            await reader.close()
        if not stopped or usage is None:
            raise interrupted(
                "the stream ended before messageStop and metadata",
                assembler,
                scope=SCOPE,
                model=self._model_name,
            )
        yield ModelResponse(
            assembler.message(
                scope=SCOPE,
                model=self._model_name,
                usage=_usage(usage),
                finish_reason=finish_reason(stop_reason),
                provider_details=stop_details(stop_reason),
            )
        )


# --- the stream reader thread -----------------------------------------------------------------


class _Failure:
    """An exception raised in the reader thread; `streaming` once the response had begun."""

    __slots__ = ("error", "streaming")

    def __init__(self, error: BaseException, streaming: bool) -> None:
        self.error = error
        self.streaming = streaming


_END: Any = object()
"""Posted last by the reader thread, whatever happened."""

_START_GRACE = 0.2
"""Seconds a closed stream waits for a response already on its way (then it shuts the
connection and joins its thread) before leaving the thread to end on its own."""


class _StreamReader:
    """Runs `converse_stream` and reads its botocore `EventStream` in a dedicated thread,
    handing the events to the event loop.

    The thread appends to a deque and wakes the loop only when the consumer is waiting, so a
    burst of events costs one wake-up, not one per event.
    """

    def __init__(self, call: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.ended = False
        self._call = call
        self._loop = loop
        self.items: deque[Any] = deque()
        self._lock = threading.Lock()
        self._waiter: asyncio.Future[None] | None = None
        self._stopping = False
        self._stream: Any = None
        self._answered = False  # `converse_stream` returned (or raised)
        self._answer_waiter: asyncio.Future[None] | None = None
        self._thread = threading.Thread(
            target=self._run, name="thinkagent-bedrock-stream", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    async def wait(self) -> None:
        """Return once `items` holds something (an event, a `_Failure` or `_END`)."""
        with self._lock:
            if self.items:
                return
            waiter = self._waiter = self._loop.create_future()
        await waiter

    def _post(self, item: Any) -> None:
        self._post_all((item,))

    def _post_all(self, items: Sequence[Any]) -> None:
        with self._lock:
            self.items.extend(items)
            waiter, self._waiter = self._waiter, None
        self._notify(waiter)

    def _notify(self, waiter: asyncio.Future[None] | None) -> None:
        if waiter is not None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is listening
                self._loop.call_soon_threadsafe(_wake, waiter)

    def _mark_answered(self) -> None:
        with self._lock:
            self._answered = True
            waiter, self._answer_waiter = self._answer_waiter, None
        self._notify(waiter)

    def _run(self) -> None:
        stream: Any = None
        tail: list[Any] = []
        try:
            try:
                stream = self._call()["stream"]
                self._stream = stream
            finally:
                self._mark_answered()
            if not self._stopping:
                for batch in _batches(stream):
                    if tail or "metadata" in batch[-1]:
                        # The terminal event: hand it over with the end of the stream, in
                        # one wake-up, once the connection is read to its end.
                        tail += batch
                    else:
                        self._post_all(batch)
                    if self._stopping:
                        break
        except BaseException as exc:
            if not self._stopping:
                tail.append(_Failure(exc, streaming=stream is not None))
        finally:
            if stream is not None:
                with contextlib.suppress(Exception):
                    stream.close()
            tail.append(_END)
            self._post_all(tail)

    async def _answered_within(self, seconds: float) -> bool:
        """Whether `converse_stream` has returned, waiting up to `seconds` for it."""
        with self._lock:
            if self._answered:
                return True
            waiter = self._answer_waiter = self._loop.create_future()
        try:
            await asyncio.wait_for(waiter, seconds)
        except asyncio.TimeoutError:
            with self._lock:
                self._answer_waiter = None
                return self._answered
        return True

    async def close(self) -> None:
        """Stop reading, shut the connection down and join the thread.

        Before the response has begun there is no connection to shut down: the blocked
        `converse_stream` call can last its whole read timeout, retries included. The reader
        is then left to finish on its own (a daemon thread that discards what comes and ends
        when the call returns), after a short grace for a response already on its way.
        """
        if self.ended:
            self._thread.join()
            return
        self._stopping = True
        if not await self._answered_within(_START_GRACE):
            return
        stream = self._stream
        if stream is not None:
            # Shutting the socket down wakes the blocked read at once (closing it does not).
            shutdown = getattr(getattr(stream, "_raw_stream", None), "shutdown", None)
            if shutdown is not None:
                with contextlib.suppress(Exception):
                    shutdown()
        while True:
            if not self.items:
                await self.wait()
            if self.items.popleft() is _END:
                break
        self.ended = True
        self._thread.join()


def _batches(stream: Any) -> Iterator[Sequence[Any]]:
    """The events of a botocore `EventStream`, grouped by the network chunk they came in.

    Handing the loop one batch per chunk instead of one event at a time spares a thread
    switch per event (each wake-up makes the two threads trade the GIL). This reads the
    stream the way `EventStream.__iter__` does; if botocore ever changes those internals,
    the events are read one by one through the public iterator instead.
    """
    raw = getattr(stream, "_raw_stream", None)
    parse = getattr(stream, "_parse_event", None)
    if raw is None or parse is None or _EventStreamBuffer is None:
        for event in stream:
            yield (event,)
        return
    buffer = _EventStreamBuffer()
    for chunk in raw.stream():
        buffer.add_data(chunk)
        batch = [event for event in map(parse, buffer) if event]
        if batch:
            yield batch


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


# --- translation helpers ---------------------------------------------------------------------


def _client_from_environment(region_name: str | None) -> Any:
    boto3: Any = importlib.import_module("boto3")
    config: Any = importlib.import_module("botocore.config")
    try:
        return boto3.client(
            "bedrock-runtime",
            region_name=region_name,
            config=config.Config(retries={"mode": "standard"}),
        )
    except _NoRegionError as exc:
        raise ConfigurationError(
            "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION), or pass region_name=..."
        ) from exc


_WORKERS = 10
"""Threads for non-streamed Converse calls (botocore's default connection pool size)."""

_executor: concurrent.futures.ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def _in_worker(function: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
    """Run `function(*args)` in the Bedrock worker threads, in a copy of the current context.

    boto3 blocks: its calls get threads of their own, apart from the loop's default executor
    (where `asyncio.to_thread` and sync tools run), so neither can starve the other. A call
    whose awaiting task is cancelled still runs to its end in its thread.
    """
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = concurrent.futures.ThreadPoolExecutor(
                    _WORKERS, thread_name_prefix="thinkagent-bedrock"
                )
    context = contextvars.copy_context()
    return asyncio.get_running_loop().run_in_executor(
        _executor, functools.partial(context.run, function, *args)
    )


def _call(method: Callable[..., Any], params: dict[str, Any], headers: Any) -> Any:
    if headers:
        _EXTRA_HEADERS.set(headers)  # this thread's context only
    return method(**params)


def _add_extra_headers(request: Any, **_: Any) -> None:
    headers = _EXTRA_HEADERS.get()
    if headers:
        for name, value in headers.items():
            request.headers[name] = value


def _tool_config(
    request: ModelRequest, choice: str | None, messages: list[dict[str, Any]]
) -> dict[str, Any] | None:
    tools: list[dict[str, Any]] = []
    for tool in request.tools:
        spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": tool.parameters}}
        if tool.description:
            spec["description"] = tool.description
        tools.append({"toolSpec": spec})
    config: dict[str, Any] = {"tools": tools}
    if choice is None or choice == "auto":
        return config
    if choice == "none":
        # Converse has no "none" choice: offer no tools, unless the history uses some (then
        # Converse requires the tool configuration).
        if _uses_tools(messages):
            raise ConfigurationError(
                "Bedrock Converse has no tool_choice 'none', and a history with tool calls needs "
                "the tools offered: use tool_choice 'auto'"
            )
        return None
    config["toolChoice"] = {"any": {}} if choice == "required" else {"tool": {"name": choice}}
    return config


def _uses_tools(messages: list[dict[str, Any]]) -> bool:
    return any(
        "toolUse" in block or "toolResult" in block
        for message in messages
        for block in message["content"]
    )


UNAVAILABLE_TOOL = (
    "Used earlier in this conversation; not available in this request: do not call it."
)
"""The description of a tool the history used that the request does not offer."""


def _history_tool_config(messages: Sequence[Message]) -> dict[str, Any]:
    """A `toolConfig` for a request that offers no tools over a history that used some: each
    tool named in the history, with an empty object schema and a description saying it is
    not available."""
    names: dict[str, None] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCall | ToolResult):
                names.setdefault(part.name, None)
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": name,
                    "description": UNAVAILABLE_TOOL,
                    "inputSchema": {"json": {"type": "object", "properties": {}}},
                }
            }
            for name in names
        ]
    }


def _block(part: Part) -> dict[str, Any]:
    if isinstance(part, ThinkingBlock):
        if part.redacted is not None:
            return {
                "reasoningContent": {
                    "redactedContent": base64.b64decode(part.redacted, validate=True)
                }
            }
        return {
            "reasoningContent": {"reasoningText": {"text": part.text, "signature": part.signature}}
        }
    if isinstance(part, TextPart):
        return {"text": part.text}
    if isinstance(part, ToolCall):
        return {
            "toolUse": {"toolUseId": part.id, "name": part.name, "input": arguments_object(part)}
        }
    assert isinstance(part, ToolResult)
    content = part.content
    if isinstance(content, dict):
        items: list[dict[str, Any]] = [{"json": content}]
    else:
        text = part.content_text()
        # A blank text block is refused where Converse checks it: an empty result goes as
        # no content at all.
        items = [{"text": text}] if text.strip() else []
    return {
        "toolResult": {
            "toolUseId": part.call_id,
            "content": items,
            "status": "error" if part.is_error else "success",
        }
    }


def _bad_payload(messages: Sequence[Message]) -> HistoryError:
    for i, message in enumerate(messages):
        if message.scope != SCOPE:
            continue
        for j, part in enumerate(message.parts):
            if isinstance(part, ThinkingBlock) and part.redacted is not None:
                try:
                    base64.b64decode(part.redacted, validate=True)
                except binascii.Error:
                    return HistoryError(
                        "a Bedrock redacted reasoning payload is not valid base64",
                        message_index=i,
                        part_index=j,
                    )
    return HistoryError("a Bedrock redacted reasoning payload is not valid base64", message_index=0)


def _args(use: Mapping[str, Any]) -> dict[str, JsonValue] | str:
    arguments = use.get("input")
    if isinstance(arguments, dict):
        return cast("dict[str, JsonValue]", arguments)
    if arguments is None:
        return {}
    return json.dumps(arguments)


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):  # already base64 (a parsed JSON body, not botocore's bytes)
        return data
    return base64.b64encode(data).decode("ascii")


def _reasoning(content: Mapping[str, Any]) -> ThinkingBlock | None:
    if "redactedContent" in content:
        return ThinkingBlock.redacted_payload(_b64(content["redactedContent"]))
    text_block = content.get("reasoningText")
    if text_block is None:
        return None
    text = text_block.get("text", "")
    signature = text_block.get("signature")
    if signature is not None:
        return ThinkingBlock.signed(text, signature)
    return ThinkingBlock.plain(text) if text else None


def _usage(usage: Mapping[str, Any] | None) -> Usage:
    if not usage:
        return Usage()
    return token_usage(
        usage.get("inputTokens"),
        usage.get("cacheReadInputTokens"),
        usage.get("cacheWriteInputTokens"),
        usage.get("outputTokens"),
    )


def _timeout(settings: ModelSettings) -> ProviderError:
    return connection_error(
        f"no response within the {settings.get('timeout')} s timeout", scope=SCOPE, timeout=True
    )


def _raise(exc: BaseException) -> NoReturn:
    """Raise the thinkagent error for a boto3/botocore exception (anything else as it is)."""
    error = _translate(exc)
    if error is exc:
        raise exc
    raise error from exc


def _translate(exc: BaseException) -> BaseException:
    """The thinkagent error for a boto3/botocore exception (anything else is returned as is)."""
    if isinstance(exc, _ClientError):
        response: Any = getattr(exc, "response", {}) or {}
        error: Any = response.get("Error") or {}
        code = cast("str | None", error.get("Code"))
        message = cast("str", error.get("Message") or str(exc))
        status: int | None = None
        if not isinstance(exc, _EventStreamError):
            metadata: Any = response.get("ResponseMetadata") or {}
            status = cast("int | None", metadata.get("HTTPStatusCode"))
        retryable = (code is not None and code.lower() in _RETRYABLE_CODES) or retryable_status(
            status
        )
        return ProviderError(
            message, scope=SCOPE, status=status, retryable=retryable, error_type=code
        )
    if isinstance(exc, _ParamValidationError):
        return ConfigurationError(f"Bedrock refused the request parameters: {exc}")
    if isinstance(exc, _NoCredentialsError):
        return ConfigurationError(
            "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
            "AWS_PROFILE), or pass client=boto3.client('bedrock-runtime', ...)"
        )
    if isinstance(exc, _BotoCoreError):  # connection failures and timeouts, after retries
        return ProviderError(str(exc), scope=SCOPE, retryable=True, error_type=type(exc).__name__)
    return exc
