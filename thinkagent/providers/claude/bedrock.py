"""`BedrockModel`: Claude's thinking on AWS Bedrock through boto3's Converse API.

```python
from thinkagent import Agent
from thinkagent.providers.claude import BedrockModel, ClaudeThinking

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

boto3 is synchronous: `converse` runs in a Bedrock worker thread and each `converse_stream` is
read by a thread of its own (`_bridge`); closing or cancelling the stream shuts the connection
down and joins that thread. See `docs/providers/bedrock.md`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import importlib
import json
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any, cast

from pydantic import JsonValue

from ...errors import ConfigurationError, HistoryError, ProviderError
from ...history import ForeignReasoning
from ...messages import (
    FinishReason,
    Message,
    Part,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import ModelDelta, StreamBuilder
from .._common import (
    UNREADABLE,
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    merge_settings,
    retryable_status,
    unreadable,
)
from ..base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent
from ._bridge import ReadFailure, StreamReader, in_worker
from ._rules import (
    ClaudeModel,
    ClaudeThinking,
    Effort,
    finish_reason,
    raise_mapped,
    stop_details,
    token_usage,
)

__all__ = ["DEFAULT_MAX_TOKENS", "SCOPE", "UNAVAILABLE_TOOL", "BedrockModel"]

# botocore ships no type information: its names are reached through `Any`.
_botocore_exceptions: Any = importlib.import_module("botocore.exceptions")
_ClientError: type[Exception] = _botocore_exceptions.ClientError
_EventStreamError: type[Exception] = _botocore_exceptions.EventStreamError
_BotoCoreError: type[Exception] = _botocore_exceptions.BotoCoreError
_ParamValidationError: type[Exception] = _botocore_exceptions.ParamValidationError
_NoCredentialsError: type[Exception] = _botocore_exceptions.NoCredentialsError
_NoRegionError: type[Exception] = _botocore_exceptions.NoRegionError

SCOPE = "bedrock"
"""The provider scope of messages this model produces (their signatures are valid only here)."""

DEFAULT_MAX_TOKENS = 8192
"""`inferenceConfig.maxTokens` when neither the model nor the request settings give one."""

UNAVAILABLE_TOOL = (
    "Used earlier in this conversation; not available in this request: do not call it."
)
"""The description of a tool the history used that the request does not offer."""

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

    Every option is read back through a read-only property of the same name.
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
            client=client,
            default_client=functools.partial(_client_from_environment, region_name),
            scope=SCOPE,
            thinking=thinking,
            effort=effort,
            max_tokens=max_tokens,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._additional_fields = MappingProxyType(dict(additional_model_request_fields or {}))
        self._extra_headers = MappingProxyType(dict(extra_headers or {}))

    @property
    def additional_model_request_fields(self) -> Mapping[str, Any]:
        """Fields passed through in `additionalModelRequestFields` on every request."""
        return self._additional_fields

    @property
    def extra_headers(self) -> Mapping[str, str]:
        """HTTP headers added to every request."""
        return self._extra_headers

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
        params: dict[str, Any] = {"modelId": self.model_name, "messages": messages}
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
        additional = dict(self._additional_fields)
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
                for role, parts in self._replay(messages)
            ]
        except binascii.Error:
            raise _bad_payload(messages) from None

    async def request(self, request: ModelRequest) -> ModelResponse:
        call, settings = _prepare(self, self.client.converse, request)
        answer = in_worker(self.client, call)
        try:
            if "timeout" in settings:
                response = await asyncio.wait_for(answer, settings["timeout"])
            else:
                response = await answer
        except asyncio.TimeoutError:
            raise _timeout(settings) from None
        except Exception as exc:
            raise_mapped(self.map_error(exc), exc)
        try:  # botocore hands back what it could parse of a body that is not JSON
            return self.parse_response(response)
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc

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
                scope=self.scope,
                model=self.model_name,
                usage=_usage(response.get("usage")),
                finish_reason=self.map_finish_reason(stop_reason),
                provider_details=stop_details(stop_reason),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as Bedrock streams them, then the complete `ModelResponse`. Raises
        `StreamInterrupted` (with the unsigned partial message) when the stream ends before
        `messageStop` and `metadata`, and `ProviderError` for an exception event."""
        call, settings = _prepare(self, self.client.converse_stream, request)
        parts = StreamBuilder(json_arguments=True)
        stop: Mapping[str, Any] | None = None
        usage: Mapping[str, Any] | None = None
        broken: BaseException | None = None
        try:
            async with StreamReader(self.client, call, settings.get("timeout")) as reader:
                async for batch in reader:
                    for event in batch:
                        if "contentBlockDelta" in event:
                            if (out := _fold_delta(parts, event["contentBlockDelta"])) is not None:
                                yield out
                        elif "contentBlockStart" in event:
                            if (out := _fold_start(parts, event["contentBlockStart"])) is not None:
                                yield out
                        elif "messageStop" in event:
                            stop = event["messageStop"]
                        elif "metadata" in event:
                            usage = event["metadata"].get("usage")
                        else:  # messageStart (the role), contentBlockStop: no part to fold
                            pass
        except asyncio.TimeoutError:
            raise _timeout(settings) from None
        except ReadFailure as failure:
            if not failure.streaming or isinstance(failure.error, _ClientError):
                raise_mapped(self.map_error(failure.error), failure.error)
            broken = failure.error  # a dropped connection, a corrupt frame
        if stop is None or usage is None:
            reason = (
                "the stream ended before messageStop and metadata"
                if broken is None
                else f"the stream broke before messageStop: {broken}"
            )
            raise interrupted(reason, parts, scope=self.scope, model=self.model_name) from broken
        stop_reason = stop.get("stopReason")
        yield ModelResponse(
            parts.message(
                scope=self.scope,
                model=self.model_name,
                usage=_usage(usage),
                finish_reason=self.map_finish_reason(stop_reason),
                provider_details=stop_details(stop_reason),
            )
        )

    def map_error(self, exc: BaseException) -> BaseException:
        """The thinkagent error for a boto3/botocore exception: `ProviderError` for the
        service's refusals (the code, status and message it sent) and for connection failures,
        `ConfigurationError` for invalid parameters and missing credentials; anything else comes
        back as it is."""
        if isinstance(exc, _ClientError):
            response: Any = getattr(exc, "response", {}) or {}
            error: Any = response.get("Error") or {}
            code = cast("str | None", error.get("Code"))
            message = cast("str", error.get("Message") or str(exc))
            status: int | None = None
            if not isinstance(exc, _EventStreamError):  # an exception event has no status
                metadata: Any = response.get("ResponseMetadata") or {}
                status = cast("int | None", metadata.get("HTTPStatusCode"))
            retryable = (code is not None and code.lower() in _RETRYABLE_CODES) or retryable_status(
                status
            )
            return ProviderError(
                message, scope=self.scope, status=status, retryable=retryable, error_type=code
            )
        if isinstance(exc, _ParamValidationError):
            return ConfigurationError(f"Bedrock refused the request parameters: {exc}")
        if isinstance(exc, _NoCredentialsError):
            return ConfigurationError(
                "no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
                "AWS_PROFILE), or pass client=boto3.client('bedrock-runtime', ...)"
            )
        if isinstance(exc, _BotoCoreError):  # connection failures and timeouts, after retries
            return ProviderError(
                str(exc), scope=self.scope, retryable=True, error_type=type(exc).__name__
            )
        return exc

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """Converse's `stopReason`, normalised (None for values it does not know)."""
        return finish_reason(raw)


