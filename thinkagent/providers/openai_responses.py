"""`OpenAIResponsesModel`: OpenAI reasoning models through the Responses API (`openai` SDK).

```python
from thinkagent import Agent
from thinkagent.providers.openai_responses import OpenAIResponsesModel

model = OpenAIResponsesModel("gpt-5", reasoning_effort="medium")   # OPENAI_API_KEY
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

The output items become one assistant `Message`, in output order: each `reasoning` item a
`ThinkingBlock` (its `rs_` id in `id`, its summary texts joined by a blank line in `text`, its
`encrypted_content` as the `signature`, the summary parts themselves in `provider_details`),
each `function_call` a `ToolCall` (arguments exactly as received), each text part of a
`message` a `TextPart`. Requests default to `store=False` with
`include=["reasoning.encrypted_content"]`, so every reasoning item can go back in full: on later
turns each is replayed byte for byte immediately before the item that followed it, and never
without it. See `docs/providers/openai.md`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Literal, cast
from urllib.parse import urlsplit

import openai
from openai.types.responses import (
    Response,
    ResponseOutputItem,
    ResponseStreamEvent,
    ResponseUsage,
)
from pydantic import JsonValue

from ..errors import ConfigurationError, ProviderError
from ..history import ForeignReasoning, for_scope
from ..messages import (
    FinishReason,
    Message,
    Part,
    ProviderDetails,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ..stream import MessageAssembler, TextDelta, ThinkingDelta, ToolCallDelta
from ._common import (
    ModelInfo,
    arguments_json,
    check_foreign_reasoning,
    copy_settings,
    interrupted,
    merge_settings,
    request_options,
)
from ._openai import (
    STREAM_BREAKS,
    ReasoningEffort,
    check_reasoning_effort,
    client_from_environment,
    client_secrets,
    provider_error,
    redact,
    set_tool_choice,
    stream_error,
    user_items,
)
from .base import ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent

__all__ = [
    "AZURE_SCOPE",
    "SCOPE",
    "OpenAIResponsesModel",
    "ReasoningEffort",
    "ReasoningSummary",
    "input_items",
    "responses_scope",
]

SCOPE = "openai-responses"
"""The scope of messages from OpenAI's Responses API (its encrypted reasoning is valid only
there)."""

AZURE_SCOPE = "azure-responses"
"""The scope of messages from an Azure OpenAI Responses deployment."""

_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")
_DEFAULT_PORTS = {"http": 80, "https": 443}

ReasoningSummary = Literal["auto", "concise", "detailed"]

SUMMARY_SEPARATOR = "\n\n"
"""How the summary parts of one reasoning item are joined into its block's text."""

_SUMMARIES = ("auto", "concise", "detailed")


def responses_scope(client: object) -> str:
    """The scope of a Responses client's messages, from where it sends them.

    `"openai-responses"` for api.openai.com, `"azure-responses"` for an `AsyncAzureOpenAI`
    client or an Azure OpenAI host (`*.openai.azure.com`, `*.cognitiveservices.azure.com`, as
    used with a plain client on Azure's `/openai/v1/` path), and `"openai-responses@<host>"`
    (with the port when it is not the scheme's default) for any other endpoint: a gateway, a
    local server, another vendor's Responses API. Encrypted reasoning from one of these is
    never replayed to another.
    """
    if isinstance(client, openai.AsyncAzureOpenAI):
        return AZURE_SCOPE
    base_url = getattr(client, "base_url", None)
    if base_url is None:
        return SCOPE
    url = urlsplit(str(base_url))
    host = (url.hostname or "").lower()
    if host == "api.openai.com":
        return SCOPE
    if host.endswith(_AZURE_HOSTS):
        return AZURE_SCOPE
    if ":" in host:  # IPv6
        host = f"[{host}]"
    try:
        port = url.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(url.scheme.lower()):
        host = f"{host}:{port}"
    return f"{SCOPE}@{host}"


