"""`OpenAIChatModel`: reasoning models behind Chat Completions, through the official `openai` SDK.

```python
from thinkagent import Agent
from thinkagent.providers.openai import OpenAIChatModel

model = OpenAIChatModel("deepseek-reasoner", dialect="deepseek")   # DEEPSEEK_API_KEY
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

One class serves OpenAI, Azure OpenAI and the OpenAI-compatible reasoning endpoints. What
differs between them is the *dialect* (`ChatDialect`, in `dialects`): where the reasoning comes
back (a `reasoning_content` or `reasoning` field, OpenRouter's `reasoning_details` items,
Mistral's `thinking` content chunks, or inline `<think>...</think>`), when it must be sent back
and in which shape, and which switches turn it on. Reasoning becomes `ThinkingBlock`s in the
position it came in, tagged with the dialect's scope (`"deepseek"`...); a proof that came with
it (an OpenRouter signature or encrypted payload) is kept byte for byte and goes back only to
that scope. OpenAI's own endpoint returns no reasoning text (only its token count), and gets
none back. See `docs/providers/openai.md`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import openai
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.chat.chat_completion_chunk import ChoiceDelta, ChoiceDeltaToolCall
from openai.types.completion_usage import CompletionUsage
from pydantic import JsonValue

from ...errors import ConfigurationError, ProviderError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    Document,
    FinishReason,
    Image,
    Message,
    Part,
    ProviderDetails,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import StreamBuilder, TextDelta, ThinkingDelta, ToolCallDelta, WarningEvent
from .._common import (
    COMPACT,
    UNREADABLE,
    JsonPieces,
    arguments_json,
    check_prompt_cache,
    copy_settings,
    detached,
    json_array,
    merge_settings,
    received,
    refuse_builtin_tools,
    request_options,
    unreadable,
)
from .._system_notes import (
    check_note_tools,
    current_prompt,
    noted_warning,
    notes_as_text,
    shown_notes,
)
from ..base import ModelProfile, ModelRequest, ModelResponse, ModelSettings, ModelStreamEvent
from ._reasoning import (
    DETAIL_TEXT,
    DETAILS_KEY,
    ENCRYPTED,
    UNKNOWN_CONTENT,
    UNKNOWN_DETAILS,
    content_chunk,
    content_parts,
    detail_blocks,
    detail_fields,
    detail_items,
    plain,
    thinking_chunk,
    thinking_text,
    unknown_warning,
)
from ._tags import Segment, ThinkTagSplitter, join_think_tags, split_think_tags
from ._thinking import chat_thinking, check_thinking_config, reasons
from ._wire import (
    SDK_ERRORS,
    STREAM_BREAKS,
    OpenAIAdapter,
    OpenAIThinking,
    add_hint,
    client_from_environment,
    data_url,
    file_name,
    send_json,
    set_tool_choice,
    strict_schema,
    user_items,
)
from .dialects import ChatDialect, ReplayRule, resolve_dialect

__all__ = ["OpenAIChatModel"]

_REASONING_MODEL = re.compile(r"^(?:o\d|gpt-5|codex-)")

SKIP_SIGNATURE = "skip_thought_signature_validator"
"""The dummy thought signature Gemini documents for function calls it did not sign
(ai.google.dev/gemini-api/docs/thought-signatures)."""

_FINISH: Mapping[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "length": "length",
    "content_filter": "content_filter",
}

# Stream part keys besides a tool call's own index (an int): the reasoning field, a
# `reasoning_details` item (with its index and type), the content or one of its `<think>`
# segments, a run of content chunks.
_REASONING = "reasoning"
_CONTENT = "content"
_SEGMENT = "segment"
_DETAIL = "detail"
_CHUNK = "chunk"


class OpenAIChatModel(OpenAIAdapter):
    """A model behind Chat Completions (OpenAI, Azure OpenAI, or a compatible endpoint),
    through `openai.AsyncOpenAI` / `openai.AsyncAzureOpenAI`.

    - `client`: your client (its retries, timeouts and base URL apply); built from the
      environment when omitted (see `ChatDialect.base_url`).
    - `dialect`: a name from `DIALECTS` (`"deepseek"`, `"moonshot"`/`"kimi"`, `"zai"`,
      `"openrouter"`, `"mistral"`, `"xai"`, `"vllm"`, `"groq"`, `"cerebras"`, `"together"`,
      `"ollama"`, `"qwen"`, `"minimax"`, `"think_tags"`, `"openai"`, `"azure"`,
      `"compatible"`) or a `ChatDialect`. Omitted: `azure` for an Azure client, else from the
      base URL's host, else `compatible` (reasoning captured, never sent back).
    - `thinking`: an `OpenAIThinking`: its `effort` is sent as `reasoning_effort`, its other
      fields through the dialect's own switches (a field the dialect has none for is
      refused). Chat Completions has no reasoning summary, so a `summary` is refused.
      `ModelSettings(thinking=...)` decides on/off and the level per request.
    - `foreign_reasoning`: what happens to reasoning from another scope: `"drop"` (default)
      or `"text"` (sent as plain text).
    - `settings`: default `ModelSettings`, under each request's own.
    - `extra_body`, `extra_headers`: passed through on every request (the extra body over the
      dialect's own switches).
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        dialect: str | ChatDialect | None = None,
        thinking: OpenAIThinking | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        if isinstance(thinking, OpenAIThinking):
            for name in ("summary", "context", "mode"):
                if getattr(thinking, name) is not None:
                    raise ConfigurationError(
                        f"Chat Completions has no reasoning {name}: leave OpenAIThinking.{name} "
                        "unset (or use OpenAIResponsesModel, which has one)"
                    )
        given = resolve_dialect(dialect) if dialect is not None else None
        if client is None:
            client = _client_from_environment(given)
        host = given if given is not None else resolve_dialect(None, client)
        self._dialect = host.for_model(model_name)
        if isinstance(thinking, OpenAIThinking):
            check_thinking_config(self._dialect, thinking)
        super().__init__(
            model_name,
            client=client,
            scope=self._dialect.name,
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
            extra_body=extra_body,
            extra_headers=extra_headers,
        )
        field = self._dialect.reasoning_field
        self._fields: tuple[str, ...] = (
            ()
            if self._dialect.reasoning in ("none", "think_tags")
            else (field, *(f for f in ("reasoning_content", "reasoning") if f != field))
            if field is not None
            else ("reasoning_content", "reasoning")
        )
        raw = isinstance(thinking, OpenAIThinking) and thinking.format == "raw"
        inline = self._dialect.reasoning == "think_tags" or raw  # raw: `<think>` in the content
        self._tags = self._dialect.tags if inline else None
        self._instructions_role = (
            "developer"
            if self._dialect.developer_role and _REASONING_MODEL.match(model_name)
            else "system"
        )
        self._profile = ModelProfile(
            native_output=self._dialect.native_output,
            media=self._dialect.media,
            reasoning=self._dialect.efforts is not None or reasons(model_name),
        )
        self._readable = (
            _same_vendor(model_name) if self._dialect.reasoning == "reasoning_details" else None
        )

    @property
    def dialect(self) -> ChatDialect:
        """The endpoint's dialect for this model (the host's variant for its family, where it
        has one): its name is the scope this model's messages are tagged with."""
        return self._dialect

    @property
    def profile(self) -> ModelProfile:
        """What this endpoint takes besides text (the dialect's media) and whether it honours a
        JSON-schema response format together with tools and reasoning."""
        return self._profile

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.chat.completions.create` (without `stream`).

        Raises `ConfigurationError` for a `tool_choice` naming no tool on offer and for media
        the endpoint does not take.
        """
        return detached(self._prepare(request)[0])

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], tuple[WarningEvent, ...]]:
        """The request's keyword arguments and the warnings for what had to be adjusted."""
        params, warnings, _ = self._prepared(request)
        return params, warnings

    def _prepared(
        self, request: ModelRequest
    ) -> tuple[dict[str, Any], tuple[WarningEvent, ...], JsonPieces]:
        """The request's keyword arguments (the messages shared: never to be changed), the
        warnings for what had to be adjusted, and the JSON text of the messages."""
        refuse_builtin_tools(
            request.builtin_tools, "Chat Completions", " (use OpenAIResponsesModel)"
        )
        settings = merge_settings(self.settings, request.settings)
        check_note_tools(request.messages, request.tools, scope=self.scope)
        messages, replay_warnings, texts = self._messages(request.messages)
        if request.instructions:
            instructions = {"role": self._instructions_role, "content": request.instructions}
            messages.insert(0, instructions)
            texts.insert(0, COMPACT.encode(instructions))
        params: dict[str, Any] = {"model": self.model_name, "messages": messages}
        if request.tools:
            params["tools"] = [_tool(t.name, t.description, t.parameters) for t in request.tools]
            set_tool_choice(params, settings, request.tools, _named_tool_choice)
        thinking = chat_thinking(
            self._dialect,
            self.model_name,
            self.thinking,
            settings.get("thinking"),
            scope=self.scope,
        )
        params.update(thinking.params)
        output = request.output
        if output is not None and output.mode == "native":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": _json_schema(output.name, output.description, output.schema),
            }
        if "prompt_cache" in settings:  # caching is the service's own: nothing to send
            check_prompt_cache(settings["prompt_cache"])
        if "prompt_cache_key" in settings and self._dialect.name in ("openai", "azure"):
            params["prompt_cache_key"] = settings["prompt_cache_key"]
        copy_settings(
            settings,
            params,
            max_tokens=self._dialect.max_tokens_param,
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop",
        )
        body = {**thinking.body, **self._extra_body}
        request_options(params, settings, body, self._extra_headers)
        return params, (*thinking.warnings, *replay_warnings), json_array(texts)

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `messages` parameter for a history (without the instructions).

        User turns become their `tool` messages, then a `user` message for their text, images
        and documents, then their system notes: a `system` (or `developer`, as the
        instructions) message each where the dialect takes one mid-conversation
        (`mid_conversation_system`), else the user's text (`_system_notes`). Assistant turns
        send their text and tool calls (arguments exactly as received); their reasoning goes
        back only where the dialect's `replay` rule asks, in the shape it came in (its field,
        its `reasoning_details` items, its content chunks, or inline between its tags) or
        inline between tags where `replay_as` says so, and only when it was recorded: nothing is invented, except the empty field of
        `missing_reasoning` on a tool-call message without reasoning and the documented dummy
        signature on another provider's tool call (`call_signatures`). A tool call's signature
        goes back where it came (`extra_content.google.thought_signature`).
        """
        return detached(self._messages(messages)[0])

    def _messages(
        self, messages: Sequence[Message]
    ) -> tuple[list[dict[str, Any]], list[WarningEvent], list[str]]:
        """The `messages` parameter, the warnings for what was sent in place of reasoning this
        scope's own messages no longer have (`missing_reasoning="always_empty"`), and each
        message's JSON. What each message sends is derived once (`_turn`, `_wire`); it is
        shared, never changed. A conversation's later requests resume after the turns that
        were over on the one before (`PerPrefix`): a request passes over its current turn."""
        get = self._per_message.get
        dialect = self._dialect
        begin, kept = self._per_prefix.resume(messages, _PREFIX)
        turns = [
            get(messages[i], _TURN, self._turn, messages, i) for i in range(begin, len(messages))
        ]
        if begin and not (turns and turns[0].starts):  # a branch: the prefix's last turn goes on
            begin, kept = 0, None
            turns = [get(m, _TURN, self._turn, messages, i) for i, m in enumerate(messages)]
        prefix = cast("_ChatPrefix", kept) if kept is not None else _NO_PREFIX
        # the prefix ends where a turn starts: the replay rule reads the turns after it alone
        replay = {begin + i for i in _replayed(turns, dialect.replay)}
        prompt = current_prompt(messages)  # which notes are shown (`shown_notes`)
        notes = not dialect.mid_conversation_system
        out: list[dict[str, Any]] = list(prefix.items)
        texts: list[str] = list(prefix.texts)
        placeholders: list[int] = list(prefix.placeholders)
        noted: list[int] = list(prefix.noted)
        # everything before the last turn's start is final for every later request: which
        # turns replay their reasoning, and which notes are over (the prompt is at or after it)
        last = next((k for k in range(len(turns) - 1, 0, -1) if turns[k].starts), 0)
        checkpoint = None
        for k, turn in enumerate(turns):
            i = begin + k
            if k == last and k:
                checkpoint = _ChatPrefix(
                    tuple(out), tuple(texts), tuple(placeholders), tuple(noted)
                )
            if turn.user:
                message = messages[i]
                items, encoded = get(
                    message, (_USER, i < prompt), self._user, turn.scoped or message, i, prompt
                )
                out += items
                texts += encoded
                if notes and shown_notes(message, i, prompt):
                    noted.append(i)
                continue
            message = turn.scoped or messages[i]
            wire, placeholder, text = get(
                messages[i], (_WIRE, i in replay), self._wire, message, turn.own, i in replay
            )
            if wire is None:
                continue
            if placeholder:
                placeholders.append(i)
            out.append(wire)
            texts.append(text)
        if checkpoint is not None:
            self._per_prefix.keep(messages, begin + last, _PREFIX, checkpoint)
        warnings: list[WarningEvent] = []
        if notes:
            why = f"{dialect.name} takes no system message after the first turn"
            note = noted_warning(noted, why=why, scope=self.scope)
            warnings += [note] if note is not None else []
        if placeholders:
            warnings.append(
                WarningEvent(
                    "reasoning_placeholder",
                    f"{len(placeholders)} tool-call message(s) of this scope have no reasoning "
                    f"(messages {placeholders}): sent with an empty {self._dialect.reasoning_field}, as "
                    "the endpoint accepts",
                    self.scope,
                )
            )
        return out, warnings, texts

    def _turn(self, messages: Sequence[Message], index: int) -> _Turn:
        """What `messages[index]` is on the wire, whatever comes before or after it: the message
        as the replay policy leaves it (its media checked first), a user message's items, and
        what the dialect's replay rule reads of it."""
        given = messages[index]
        self._profile.media.check(messages, start=index, stop=index + 1)
        (message,) = for_scope(
            (given,),
            self.scope,
            foreign_reasoning=self.foreign_reasoning,
            readable=self._readable,
        )
        scoped = message if message is not given else None  # never the key itself: kept weakly
        if message.role == "user":
            starts = any(isinstance(p, TextPart) and p.text for p in message.parts)
            return _Turn(scoped, user=True, starts=starts)
        own = message.scope == self.scope and (self._readable is None or self._readable(message))
        thinks = message.scope == self.scope and any(
            isinstance(p, ThinkingBlock) for p in message.parts
        )
        return _Turn(scoped, own=own, thinks=thinks, calls=bool(message.tool_calls))

    def _user(
        self, message: Message, index: int, prompt: int
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """A user message (as the replay policy leaves it) on the wire, and its items' JSON: its
        tool results, its text and media, then its notes as the dialect takes them (as
        `system` messages mid-conversation, else as the user's text), as of `prompt`."""
        if not self._dialect.mid_conversation_system:
            message = notes_as_text(message, index, prompt)
        items = user_items(message, _tool_message, self._user_content)
        items += [
            {"role": self._instructions_role, "content": note.text}
            for note in shown_notes(message, index, prompt)
        ]
        return items, [COMPACT.encode(item) for item in items]

    def _wire(
        self, message: Message, own: bool, with_reasoning: bool
    ) -> tuple[dict[str, Any] | None, bool, str]:
        """An assistant message (as the replay policy leaves it) on the wire (None: nothing to
        send), whether it went with the placeholder of reasoning this scope's message no
        longer has, and its JSON."""
        dialect = self._dialect
        wire = _assistant(message, with_reasoning, own, dialect)
        if wire is None:
            return None, False, ""
        field = dialect.reasoning_field
        missing = dialect.missing_reasoning
        if (
            field is not None
            and "tool_calls" in wire
            and field not in wire
            and (missing == "always_empty" or (missing == "empty" and not own))
        ):
            wire[field] = ""  # the documented placeholder
            return wire, own, COMPACT.encode(wire)
        return wire, False, COMPACT.encode(wire)

    def _user_content(self, part: TextPart | Image | Document) -> dict[str, Any]:
        if isinstance(part, TextPart):
            return {"type": "text", "text": part.text}
        if isinstance(part, Image):
            return {"type": "image_url", "image_url": {"url": data_url(part)}}
        if part.data is None:
            raise ConfigurationError(
                "Chat Completions takes documents as bytes only (give Document(data=...)), "
                "or use OpenAIResponsesModel, which takes a file_url"
            )
        return {"type": "file", "file": {"filename": file_name(part), "file_data": data_url(part)}}

    async def request(self, request: ModelRequest) -> ModelResponse:
        params, warnings, text = self._prepared(request)
        try:
            completion = cast(
                "ChatCompletion",
                await send_json(
                    self.client,
                    AsyncCompletions,
                    self.client.chat.completions.create,
                    params,
                    "messages",
                    text,
                ),
            )
        except SDK_ERRORS as exc:
            raise self.map_error(exc) from exc
        try:
            response = received(self.parse_response(completion))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc
        if not warnings:
            return response
        return ModelResponse(response.message, (*warnings, *response.warnings))

    def parse_response(self, completion: ChatCompletion) -> ModelResponse:
        """The shared form of an SDK `ChatCompletion`: the reasoning (its field, or each
        `reasoning_details` item), then the content (split at reasoning tags for `think_tags`,
        or chunk by chunk when it is a list), then the tool calls; usage and finish reason.
        Parts of a shape this version does not know are kept in `provider_details` and
        reported in the response's warnings."""
        if not completion.choices:
            raise ProviderError(
                "the response has no choices", scope=self.scope, error_type="no_choices"
            )
        choice = completion.choices[0]
        message = choice.message
        extra = message.model_extra or {}
        parts: list[Part] = []
        unknown: dict[str, list[JsonValue]] = {}
        if extra.get(DETAILS_KEY):
            blocks, unknown[UNKNOWN_DETAILS] = detail_blocks(extra[DETAILS_KEY])
            parts += blocks
        elif reasoning := _reasoning(extra, self._fields):
            parts.append(ThinkingBlock(text=reasoning))
        content: object = message.content
        if isinstance(content, list):
            chunks, unknown[UNKNOWN_CONTENT] = content_parts(content)
            parts += chunks
        elif isinstance(content, str):
            parts += self._text_parts(content)
        elif content is not None:
            unknown[UNKNOWN_CONTENT] = [{"position": 0, "chunk": cast("JsonValue", plain(content))}]
        for call in message.tool_calls or ():
            if call.type == "function":
                parts.append(
                    ToolCall(
                        id=call.id,
                        name=call.function.name,
                        arguments=call.function.arguments,
                        signature=_call_signature(call) if self._dialect.call_signatures else None,
                    )
                )
        details = _details(choice.finish_reason, message.refusal, unknown)
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=completion.model or self.model_name,
                id=completion.id,
                usage=_usage(completion.usage),
                finish_reason=self.map_finish_reason(choice.finish_reason),
                provider_details=details,
            ),
            _unknown_warnings(unknown, self.scope),
        )

    def _text_parts(self, content: str) -> list[Part]:
        """A content string's parts: one text part, or its `<think>` segments."""
        if not content:
            return []
        if self._tags is None:
            return [TextPart(text=content)]
        return [
            ThinkingBlock(text=text) if thinking else TextPart(text=text)
            for thinking, text in split_think_tags(content, self._tags)
        ]

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Warnings, then deltas and part ends as the endpoint streams them, then the complete
        `ModelResponse`.

        Parts open where they first appear (the reasoning, each `reasoning_details` item by its
        index and type, the content, each of its `<think>` segments or chunk runs, each tool
        call by its index) and end when the next one opens, so the message built equals the
        non-streamed one. Raises `StreamInterrupted` (with the partial message) when the
        stream ends without a finish reason, and `ProviderError` for an error inside it.
        """
        params, warnings, text = self._prepared(request)
        for warning in warnings:
            yield warning
        if self._dialect.stream_usage:
            params["stream_options"] = {"include_usage": True}
        try:
            chunks = await send_json(
                self.client,
                AsyncCompletions,
                self.client.chat.completions.create,
                params,
                "messages",
                text,
                stream=True,
            )
        except openai.OpenAIError as exc:
            raise self.map_error(exc) from exc
        state = _ChatStream(self.model_name, self._fields, self._tags)
        try:
            async with chunks:
                async for chunk in chunks:
                    for event in state.fold(chunk):
                        yield event
        except (openai.OpenAIError, *STREAM_BREAKS) as exc:  # a break, or an error event
            raise self._stream_error(exc, state.builder, state.model, "its finish_reason") from exc
        if state.finish is None:
            raise self._stream_error(None, state.builder, state.model, "its finish_reason")
        for event in state.close():
            yield event
        response = state.response(self.scope)
        for warning in response.warnings:
            yield warning
        yield ModelResponse(response.message, (*warnings, *response.warnings))

    def map_error(self, exc: BaseException) -> BaseException:
        """The `ProviderError` for an SDK exception (the service's message, status and type,
        credentials masked), with a hint for two refusals that have a known fix; anything else
        comes back as it is."""
        error = super().map_error(exc)
        if not isinstance(error, ProviderError) or not isinstance(exc, openai.OpenAIError):
            return error
        text = error.message.lower()
        effort = self.thinking is not None and self.thinking.effort is not None
        if error.status == 400 and effort and ("tool" in text or "function" in text):
            add_hint(
                error,
                "Hint: this model does not take tools together with reasoning_effort on Chat "
                "Completions: drop OpenAIThinking.effort, or use OpenAIResponsesModel.",
            )
        elif "reasoning_content" in text and self._dialect.replay == "never":
            add_hint(
                error,
                f"Hint: this endpoint wants reasoning_content back on assistant turns, which "
                f"dialect {self.scope!r} never sends: use its own dialect ('deepseek', "
                "'moonshot'...) or a ChatDialect with replay='tool_turns' and "
                "missing_reasoning='empty'.",
            )
        return error

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """The normalised finish reason (None for values it does not know)."""
        return _FINISH.get(raw) if raw is not None else None


class _ChatStream:
    """One streamed response: the builder its deltas fold into, the part that is open (each
    part ends when another opens), and what the chunks say about the response as a whole (id,
    model, usage, finish reason, refusal, parts of unknown shape)."""

    __slots__ = (
        "_calls",
        "_fields",
        "_items",
        "_open",
        "_run",
        "_splitter",
        "builder",
        "finish",
        "id",
        "model",
        "refusal",
        "unknown",
        "usage",
    )

    def __init__(self, model: str, fields: tuple[str, ...], tags: tuple[str, str] | None) -> None:
        self.builder = StreamBuilder(json_arguments=False)
        self._fields = fields
        self._splitter = ThinkTagSplitter(tags) if tags is not None else None
        self._open: object = None
        self._calls: set[int] = set()  # the tool calls opened (ended with the choice)
        self._items: set[object] = set()  # the reasoning_details items seen
        self._run: tuple[str, int] = ("", -1)  # the kind and number of the open chunk run
        self.id: str | None = None
        self.model = model
        self.usage: CompletionUsage | None = None
        self.finish: str | None = None
        self.refusal: list[str] = []
        self.unknown: dict[str, list[JsonValue]] = {}

    def fold(self, chunk: ChatCompletionChunk) -> list[ModelStreamEvent]:
        """The events one chunk makes."""
        delta = self._response_fields(chunk)
        if delta is None:
            return []  # the usage chunk, or one of Azure's filter chunks: no part
        # (a delta's `role`, and the legacy `function_call` that `tool_calls` replaced, make
        # no part either)
        events: list[ModelStreamEvent] = []
        extra = delta.model_extra or {}
        if extra.get(DETAILS_KEY):
            self._details(extra[DETAILS_KEY], events)
        elif (reasoning := _reasoning(extra, self._fields)) is not None:
            self._add(events, _REASONING, self.builder.thinking(_REASONING, reasoning))
        content: object = delta.content
        if isinstance(content, list):
            self._chunks(cast("list[object]", content), events)
        elif isinstance(content, str) and content:
            self._text(content, events)
        if delta.tool_calls:
            self._segments(self._splitter.end() if self._splitter is not None else [], events)
            for call in delta.tool_calls:
                self._add(events, call.index, _tool_call(self.builder, call))
        return events

    def close(self) -> list[ModelStreamEvent]:
        """The events of the end of the choice: the content's held-back `<think>` pieces, then
        the end of the open part and of every tool call, in index order."""
        events: list[ModelStreamEvent] = []
        self._segments(self._splitter.end() if self._splitter is not None else [], events)
        for key in (self._open, *sorted(self._calls)):
            end = self.builder.end(key) if key is not None else None
            if end is not None:
                events.append(end)
        return events

    def response(self, scope: str) -> ModelResponse:
        """The complete response, once the finish reason has arrived."""
        message = self.builder.message(
            scope=scope,
            model=self.model,
            usage=_usage(self.usage),
            finish_reason=OpenAIChatModel.map_finish_reason(self.finish),
            id=self.id,
            provider_details=_details(self.finish, "".join(self.refusal) or None, self.unknown),
        )
        return ModelResponse(message, _unknown_warnings(self.unknown, scope))

    def _response_fields(self, chunk: ChatCompletionChunk) -> ChoiceDelta | None:
        # Azure opens with a prompt-filter chunk (empty id and model, no choices) and may send
        # content-filter chunks without a delta: the id is the first non-empty one, the model
        # the last non-empty one, as in the non-streamed response.
        if self.id is None and chunk.id:
            self.id = chunk.id
        if chunk.model:
            self.model = chunk.model
        if chunk.usage is not None:
            self.usage = chunk.usage
        if not chunk.choices:
            return None
        choice = chunk.choices[0]
        if choice.finish_reason is not None:
            self.finish = choice.finish_reason
        delta = cast("ChoiceDelta | None", choice.delta)
        if delta is not None and delta.refusal:
            self.refusal.append(delta.refusal)
        return delta

    def _add(
        self,
        events: list[ModelStreamEvent],
        key: object,
        delta: ThinkingDelta | TextDelta | ToolCallDelta | None,
    ) -> None:
        """Record that `key` is the open part (ending the one before it), then its delta.
        Tool calls end with the choice: a call's argument fragments may still come after the
        next call has begun."""
        if isinstance(key, int):
            self._calls.add(key)
        elif key != self._open:
            end = self.builder.end(self._open) if self._open is not None else None
            if end is not None:
                events.append(end)
            self._open = key
        if delta is not None:
            events.append(delta)

    def _details(self, raw: object, events: list[ModelStreamEvent]) -> None:
        """Fold `reasoning_details` fragments into blocks keyed by item index and type: text
        and summaries accumulate, a signature or an encrypted payload arrives whole."""
        for value in cast("list[object]", raw) if isinstance(raw, list) else [raw]:
            item = plain(value)
            kind = item.get("type") if item is not None else None
            if item is None or (kind != ENCRYPTED and kind not in DETAIL_TEXT):
                kept = self.unknown.setdefault(UNKNOWN_DETAILS, [])
                at = len(self._items) + len(kept)
                kept.append({"position": at, "item": cast("JsonValue", item or value)})
                continue
            key = (_DETAIL, item.get("index"), kind)
            self._items.add(key)
            details = detail_fields(item)
            if kind == ENCRYPTED:
                data = item.get("data")
                delta = self.builder.thinking(
                    key, redacted=data if isinstance(data, str) else None, details=details
                )
            else:
                text = item.get(DETAIL_TEXT[cast("str", kind)])
                signature = item.get("signature")
                delta = self.builder.thinking(
                    key,
                    text if isinstance(text, str) else "",
                    signature=signature if isinstance(signature, str) and signature else None,
                    details=details,
                )
            self._add(events, key, delta)

    def _chunks(self, chunks: list[object], events: list[ModelStreamEvent]) -> None:
        """Fold content chunks: consecutive fragments of one kind make one part."""
        for value in chunks:
            chunk = content_chunk(value)
            kind = chunk.get("type") if chunk is not None else None
            text = (
                thinking_text(chunk.get("thinking"))
                if chunk is not None and kind == "thinking"
                else chunk.get("text")
                if chunk is not None and kind == "text"
                else None
            )
            if chunk is None or not isinstance(text, str):
                kept = self.unknown.setdefault(UNKNOWN_CONTENT, [])
                at = self._run[1] + 1 + len(kept)
                kept.append({"position": at, "chunk": cast("JsonValue", chunk or value)})
                continue
            if self._run[0] != kind:
                self._run = (cast("str", kind), self._run[1] + 1)
            key = (_CHUNK, self._run[1])
            if kind == "thinking":
                extra = {k: v for k, v in chunk.items() if k not in ("type", "thinking")}
                self._add(events, key, self.builder.thinking(key, text, details=extra or None))
            else:
                self._add(events, key, self.builder.text(key, text))

    def _text(self, text: str, events: list[ModelStreamEvent]) -> None:
        """Fold a content fragment: one text part, or its `<think>` segments."""
        if self._splitter is not None:
            self._segments(self._splitter.feed(text), events)
        else:
            self._add(events, _CONTENT, self.builder.text(_CONTENT, text))

    def _segments(self, pieces: list[Segment], events: list[ModelStreamEvent]) -> None:
        """Fold split content, each `<think>` segment its own part."""
        for number, thinking, text in pieces:
            key = (_SEGMENT, number)
            builder = self.builder
            self._add(
                events, key, builder.thinking(key, text) if thinking else builder.text(key, text)
            )


def _tool_call(builder: StreamBuilder, call: ChoiceDeltaToolCall) -> ToolCallDelta | None:
    """Fold a tool-call fragment into the call its index names (with its signature, where one
    rides on it: only Gemini's OpenAI-compatible endpoint sends one)."""
    function = call.function
    signature = _call_signature(call)
    if function is None:
        return builder.tool_call(call.index, id=call.id, signature=signature)
    return builder.tool_call(
        call.index,
        id=call.id,
        name=function.name,
        arguments=function.arguments or "",
        signature=signature,
    )


def _call_signature(call: object) -> str | None:
    """A tool call's `extra_content.google.thought_signature` (Gemini's OpenAI-compatible
    endpoint), kept as it came."""
    extra = cast("Mapping[str, object]", getattr(call, "model_extra", None) or {})
    content = plain(extra.get("extra_content"))
    google = plain(content.get("google")) if content is not None else None
    signature = google.get("thought_signature") if google is not None else None
    return signature if isinstance(signature, str) and signature else None


def _reasoning(extra: Mapping[str, Any] | None, fields: Sequence[str]) -> str | None:
    """The reasoning text in the first of the dialect's `fields` that has some."""
    if not extra:
        return None
    for name in fields:
        value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _same_vendor(model_name: str) -> Callable[[Message], bool]:
    """OpenRouter's rule for its own messages: a proof goes back to a model of the vendor that
    issued it (`anthropic/...` to `anthropic/...`), never across vendors behind the router."""
    vendor = model_name.split("/", 1)[0].lower() if "/" in model_name else None

    def readable(message: Message) -> bool:
        model = message.model or ""
        return vendor is None or ("/" in model and model.split("/", 1)[0].lower() == vendor)

    return readable


def _client_from_environment(dialect: ChatDialect | None) -> openai.AsyncOpenAI:
    """A client from the environment: `AZURE_OPENAI_*`/`OPENAI_API_VERSION` for Azure,
    the dialect's key variable and base URL for a named endpoint, `OPENAI_*` otherwise."""
    if dialect is not None and dialect.name == "azure":
        return client_from_environment(openai.AsyncAzureOpenAI)
    if dialect is not None and (dialect.base_url or dialect.api_key_env):
        env = dialect.name.upper().replace("-", "_")
        base_url = os.environ.get(f"{env}_BASE_URL") or dialect.base_url
        if dialect.api_key_env:
            api_key = os.environ.get(dialect.api_key_env)
            if not api_key:
                raise ConfigurationError(
                    f"no API key for the {dialect.name} endpoint: set {dialect.api_key_env} "
                    "or pass client=openai.AsyncOpenAI(...)"
                )
        else:
            api_key = dialect.name  # local servers take any key
        return client_from_environment(
            lambda: openai.AsyncOpenAI(api_key=api_key, base_url=base_url)
        )
    return client_from_environment()


def _assistant(
    message: Message, with_reasoning: bool, own: bool, dialect: ChatDialect
) -> dict[str, Any] | None:
    """An assistant message on the wire: its text (with its reasoning inline between tags, or
    as `thinking` chunks), its reasoning in the dialect's field or as `reasoning_details`, its
    tool calls; None when it has nothing to send."""
    source = dialect.reasoning
    inline = source == "think_tags" or dialect.replay_as == "think_tags"
    segments: list[tuple[bool, str]] = []
    chunks: list[dict[str, Any]] = []
    texts: list[str] = []
    details: list[ThinkingBlock] = []
    calls: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            # for_scope already removed other scopes' reasoning
            if not with_reasoning:
                continue
            if _from_detail(part):
                details.append(part)
            elif part.redacted is not None or not part.text:
                continue  # no text to send in any shape but its own item
            elif dialect.replay_as == "think_tags":
                segments.append((True, part.text))
            elif source == "content_chunks":
                chunks.append(thinking_chunk(part))
            elif source == "think_tags":
                segments.append((True, part.text))
            else:
                texts.append(part.text)
        elif isinstance(part, TextPart):
            if part.text:
                segments.append((False, part.text))
                chunks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            call: dict[str, Any] = {
                "id": part.id,
                "type": "function",
                "function": {"name": part.name, "arguments": arguments_json(part)},
            }
            signature = part.signature if own else None
            if dialect.call_signatures and not own and not calls:
                signature = SKIP_SIGNATURE  # the documented dummy for another model's turn
            if dialect.call_signatures and signature is not None:
                call["extra_content"] = {"google": {"thought_signature": signature}}
            calls.append(call)
    # what this version did not know goes back in place, to its own scope only (the unknown
    # reasoning items with the reasoning, the unknown content chunks with the content)
    provider = (message.provider_details or {}) if own else {}
    unknown_chunks = provider.get(UNKNOWN_CONTENT)
    content: str | list[Any]
    if inline:
        content = join_think_tags(segments, dialect.tags)
    elif any(c["type"] == "thinking" for c in chunks) or unknown_chunks:
        content = _with_unknown(chunks, unknown_chunks, "chunk")
    else:
        content = "".join(text for _, text in segments)
    unknown_items = provider.get(UNKNOWN_DETAILS) if with_reasoning else None
    items, unplaced = detail_items(details, unknown_items)
    texts += unplaced
    if not content and not calls and not texts and not items:
        return None
    wire: dict[str, Any] = {"role": "assistant", "content": content or None}
    field = dialect.reasoning_field
    if items:
        wire[DETAILS_KEY] = items
    if texts:
        wire[field or "reasoning_content"] = "\n\n".join(texts)
    if calls:
        wire["tool_calls"] = calls
    elif wire["content"] is None:
        wire["content"] = ""
    return wire


def _from_detail(block: ThinkingBlock) -> bool:
    """Whether a block came from a `reasoning_details` item (and goes back as one)."""
    kind = (block.provider_details or {}).get("type")
    return kind == ENCRYPTED or kind in DETAIL_TEXT


def _with_unknown(chunks: list[dict[str, Any]], unknown: object, key: str) -> list[Any]:
    """`chunks` with the kept unknown ones back at their positions."""
    out: list[Any] = list(chunks)
    for entry in cast("list[object]", unknown) if isinstance(unknown, list) else []:
        if isinstance(entry, dict):
            entry = cast("dict[str, Any]", entry)
            position = entry.get("position")
            at = position if isinstance(position, int) else len(out)
            out.insert(min(at, len(out)), entry.get(key))
    return out


_TURN = "turn"
_USER = "user"
_WIRE = "wire"
_PREFIX = "messages"


@dataclass(frozen=True, slots=True)
class _ChatPrefix:
    """What `_messages` sent for a conversation's turns that are over (`PerPrefix`): their
    messages' wire forms and JSON, and the indexes of those that went with a reasoning
    placeholder and of those whose notes went as the user's text. No message: a state kept
    with the conversation's first message must not hold it."""

    items: tuple[dict[str, Any], ...] = ()
    texts: tuple[str, ...] = ()
    placeholders: tuple[int, ...] = ()
    noted: tuple[int, ...] = ()


_NO_PREFIX = _ChatPrefix()


@dataclass(frozen=True, slots=True)
class _Turn:
    """One message as `_messages` reads it: as the replay policy leaves it (None: as it is;
    never the message itself, which is kept weakly); whether it is the user's, and whether it
    starts a turn (it has text: on the wire, a `user` message; one with only tool results
    continues the turn); an assistant message's: whether it is this scope's (and readable
    here), whether it is this scope's with thinking, whether it calls tools."""

    scoped: Message | None
    user: bool = False
    starts: bool = False
    own: bool = False
    thinks: bool = False
    calls: bool = False


def _replayed(turns: Sequence[_Turn], rule: ReplayRule) -> set[int]:
    """Indexes of this scope's assistant messages whose reasoning goes back under `rule`."""
    if rule == "never":
        return set()
    own = [i for i, t in enumerate(turns) if t.thinks]
    if rule == "always" or not own:
        return set(own)
    starts = [i for i, t in enumerate(turns) if t.starts]
    if rule == "tool_loop":
        last = starts[-1] if starts else -1
        return {i for i in own if i > last}
    chosen: set[int] = set()
    begin, first = -1, 0  # the turn's bounds; its first message of `own` (which is sorted)
    for end in (*starts, len(turns)):
        last = first
        while last < len(own) and own[last] < end:
            last += 1
        if any(turns[i].calls for i in range(begin + 1, end)):
            chosen.update(own[first:last])
        begin, first = end, last
    return chosen


def _tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "parameters": parameters}
    if description:
        function["description"] = description
    return {"type": "function", "function": function}


def _json_schema(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The `json_schema` of a `response_format` (strict where the schema already meets the
    strict-mode rules: every object closed and all its properties required)."""
    out: dict[str, Any] = {"name": name, "schema": schema, "strict": strict_schema(schema)}
    if description:
        out["description"] = description
    return out


def _named_tool_choice(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def _tool_message(result: ToolResult) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": result.call_id, "content": result.content_text()}


def _usage(usage: CompletionUsage | None) -> Usage:
    """The counts of a completion: the prompt's tokens read from the cache are OpenAI's
    `prompt_tokens_details.cached_tokens` or, where only that is sent, DeepSeek's
    `prompt_cache_hit_tokens`; those written, `cache_write_tokens` where a host reports them."""
    if usage is None:
        return Usage()
    completion = usage.completion_tokens_details
    prompt = usage.prompt_tokens_details
    read = prompt.cached_tokens if prompt is not None else None
    if read is None and usage.model_extra:
        hits = usage.model_extra.get("prompt_cache_hit_tokens")
        read = hits if isinstance(hits, int) else None
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        thinking_tokens=(completion.reasoning_tokens or 0) if completion is not None else 0,
        cache_read_tokens=read or 0,
        cache_write_tokens=(prompt.cache_write_tokens or 0) if prompt is not None else 0,
    )


def _details(
    raw_finish: str | None, refusal: str | None, unknown: Mapping[str, list[JsonValue]]
) -> ProviderDetails | None:
    details: ProviderDetails = {}
    if raw_finish is not None:
        details["finish_reason"] = raw_finish
    if refusal:
        details["refusal"] = refusal
    for key, kept in unknown.items():
        if kept:
            details[key] = list(kept)
    return details or None


def _unknown_warnings(
    unknown: Mapping[str, list[JsonValue]], scope: str
) -> tuple[WarningEvent, ...]:
    names = {UNKNOWN_DETAILS: "reasoning_details items", UNKNOWN_CONTENT: "content chunks"}
    return tuple(unknown_warning(names[k], len(v), scope) for k, v in unknown.items() if v)