def _client_from_environment(region_name: str | None) -> Any:
    """A `bedrock-runtime` client from the environment. Its retries are the ones the
    environment or the AWS profile chooses (`AWS_RETRY_MODE`, `retry_mode`: `adaptive` adds
    client-side rate limiting after throttling), else botocore's `standard` mode."""
    boto3: Any = importlib.import_module("boto3")
    config: Any = importlib.import_module("botocore.config")
    core: Any = importlib.import_module("botocore.session").get_session()
    chosen = os.environ.get("AWS_RETRY_MODE") or core.get_scoped_config().get("retry_mode")
    try:
        return boto3.session.Session(botocore_session=core, region_name=region_name).client(
            "bedrock-runtime",
            config=None if chosen else config.Config(retries={"mode": "standard"}),
        )
    except _NoRegionError as exc:
        raise ConfigurationError(
            "no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION), or pass region_name=..."
        ) from exc


def _prepare(
    model: BedrockModel, method: Callable[..., Any], request: ModelRequest
) -> tuple[Callable[[], Any], ModelSettings]:
    """The blocking Converse call for `request` (`method` with its parameters and headers), and
    the request's settings."""
    params = model.build_request(request)
    settings = merge_settings(model.settings, request.settings)
    headers = _extra_headers(model.client, model.extra_headers, settings)
    return functools.partial(_call, method, params, headers), settings


def _call(method: Callable[..., Any], params: dict[str, Any], headers: Any) -> Any:
    if headers:
        _EXTRA_HEADERS.set(headers)  # this thread's context only
    return method(**params)


def _extra_headers(
    client: Any, defaults: Mapping[str, str], settings: ModelSettings
) -> Mapping[str, str] | None:
    """The headers to add to a request (the model's, under the request's), with the hook that
    adds them registered on the client (once: the hook has a unique id)."""
    headers = settings.get("extra_headers")
    if defaults:
        headers = {**defaults, **(headers or {})}
    if headers:
        events: Any = client.meta.events
        for operation in ("Converse", "ConverseStream"):
            events.register_first(
                f"before-sign.bedrock-runtime.{operation}",
                _add_extra_headers,
                unique_id=f"{_HEADERS_HOOK_ID}-{operation}",
            )
    return headers


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


def _fold_delta(parts: StreamBuilder, body: Mapping[str, Any]) -> ModelDelta | None:
    """Fold a `contentBlockDelta` into its block: the delta to yield, or None."""
    index = body["contentBlockIndex"]
    delta = body["delta"]
    if "text" in delta:
        return parts.text(index, delta["text"])
    if "reasoningContent" in delta:
        reasoning = delta["reasoningContent"]
        if "text" in reasoning:
            return parts.thinking(index, reasoning["text"])
        if "signature" in reasoning:
            return parts.thinking(index, signature=reasoning["signature"])
        if "redactedContent" in reasoning:
            return parts.thinking(index, redacted=_b64(reasoning["redactedContent"]))
        return None  # a reasoning field this adapter does not know
    if "toolUse" in delta:
        return parts.tool_call(index, arguments=delta["toolUse"].get("input") or "")
    return None  # content the shared schema has no part for (citations...)


def _fold_start(parts: StreamBuilder, body: Mapping[str, Any]) -> ModelDelta | None:
    """Fold a `contentBlockStart`: a tool call's carries its id and name; other blocks open
    with their first delta."""
    use = body["start"].get("toolUse")
    if use is None:
        return None
    return parts.tool_call(body["contentBlockIndex"], id=use["toolUseId"], name=use["name"])


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