class OpenAIResponsesModel(ModelInfo[openai.AsyncOpenAI]):
    """An OpenAI reasoning model behind the Responses API, through `openai.AsyncOpenAI` (or
    `openai.AsyncAzureOpenAI`).

    - `client`: your client; built from the environment (`OPENAI_API_KEY`...) when omitted.
    - `reasoning_effort`: `reasoning.effort` when set.
    - `reasoning_summary`: `reasoning.summary` (`"auto"` by default, so thinking blocks carry
      visible text; `None` asks for no summary).
    - `store`: `False` by default: nothing is kept server-side, every reasoning item comes back
      with its `encrypted_content` and is replayed in full.
    - `scope`: the provider scope of this model's messages (its reasoning items are only
      replayed there); by default from the client (`responses_scope`): `"openai-responses"` on
      api.openai.com, `"azure-responses"` on Azure OpenAI, `"openai-responses@<host[:port]>"`
      on any other endpoint.
    - `foreign_reasoning`: what happens to reasoning from another scope: `"drop"` (default)
      or `"text"` (sent as plain assistant text).
    - `settings`: default `ModelSettings`, under each request's own.
    - `extra_body`, `extra_headers`: passed through on every request.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        reasoning_effort: ReasoningEffort | None = None,
        reasoning_summary: ReasoningSummary | None = "auto",
        store: bool = False,
        scope: str | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        check_reasoning_effort(reasoning_effort)
        check_foreign_reasoning(foreign_reasoning)
        if reasoning_summary is not None and reasoning_summary not in _SUMMARIES:
            raise ConfigurationError(
                f"reasoning_summary must be one of {', '.join(map(repr, _SUMMARIES))} or None, "
                f"got {reasoning_summary!r}"
            )
        if client is None:
            client = client_from_environment()
        self._client = client
        self._scope = scope or responses_scope(client)
        self._model_name = model_name
        self.reasoning_effort: ReasoningEffort | None = reasoning_effort
        self.reasoning_summary: ReasoningSummary | None = reasoning_summary
        self.store = store
        self.foreign_reasoning: ForeignReasoning = foreign_reasoning
        self.settings: ModelSettings = settings or {}
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.extra_headers: dict[str, str] = dict(extra_headers or {})
        self._secrets = client_secrets(client)

    # --- requests ---------------------------------------------------------------------------

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.responses.create` (without `stream`).

        Raises `ConfigurationError` for a `tool_choice` naming no tool on offer and for
        `stop_sequences` (the Responses API has none).
        """
        settings = merge_settings(self.settings, request.settings)
        params: dict[str, Any] = {
            "model": self._model_name,
            "input": self.build_input(request.messages),
            "store": self.store,
            "include": ["reasoning.encrypted_content"],
        }
        if request.instructions:
            params["instructions"] = request.instructions
        reasoning: dict[str, Any] = {}
        if self.reasoning_effort is not None:
            reasoning["effort"] = self.reasoning_effort
        if self.reasoning_summary is not None:
            reasoning["summary"] = self.reasoning_summary
        if reasoning:
            params["reasoning"] = reasoning
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                }
                for tool in request.tools
            ]
            set_tool_choice(params, settings, request.tools, _named_tool_choice)
        if settings.get("stop_sequences"):
            raise ConfigurationError(
                "the Responses API has no stop sequences: remove stop_sequences from the "
                "settings, or use OpenAIChatModel"
            )
        copy_settings(
            settings,
            params,
            max_tokens="max_output_tokens",
            temperature="temperature",
            top_p="top_p",
        )
        request_options(params, settings, self.extra_body, self.extra_headers)
        return params

    def build_input(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `input` items for a history (see `input_items`)."""
        return input_items(
            messages,
            self._scope,
            foreign_reasoning=self.foreign_reasoning,
            store=self.store,
        )

    async def request(self, request: ModelRequest) -> ModelResponse:
        params = self.build_request(request)
        try:
            response = cast("Response", await self._client.responses.create(**params))
        except openai.OpenAIError as exc:
            raise provider_error(exc, scope=self._scope, secrets=self._secrets) from exc
        return self.parse_response(response)

    def parse_response(self, response: Response) -> ModelResponse:
        """The shared form of an SDK `Response`: its output items in order, usage, finish
        reason. A failed response raises `ProviderError`."""
        if response.status == "failed":
            raise self._failed(response)
        return ModelResponse(self._message(response, list(response.output)))

    def _message(self, response: Response, items: Sequence[ResponseOutputItem]) -> Message:
        parts = output_parts(items)
        incomplete = response.incomplete_details
        reason = incomplete.reason if incomplete is not None else None
        return Message(
            role="assistant",
            parts=tuple(parts),
            scope=self._scope,
            model=response.model or self._model_name,
            id=response.id,
            usage=_usage(response.usage),
            finish_reason=_finish(response.status, reason, parts),
            provider_details=_details(response.status, reason),
        )

    def _failed(self, response: Response) -> ProviderError:
        error = response.error
        if error is None:
            return self._error("the response failed", None)
        return self._error(error.message, str(error.code))

    def _error(self, message: str, code: str | None) -> ProviderError:
        """The `ProviderError` for a failed response or an `error` event in the stream."""
        return ProviderError(
            redact(message, self._secrets),
            scope=self._scope,
            retryable=code in ("server_error", "rate_limit_exceeded"),
            error_type=code,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Deltas as the service streams them, then the complete `ModelResponse`.

        Summary and reasoning-text deltas are `ThinkingDelta`s (the summary parts of one item
        go into one block, separated by a blank line), function-call argument deltas are
        `ToolCallDelta`s, output text deltas `TextDelta`s; each reasoning item's
        `encrypted_content` arrives as its signature with `response.output_item.done`. The final
        message is built from the completed items, exactly as `request` builds it. Raises
        `ProviderError` for an `error` or `response.failed` event and `StreamInterrupted`
        (with the partial message) when the stream ends before `response.completed`.
        """
        params = self.build_request(request)
        params["stream"] = True
        scope = self._scope
        try:
            events = cast(
                "openai.AsyncStream[ResponseStreamEvent]",
                await self._client.responses.create(**params),
            )
        except openai.OpenAIError as exc:
            raise provider_error(exc, scope=scope, secrets=self._secrets) from exc
        assembler = MessageAssembler(json_arguments=False)
        add = assembler.add
        next_index = 0
        item_index: dict[int, int] = {}  # output_index -> part index (reasoning, function call)
        text_index: dict[tuple[int, int], int] = {}  # (output_index, content_index) -> part
        reasoning_parts: dict[tuple[int, str], int] = {}  # how many parts each item has shown
        done: dict[int, ResponseOutputItem] = {}
        model = self._model_name
        final: Response | None = None

        def text_part(output_index: int, content_index: int, item_id: str) -> int:
            nonlocal next_index
            key = (output_index, content_index)
            index = text_index.get(key)
            if index is None:
                index = text_index[key] = next_index
                next_index += 1
                add(TextDelta(index, provider_details={"item_id": item_id}))
            return index

        def separator(output_index: int, kind: str, number: int) -> ThinkingDelta | None:
            """A blank line between the summary (or reasoning-text) parts of one item."""
            key = (output_index, kind)
            seen = reasoning_parts.get(key, 0)
            if number < seen:
                return None
            reasoning_parts[key] = number + 1
            index = item_index.get(output_index)
            if number == 0 or index is None:
                return None
            return ThinkingDelta(index, SUMMARY_SEPARATOR)

        try:
            async with events:
                async for event in events:
                    if event.type == "response.reasoning_summary_text.delta":
                        index = item_index.get(event.output_index)
                        if index is not None and event.delta:
                            thought = ThinkingDelta(index, event.delta)
                            add(thought)
                            yield thought
                    elif event.type == "response.output_text.delta":
                        index = text_part(event.output_index, event.content_index, event.item_id)
                        if event.delta:
                            text = TextDelta(index, event.delta)
                            add(text)
                            yield text
                    elif event.type == "response.function_call_arguments.delta":
                        index = item_index.get(event.output_index)
                        if index is not None and event.delta:
                            call = ToolCallDelta(index, args_fragment=event.delta)
                            add(call)
                            yield call
                    elif event.type == "response.reasoning_text.delta":
                        index = item_index.get(event.output_index)
                        if index is not None and event.delta:
                            sep = separator(event.output_index, "content", event.content_index)
                            if sep is not None:
                                add(sep)
                                yield sep
                            thought = ThinkingDelta(index, event.delta)
                            add(thought)
                            yield thought
                    elif event.type == "response.reasoning_summary_part.added":
                        sep = separator(event.output_index, "summary", event.summary_index)
                        if sep is not None:
                            add(sep)
                            yield sep
                    elif event.type == "response.output_item.added":
                        item = event.item
                        if item.type == "reasoning":
                            index = item_index[event.output_index] = next_index
                            next_index += 1
                            add(ThinkingDelta(index, id=item.id))
                        elif item.type == "function_call":
                            index = item_index[event.output_index] = next_index
                            next_index += 1
                            details: ProviderDetails | None = (
                                {"item_id": item.id} if item.id is not None else None
                            )
                            call = ToolCallDelta(
                                index,
                                id=item.call_id,
                                name=item.name,
                                args_fragment=item.arguments or "",
                                provider_details=details,
                            )
                            add(call)
                            yield call
                    elif event.type == "response.content_part.added":
                        text_part(event.output_index, event.content_index, event.item_id)
                    elif event.type == "response.refusal.delta":
                        index = text_part(event.output_index, event.content_index, event.item_id)
                        if event.delta:
                            text = TextDelta(index, event.delta)
                            add(text)
                            yield text
                    elif event.type == "response.output_item.done":
                        item = event.item
                        done[event.output_index] = item
                        if item.type == "reasoning":
                            index = item_index.get(event.output_index)
                            if index is not None and item.encrypted_content is not None:
                                proof = ThinkingDelta(index, signature=item.encrypted_content)
                                add(proof)
                                yield proof
                        elif item.type == "message":
                            for n, _ in enumerate(item.content):
                                text_part(event.output_index, n, item.id)
                    elif event.type == "response.completed" or event.type == "response.incomplete":
                        final = event.response
                    elif event.type == "response.created":
                        model = event.response.model or model
                    elif event.type == "response.failed":
                        raise self._failed(event.response)
                    elif event.type == "error":
                        raise self._error(event.message, event.code)
        except (openai.OpenAIError, *STREAM_BREAKS) as exc:  # a break, or an error event
            raise stream_error(
                exc,
                assembler,
                scope=scope,
                model=model,
                terminal="response.completed",
                error=lambda e: provider_error(e, scope=scope, secrets=self._secrets),
            ) from exc
        if final is None:
            raise interrupted(
                "the stream ended before response.completed",
                assembler,
                scope=scope,
                model=model,
            )
        items = [done[i] for i in sorted(done)] if done else list(final.output)
        yield ModelResponse(self._message(final, items))


# --- translation -----------------------------------------------------------------------------


def output_parts(items: Sequence[ResponseOutputItem]) -> list[Part]:
    """The parts for a response's output items, in order (items of other types are skipped)."""
    parts: list[Part] = []
    after: str | None = None  # the reasoning item just before this one
    for item in items:
        follows, after = after, None
        if item.type == "reasoning":
            after = item.id
            details: dict[str, JsonValue] = {
                "summary": [_plain(s) for s in item.summary],
            }
            if item.content is not None:
                details["content"] = [_plain(c) for c in item.content]
            texts = [s.text for s in item.summary] or [c.text for c in item.content or ()]
            parts.append(
                ThinkingBlock(
                    text=SUMMARY_SEPARATOR.join(texts),
                    signature=item.encrypted_content,
                    id=item.id,
                    provider_details=details,
                )
            )
        elif item.type == "function_call":
            parts.append(
                ToolCall(
                    id=item.call_id,
                    name=item.name,
                    arguments=item.arguments,
                    provider_details=_item_details(item.id, follows),
                )
            )
        elif item.type == "message":
            phase = item.phase
            for content in item.content:
                text_details: dict[str, JsonValue] = {"item_id": item.id}
                if follows is not None:
                    text_details["reasoning_id"] = follows
                if phase is not None:
                    text_details["phase"] = phase
                if content.type == "refusal":
                    text_details["refusal"] = True
                    parts.append(TextPart(text=content.refusal, provider_details=text_details))
                    continue
                if content.annotations:
                    text_details["annotations"] = [_plain(a) for a in content.annotations]
                parts.append(TextPart(text=content.text, provider_details=text_details))
    return parts


def _item_details(item_id: str | None, follows: str | None) -> ProviderDetails | None:
    details: ProviderDetails = {}
    if item_id is not None:
        details["item_id"] = item_id
    if follows is not None:
        details["reasoning_id"] = follows
    return details or None


def _plain(value: Any) -> JsonValue:
    """An SDK object as the JSON it came as (unknown keys included)."""
    return cast("JsonValue", value.to_dict(mode="json"))


def input_items(
    messages: Sequence[Message],
    scope: str,
    *,
    foreign_reasoning: ForeignReasoning = "drop",
    store: bool = False,
) -> list[dict[str, Any]]:
    """The Responses `input` items for a history, with this scope's reasoning replayed.

    - User turns: their tool results as `function_call_output` items, then their text as a
      `user` message.
    - This scope's assistant turns, item by item in their original order: reasoning items
      byte for byte (`id`, `summary`, `encrypted_content`, and `content` when it came), function
      calls with their `fc_` id and exact arguments, text as output messages with their `msg_`
      id. A reasoning item goes back only immediately before the item that followed it: when
      that item is not sent, neither is the reasoning; when a reasoning item cannot be sent
      (no `encrypted_content` with `store=False`), the item after it goes back without its id,
      so the service never looks for the missing reasoning.
    - Other scopes' turns: text as assistant messages and function calls without item ids;
      their reasoning is dropped (or sent as text with `foreign_reasoning="text"`).
    """
    out: list[dict[str, Any]] = []
    for message in for_scope(messages, scope, foreign_reasoning=foreign_reasoning):
        if message.role == "user":
            out += user_items(message, _call_output, "input_text")
        elif message.scope == scope:
            out.extend(_native_items(message.parts, store=store))
        else:
            out.extend(_foreign_items(message.parts))
    return out


def _native_items(parts: Sequence[Part], *, store: bool) -> list[dict[str, Any]]:
    # One entry per output item: (reasoning id or None, the item or None when it cannot be
    # sent, the reasoning id it followed); the text parts of one message item form one entry.
    entries: list[tuple[str | None, dict[str, Any] | None, str | None]] = []
    after: str | None = None  # the id of the block just before this part, if it is one
    open_message: str | None = None  # the message item the previous text part belongs to
    for part in parts:
        details = part.provider_details or {}
        item_id = details.get("item_id")
        marker = details.get("reasoning_id")
        anchor = marker if isinstance(marker, str) else after
        if isinstance(part, ThinkingBlock):
            entries.append((part.id or "", _reasoning_item(part, store=store), None))
            after, open_message = part.id, None
            continue
        after = None
        if isinstance(part, ToolCall):
            item: dict[str, Any] = {
                "type": "function_call",
                "call_id": part.id,
                "name": part.name,
                "arguments": arguments_json(part),
            }
            if isinstance(item_id, str):
                item["id"] = item_id
            entries.append((None, item, anchor))
            open_message = None
        elif isinstance(part, TextPart):
            content: dict[str, Any]
            if details.get("refusal") is True:
                content = {"type": "refusal", "refusal": part.text}
            else:
                annotations = details.get("annotations")
                content = {
                    "type": "output_text",
                    "text": part.text,
                    "annotations": annotations if isinstance(annotations, list) else [],
                }
            last = entries[-1][1] if entries else None
            if isinstance(item_id, str) and item_id == open_message and last is not None:
                last["content"].append(content)
                continue
            phase = details.get("phase")
            if not isinstance(item_id, str):  # not from an output item: plain assistant text
                entries.append((None, _easy_message(part.text, phase), None))
                open_message = None
                continue
            message_item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "id": item_id,
                "status": "completed",
                "content": [content],
            }
            if isinstance(phase, str):
                message_item["phase"] = phase
            entries.append((None, message_item, anchor))
            open_message = item_id
    # Backwards: a reasoning item is sent only right before the item that followed it.
    kept: list[tuple[str | None, dict[str, Any], str | None]] = []
    follower_sent = False
    for reasoning, entry, anchor in reversed(entries):
        if reasoning is None:
            assert entry is not None
            kept.append((None, entry, anchor))
            follower_sent = True
        elif entry is not None and follower_sent:
            kept.append((reasoning, entry, None))
        else:
            follower_sent = False
    kept.reverse()
    # Forwards: an item that followed reasoning keeps its id only if that reasoning goes too.
    out: list[dict[str, Any]] = []
    previous: str | None = None
    for reasoning, entry, anchor in kept:
        if anchor is not None and anchor != previous and "id" in entry:
            _unanchor(entry)
        out.append(entry)
        previous = reasoning
    return out


def _reasoning_item(block: ThinkingBlock, *, store: bool) -> dict[str, Any] | None:
    """The input item replaying a reasoning block, or None when it cannot be replayed."""
    if block.id is None or block.redacted is not None:
        return None
    if block.signature is None and not store:
        return None  # with store=False the service cannot find it by id alone
    details = block.provider_details or {}
    summary = details.get("summary")
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": block.id,
        "summary": summary
        if isinstance(summary, list)
        else ([{"type": "summary_text", "text": block.text}] if block.text else []),
    }
    if block.signature is not None:
        item["encrypted_content"] = block.signature
    content = details.get("content")
    if isinstance(content, list):
        item["content"] = content
    return item


def _unanchor(item: dict[str, Any]) -> None:
    """Drop the item id that ties an item to the reasoning before it."""
    if item.get("type") == "message":
        text = "".join(c.get("text") or c.get("refusal") or "" for c in item["content"])
        replacement = _easy_message(text, item.get("phase"))
        item.clear()
        item.update(replacement)
    else:
        item.pop("id", None)


def _easy_message(text: str, phase: object) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if isinstance(phase, str):
        message["phase"] = phase
    return message


def _foreign_items(parts: Sequence[Part]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart) and part.text:
            out.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ToolCall):
            out.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": arguments_json(part),
                }
            )
    return out


def _named_tool_choice(name: str) -> dict[str, Any]:
    return {"type": "function", "name": name}


def _call_output(result: ToolResult) -> dict[str, Any]:
    return {
        "type": "function_call_output",
        "call_id": result.call_id,
        "output": result.content_text(),
    }


def _usage(usage: ResponseUsage | None) -> Usage:
    if usage is None:
        return Usage()
    output = usage.output_tokens_details
    cached = usage.input_tokens_details
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        thinking_tokens=output.reasoning_tokens or 0,
        cache_read_tokens=cached.cached_tokens or 0,
    )


def _finish(status: str | None, reason: str | None, parts: Sequence[Part]) -> FinishReason | None:
    if status == "completed":
        return "tool_call" if any(isinstance(p, ToolCall) for p in parts) else "stop"
    if status == "incomplete":
        if reason == "max_output_tokens":
            return "length"
        if reason == "content_filter":
            return "content_filter"
        return None
    if status == "failed":
        return "error"
    return None


def _details(status: str | None, reason: str | None) -> ProviderDetails | None:
    raw = reason or status
    return {"finish_reason": raw} if raw is not None else None
