"""`GeminiModel`: Gemini's thoughts and thought signatures through the official `google-genai`
SDK, on the Gemini API and on Vertex AI.

```python
from thinkagent import Agent
from thinkagent.providers.gemini import GeminiModel, GeminiThinking

model = GeminiModel("gemini-3-pro-preview", thinking=GeminiThinking(level="high"))
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

A response becomes one assistant `Message`, part for part and in order: `thought: true` parts
-> `ThinkingBlock` (signed when the part carries a `thoughtSignature`), text parts ->
`TextPart`, function calls -> `ToolCall`; a thought signature stays on the exact part that
carried it (an empty text part that only carries a signature is kept), as standard base64 of
its bytes. On later turns the parts of this scope (`"gemini"` or `"vertex"`, whichever the
client talks to) go back in order with each signature on its part, byte for byte; signatures
of another scope, or of another Gemini generation, are never sent; every request starts with
the bytes of the one before it, so the service's implicit cache serves that prefix. See
`docs/providers/gemini.md`.
"""

from __future__ import annotations

import enum
import importlib
import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from pydantic import ValidationError

from ...builtin_tools import BuiltinTool
from ...errors import ConfigurationError, HistoryError, ProviderError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    Document,
    FinishReason,
    Image,
    Message,
    Part,
    ProviderDetails,
    ServerToolCall,
    ServerToolResult,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
)
from ...stream import StreamBuilder, WarningEvent
from .._common import (
    UNREADABLE,
    AdapterBase,
    SharedDict,
    arguments_object,
    connection_error,
    copy_settings,
    interrupted,
    merge_settings,
    received,
    retryable_status,
    tool_arguments,
    tool_choice_name,
    unreadable,
)
from .._system_notes import (
    check_note_tools,
    current_prompt,
    noted_warning,
    notes_as_text,
    shown_notes,
)
from ..base import (
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
    ToolDefinition,
)
from . import _server_tools
from ._partial_args import PartialArguments
from ._rules import (
    GENERATED_ID,
    SKIP_SIGNATURE,
    GeminiThinking,
    MissingSignature,
    ReplayThoughts,
    check_missing_signature,
    check_replay_thoughts,
    decode_signature,
    encode_signature,
    error_type,
    finish_reason,
    gemini_version,
    generated_call_id,
    media_problem,
    media_type,
    model_profile,
    signatures_carry_over,
    thinking_for_model,
    thinking_for_setting,
)

__all__ = ["DEFAULT_MAX_RETRIES", "GeminiModel"]

DEFAULT_MAX_RETRIES = 2
"""Retries (after the first attempt) of a client `GeminiModel` builds itself."""

_RESERVED = frozenset(
    {"system_instruction", "tools", "automatic_function_calling", "thinking_config"}
)
_GENERATED: ProviderDetails = {GENERATED_ID: True}
_NO_SYSTEM_ROLE = "the Gemini API has no system role inside contents"

_OPENING = types.Content(role="user", parts=[types.Part(text="")])
"""The user turn a conversation that has none opens with (an instructions-only run): the
service accepts an empty text part, as the recorded exchange shows."""
_NO_WARNINGS: tuple[WarningEvent, ...] = ()
_RETRYABLE_STATUSES = frozenset({408, 429})
"""The statuses (besides 5xx) the SDK's own retry options retry."""


def _transport_errors() -> tuple[type[BaseException], ...]:
    """Errors the SDK lets through from its HTTP stack: a dropped or refused connection, a
    timeout (httpx2, or aiohttp when it is installed: the SDK prefers it then)."""
    found: list[type[BaseException]] = [httpx2.TransportError, TimeoutError]
    try:
        aiohttp = importlib.import_module("aiohttp")
    except ImportError:  # pragma: no cover - depends on the environment
        return tuple(found)
    found.append(cast("type[BaseException]", aiohttp.ClientError))
    return tuple(found)


_TRANSPORT_ERRORS = _transport_errors()
_MALFORMED = (json.JSONDecodeError, genai_errors.UnknownApiResponseError)
"""A body (or stream event) that is not the JSON it should be."""
_VENDOR_ERRORS = (genai_errors.APIError, *_TRANSPORT_ERRORS, *_MALFORMED)
"""What `map_error` maps."""
_STREAM_ERRORS = (genai_errors.APIError, *_TRANSPORT_ERRORS, *_MALFORMED, ValidationError)
"""What ends a stream early: the service's error, or a broken connection or event."""


class GeminiModel(AdapterBase[genai.Client, GeminiThinking]):
    """A Gemini model behind the Gemini API or Vertex AI, through `google.genai.Client`.

    - `client`: your `genai.Client` (its credentials, base URL, timeout and retry options
      apply, and it decides the scope: `"vertex"` when it is a Vertex AI client, else
      `"gemini"`). When omitted one is built from the environment (`GEMINI_API_KEY` or
      `GOOGLE_API_KEY`; or `GOOGLE_GENAI_USE_VERTEXAI=true` with `GOOGLE_CLOUD_PROJECT` and
      `GOOGLE_CLOUD_LOCATION`) with the SDK's retry options set to `max_retries` retries
      (408, 429 and 5xx, exponential backoff). A client you pass keeps its own retry options
      (the SDK's default is no retry).
    - `thinking`: a `GeminiThinking` (a level for Gemini 3, a budget for Gemini 2.5, whether
      thought summaries come back); None: the model's default thinking, with thought summaries
      wherever the model thinks.
    - `foreign_reasoning`: reasoning from another provider or scope: `"drop"` (default) or
      `"text"` (its visible text as plain text).
    - `missing_signature`: a current-turn function call with no signature of this scope (it
      came from another provider or scope): `"skip_validator"` (default) puts the documented
      dummy signature `skip_thought_signature_validator` on the first call of that model
      turn; `"send"` sends it unsigned.
    - `replay_thoughts`: `"signed"` (default) replays the thought parts that carry a signature
      and leaves out unsigned thought summaries; `"all"` replays every thought part.
    - `settings`: default `ModelSettings`, under each request's own.
    - `generation_config`: other `GenerateContentConfig` fields, passed through on every
      request (`top_k`, `seed`, `safety_settings`, `response_mime_type`...).
    - `stream_arguments`: a streamed request asks for the arguments of function calls in
      pieces (`streamFunctionCallArguments`), folded into the same `ToolCallDelta`s (Vertex AI
      and Gemini 3 only: `ConfigurationError` elsewhere).

    Conflicting settings raise `ConfigurationError` here, before anything is sent.

    Per request: `ModelSettings(thinking=...)` becomes a level on Gemini 3 and a budget on
    Gemini 2.5 (`_rules.thinking_for_setting`, with its warnings); images and documents go as
    inline or file data, tool-result media as function response parts (Gemini 3); a native
    `OutputSpec` as `response_json_schema` (Gemini 3: see `profile`).
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: genai.Client | None = None,
        thinking: GeminiThinking | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        missing_signature: MissingSignature = "skip_validator",
        replay_thoughts: ReplayThoughts = "signed",
        max_retries: int = DEFAULT_MAX_RETRIES,
        settings: ModelSettings | None = None,
        generation_config: Mapping[str, Any] | None = None,
        stream_arguments: bool = False,
    ) -> None:
        if thinking is not None and not isinstance(thinking, GeminiThinking):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"thinking must be a GeminiThinking (or None), got {thinking!r}"
            )
        check_missing_signature(missing_signature)
        check_replay_thoughts(replay_thoughts)
        if not isinstance(max_retries, int) or max_retries < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"max_retries must be 0 or more, got {max_retries!r}")
        self._missing_signature: MissingSignature = missing_signature
        self._replay_thoughts: ReplayThoughts = replay_thoughts
        self._generation_config = MappingProxyType(dict(generation_config or {}))
        self._base_config = _base_config(
            thinking_for_model(model_name, thinking), self._generation_config
        )
        if client is None:
            client = _client_from_environment(max_retries)
        super().__init__(
            model_name,
            client=client,
            scope="vertex" if client.vertexai else "gemini",
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._profile = model_profile(model_name, self.scope)
        if stream_arguments:
            version = gemini_version(model_name)
            if not client.vertexai or version is None or version[0] < 3:
                raise ConfigurationError(
                    "stream_arguments (streamFunctionCallArguments) is only available on "
                    f"Vertex AI with Gemini 3 models, not on {model_name} with the "
                    f"{'Vertex AI' if client.vertexai else 'Gemini API'} client"
                )
        self._stream_arguments = stream_arguments

    @property
    def profile(self) -> ModelProfile:
        """What this model takes besides text (`_rules.model_profile`): native structured
        output on Gemini 3; images and documents (by bytes or URL) on both generations, in
        tool results on Gemini 3."""
        return self._profile

    @property
    def stream_arguments(self) -> bool:
        """Whether streamed requests ask for function call arguments in pieces."""
        return self._stream_arguments

    def check_builtin_tools(self, tools: Sequence[BuiltinTool]) -> None:
        """Raise `ConfigurationError` for a built-in tool (or option) Gemini, this platform or
        this model lacks (see `_server_tools`); that Gemini 2.5 cannot combine them with
        function tools is checked per request."""
        _server_tools.check(tools, self.model_name, vertex=self.scope == "vertex", functions=False)

    @property
    def missing_signature(self) -> MissingSignature:
        """What replay does with a current-turn function call that came from elsewhere."""
        return self._missing_signature

    @property
    def replay_thoughts(self) -> ReplayThoughts:
        """Which thought parts of this scope go back: the signed ones, or all."""
        return self._replay_thoughts

    @property
    def generation_config(self) -> Mapping[str, Any]:
        """The other `GenerateContentConfig` fields sent on every request."""
        return self._generation_config

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.aio.models.generate_content(_stream)`: `model`,
        `contents` and `config`. Raises `ConfigurationError` for a tool choice naming no tool
        on offer or a medium the model cannot take, `HistoryError` for a signature that is
        not base64."""
        params = self._prepare(request)[0]
        params["contents"] = self.build_messages(request.messages)
        return params

    def _prepare(
        self, request: ModelRequest, *, stream: bool = False
    ) -> tuple[dict[str, Any], tuple[WarningEvent, ...]]:
        """`build_request`'s arguments, and the warnings of what the request had to adjust
        (the shared thinking knob clamped or kept on)."""
        settings = merge_settings(self.settings, request.settings)
        check_note_tools(request.messages, request.tools, scope=self.scope)
        update: dict[str, Any] = {}
        warnings = _NO_WARNINGS
        if request.instructions:
            update["system_instruction"] = request.instructions
        if request.tools:
            update["tools"] = _tools(request.tools)
        vertex = self.scope == "vertex"
        if request.builtin_tools:
            _server_tools.check(
                request.builtin_tools, self.model_name, vertex=vertex, functions=bool(request.tools)
            )
            builtin = _server_tools.declarations(request.builtin_tools)
            update["tools"] = [*update.get("tools", []), *builtin]
        choice = settings.get("tool_choice")
        tool_config = _tool_config(choice, request.tools) if choice is not None else None
        if request.builtin_tools and not vertex:  # the calls show, and go back in the chain
            tool_config = tool_config or types.ToolConfig()
            tool_config.include_server_side_tool_invocations = True
        if stream and self._stream_arguments and request.tools:
            tool_config = tool_config or types.ToolConfig()
            calling = tool_config.function_calling_config or types.FunctionCallingConfig()
            calling.stream_function_call_arguments = True
            tool_config.function_calling_config = calling
        if tool_config is not None:
            update["tool_config"] = tool_config
        if request.output is not None and request.output.mode == "native":
            update["response_mime_type"] = "application/json"
            update["response_json_schema"] = request.output.schema
        if "thinking" in settings:
            own = self.thinking.include_thoughts if self.thinking is not None else None
            thinking, warnings = thinking_for_setting(
                self.model_name, settings["thinking"], own, scope=self.scope
            )
            update["thinking_config"] = _thinking_config(thinking)
        copy_settings(
            settings,
            update,
            max_tokens="max_output_tokens",
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop_sequences",
        )
        http_options = _http_options(self._base_config.http_options, settings)
        if http_options is not None:
            update["http_options"] = http_options
        config = self._base_config.model_copy(update=update) if update else self._base_config
        params = {"model": self.model_name, "contents": None, "config": config}
        return params, warnings

    def _send(
        self, request: ModelRequest, *, stream: bool = False
    ) -> tuple[Any, dict[str, Any], tuple[WarningEvent, ...]]:
        """`generate_content`'s arguments for `request`, its history handed over as the JSON
        data the SDK would make of it, each content converted once (`_wire`) by the SDK's own
        converters: a placeholder in `contents`, which the SDK converts at no cost, and the
        contents in the per-request `http_options.extra_body`, which the SDK merges into the
        body in their place (ADR 180); the config as its fields, so the SDK does not deep-copy
        the contents with it. The typed `contents` when the SDK's converters cannot be found.
        The contents come from `_replay`, which passes over the messages the conversation's
        last request did not leave final. With them, the client's `aio.models` to call: for
        one call, where the SDK encodes the body, one that writes the contents' JSON from each
        content's, encoded once (`_EncodedBody`)."""
        params, warnings = self._prepare(request, stream=stream)  # its checks come first
        wire = _CONVERT is not None
        contents, noted = self._replay(request.messages, wire)
        note = noted_warning(noted, why=_NO_SYSTEM_ROLE, scope=self.scope)
        if note is not None:
            warnings = (*warnings, note)
        models: Any = self.client.aio.models
        if not wire:
            params["contents"] = [c.model_copy(deep=True) for c in contents]
            return models, params, warnings
        config = cast("types.GenerateContentConfig", params["config"])
        given = config.http_options
        extra = given.extra_body if given is not None else None
        if extra is None:  # the request's extra body replaces the client's
            extra = _client_extra_body(self.client)
        options = given.model_copy() if given is not None else types.HttpOptions()
        options.extra_body = {"contents": contents, **(extra or {})}
        params["contents"] = [_OPENING]
        # Its fields, not the config: the SDK deep-copies a config (the contents in its extra
        # body with it, a walk of the conversation), and builds one from fields as they are.
        fields = {name: getattr(config, name) for name in config.model_fields_set}
        params["config"] = {**fields, "http_options": options}
        return _EncodedBody.models(models, contents), params, warnings

    def build_messages(self, messages: Sequence[Message]) -> list[types.Content]:
        """The `contents` for a history: this scope's parts replayed in order, each signature
        on its part; proofs of other scopes and of another Gemini generation removed
        (`for_scope` with `signatures_carry_over`); the documented dummy signature on the first
        unsigned function call of each current-turn model turn that came from elsewhere;
        images and documents as inline or file data (`ConfigurationError` naming the part
        the model cannot take); system notes as the user's text (`_system_notes`: `contents`
        has no system role); an empty user turn first when the history has none there."""
        return cast("list[types.Content]", self._contents(messages, wire=False))

    def _contents(self, messages: Sequence[Message], *, wire: bool) -> list[Any]:
        """`build_messages`' contents (each a copy), or, with `wire`, the JSON data the SDK
        makes of them. What each message sends is derived once (`_facts`,
        `_sent`) and shared; a conversation's next request resumes after the prefix whose
        contents are final (`_replay`)."""
        contents = self._replay(messages, wire)[0]
        if wire:
            return contents
        return [c.model_copy(deep=True) for c in contents]

    def _replay(self, messages: Sequence[Message], wire: bool) -> tuple[list[Any], tuple[int, ...]]:
        """The contents for `messages` (typed, or with `wire` as JSON data), and the indexes of
        the user messages whose system notes go as text. One pass over the messages the
        conversation's last request did not leave final (`PerPrefix`): a message's contents
        depend on where the current turn starts (a user message's notes, a model message's
        dummy signature) and on the ids of the calls the service gave none (`generated`), so
        the pass keeps its state before the current turn, and starts again from the first
        message when a new message generates an id that a kept result answers."""
        get = self._per_message.get
        kind = (_REPLAY, wire)
        start, kept = self._per_prefix.resume(messages, kind)
        state = cast("_Replayed", kept) if kept is not None else _EMPTY
        facts = [
            get(messages[i], _FACTS, self._facts, messages, i) for i in range(start, len(messages))
        ]
        new_generated = [c for fact in facts for c in fact.generated]
        if start and not state.answered.isdisjoint(new_generated):  # a kept result changes
            start, state = 0, _EMPTY
            facts = [get(m, _FACTS, self._facts, messages, i) for i, m in enumerate(messages)]
            new_generated = [c for fact in facts for c in fact.generated]
        generated = state.generated.union(new_generated) if new_generated else state.generated
        current = running = state.current  # the last message holding a prompt (before `index`)
        for offset, fact in enumerate(facts):
            if fact.prompt:
                current = start + offset
        prompt = current_prompt(messages)  # which notes are shown as text (`notes_as_text`)
        skip_validator = self._missing_signature == "skip_validator"
        contents = list(state.contents)
        noted = list(state.noted)
        seen: list[str] = []  # the ids generated, and the ids answered, from `start` on
        answers: list[str] = []
        last = state.last  # the role of the last content
        final = min(current, prompt)  # everything before it is final for later requests
        kept_at: _Replayed | None = None
        for offset, fact in enumerate(facts):
            index = start + offset
            if index == final and index > start:
                kept_at = _replayed(state, contents, last, seen, answers, running, noted)
            seen.extend(fact.generated)
            if fact.prompt:
                running = index
            message = messages[index]
            if fact.results is not None:  # a user message
                if shown_notes(message, index, prompt):
                    noted.append(index)
                answers.extend(fact.results)
                unsigned = tuple(c for c in fact.results if c in generated) if generated else ()
                variant: object = (unsigned, index < prompt)
            else:
                variant = skip_validator and fact.foreign and index > current
            sent = get(
                message,
                (_WIRE if wire else _CONTENT, variant),
                self._sent,
                messages,
                index,
                fact,
                generated,
                variant,
                prompt,
                wire,
            )
            if sent is None:
                continue
            item, role, joins = sent
            if joins and role == last:
                contents[-1] = _joined(contents[-1], item, wire=wire)
            else:
                contents.append(item)
                last = role
        if kept_at is not None and kept_at.answered.isdisjoint(generated):
            self._per_prefix.keep(messages, final, kind, kept_at)  # else it depends on the rest
        if not contents or _role(contents[0]) != "user":
            contents.insert(0, self._wire(_OPENING) if wire else _OPENING)
        return contents, tuple(noted)

    def _sent(
        self,
        messages: Sequence[Message],
        index: int,
        fact: _Facts,
        generated: set[str],
        variant: object,
        prompt: int,
        wire: bool,
    ) -> tuple[Any, str | None, bool] | None:
        """What `messages[index]` sends (None: nothing): its content (with `wire`, as the SDK's
        JSON data), its role, and whether it may join the content before it (`_mergeable`).
        `variant` is what else it depends on: a user message's results that answer calls the
        service gave no id (`generated`) and whether its turn is over (`prompt`: which of its
        notes are shown as text), whether a model message's first call gets the dummy
        signature."""
        scoped = fact.scoped or messages[index]
        if scoped.role == "user":
            content = self._user_content(notes_as_text(scoped, index, prompt), index, generated)
        else:
            content = _model_content(
                scoped,
                index,
                replay_thoughts=self._replay_thoughts,
                sign_first_call=variant is True,
            )
        if content is None:
            return None
        return (self._wire(content) if wire else content), content.role, _mergeable(content)

    def _facts(self, messages: Sequence[Message], index: int) -> _Facts:
        """What `build_messages` reads of `messages[index]` beside its content: the message as
        the replay policy leaves it, the ids of its function calls that had none from the
        service, the call ids its results answer, whether it came from elsewhere, whether it
        holds a prompt (a user turn's text)."""
        model = self.model_name

        def readable(message: Message) -> bool:
            return signatures_carry_over(message.model, model)

        given = messages[index]
        (message,) = for_scope(
            (given,), self.scope, foreign_reasoning=self.foreign_reasoning, readable=readable
        )
        scoped = message if message is not given else None  # never the key itself: kept weakly
        if message.role == "user":
            return _Facts(
                scoped,
                results=tuple(p.call_id for p in message.parts if isinstance(p, ToolResult)),
                prompt=any(isinstance(p, TextPart) for p in message.parts),
            )
        return _Facts(
            scoped,
            generated=tuple(
                p.id for p in message.parts if isinstance(p, ToolCall) and _is_generated(p)
            ),
            foreign=message.scope != self.scope or not readable(message),
        )

    def _wire(self, content: types.Content) -> dict[str, Any]:
        """A content as the SDK puts it in the request body (`_CONVERT`)."""
        assert _CONVERT is not None
        return _WireContent(_CONVERT(content, vertex=self.scope == "vertex"))

    def _user_content(
        self, message: Message, index: int, generated: set[str]
    ) -> types.Content | None:
        parts: list[types.Part] = []
        for j, part in enumerate(message.parts):
            if isinstance(part, ToolResult):
                media = [self._media(m, index, j, in_result=True) for m in part.media]
                parts.append(
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=None if part.call_id in generated else part.call_id,
                            name=part.name,
                            response={"error" if part.is_error else "output": part.content},
                            parts=[_result_part(m) for m in media] or None,
                        )
                    )
                )
            elif isinstance(part, TextPart) and (part.text or len(message.parts) == 1):
                parts.append(types.Part(text=part.text))  # a lone empty prompt still opens a turn
            elif isinstance(part, Image | Document):
                parts.append(_media_part(self._media(part, index, j, in_result=False)))
        if not parts:
            return None
        return types.Content(role="user", parts=parts)

    def _media(
        self, part: Image | Document, index: int, j: int, *, in_result: bool
    ) -> Image | Document:
        """`part`, once this model is known to take it (else `ConfigurationError` naming the
        message and part): the profile's rules, then the finer ones of `media_problem`."""
        media = self._profile.media
        if in_result and not media.in_tool_results:
            problem: str | None = f"{self.model_name} takes no media in tool results"
        else:
            problem = media.problem(part) or media_problem(
                part, scope=self.scope, in_result=in_result
            )
        if problem is not None:
            raise ConfigurationError(f"messages[{index}].parts[{j}]: {problem}")
        return part

    async def request(self, request: ModelRequest) -> ModelResponse:
        models, params, warnings = self._send(request)
        try:
            response = await models.generate_content(**params)
        except _VENDOR_ERRORS as exc:
            raise self.map_error(exc) from exc
        try:
            parsed = received(self.parse_response(response))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc
        return ModelResponse(parsed.message, warnings) if warnings else parsed

    def parse_response(self, response: types.GenerateContentResponse) -> ModelResponse:
        """The shared form of an SDK response: its first candidate's parts in order, each
        signature on its part, usage and finish reason."""
        response_id = response.response_id
        parts: list[Part] = []
        raw_finish: str | None = None
        candidates = response.candidates
        if candidates:
            candidate = candidates[0]
            raw_finish = _enum_value(candidate.finish_reason)
            last_call: str | None = None
            for part in _content_parts(candidate.content):
                if _server_tools.is_server_part(part):
                    found = _server_tools.server_part(
                        part, generated_call_id(response_id, len(parts)), last_call
                    )
                    last_call = found.id if isinstance(found, ServerToolCall) else last_call
                    parts.append(found)
                    continue
                raw_signature = part.thought_signature
                signature = None if raw_signature is None else encode_signature(raw_signature)
                call = part.function_call
                if call is not None:
                    parts.append(_tool_call(call, signature, response_id, len(parts)))
                    continue
                text = part.text
                if not text and signature is None:
                    continue  # nothing to keep (or a part kind the shared schema has no place for)
                if part.thought:
                    parts.append(ThinkingBlock(text=text or "", signature=signature))
                else:
                    parts.append(TextPart(text=text or "", signature=signature))
        has_calls = any(isinstance(p, ToolCall) for p in parts)
        details = _details(raw_finish, response)
        normalised = self.map_finish_reason(raw_finish, tool_calls=has_calls)
        if normalised is None and not candidates and details is not None:
            normalised = "content_filter"  # the prompt itself was blocked
        grounding = candidates[0].grounding_metadata if candidates else None
        parts = _server_tools.citations(parts, grounding)
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=self.model_name,
                id=response_id,
                usage=_with_uses(_usage(response.usage_metadata), parts, grounding),
                finish_reason=normalised,
                provider_details=details,
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """The request's warnings, then deltas as Gemini streams them with a `PartEnd` as
        each part closes, then the complete `ModelResponse` (its parts as in the non-streamed
        one: see `_Parts`). A stream that breaks or ends without a finish reason raises
        `StreamInterrupted` with what had arrived, unsigned."""
        models, params, warnings = self._send(request, stream=True)
        for warning in warnings:
            yield warning
        parts = _Parts()
        try:
            chunks = await models.generate_content_stream(**params)
            try:  # the SDK sends lazily: the request goes out on the first read
                async for chunk in chunks:
                    for event in parts.chunk(chunk):
                        yield event
            finally:  # left early (or failed): release the connection now, not at collection
                await _close(chunks)
        except _STREAM_ERRORS as exc:
            if isinstance(exc, genai_errors.APIError) or (
                parts.last is None and isinstance(exc, _TRANSPORT_ERRORS)
            ):  # an error the service sent, or a request that got no response at all
                raise self.map_error(exc) from exc
            reason = f"the stream broke before its finish reason: {type(exc).__name__}: {exc}"
            raise interrupted(reason, parts, scope=self.scope, model=self.model_name) from exc
        last, raw_finish = parts.last, parts.raw_finish
        blocked = last is not None and _details(None, last) is not None
        if raw_finish is None and not blocked:
            reason = "the stream ended without a finish reason"
            raise interrupted(reason, parts, scope=self.scope, model=self.model_name)
        for event in parts.close():
            yield event
        normalised = self.map_finish_reason(raw_finish, tool_calls=parts.has_calls)
        message = parts.message(
            scope=self.scope,
            model=self.model_name,
            usage=_usage(parts.usage),
            finish_reason="content_filter" if normalised is None and blocked else normalised,
            id=parts.response_id,
            provider_details=_details(raw_finish, last, parts.candidate),
        )
        grounding = parts.candidate.grounding_metadata if parts.candidate is not None else None
        cited = _server_tools.citations(message.parts, grounding)
        message = message.model_copy(
            update={
                "parts": tuple(cited),
                "usage": _with_uses(message.usage, cited, grounding),
            }
        )
        yield ModelResponse(message, warnings)

    def map_error(self, exc: BaseException) -> BaseException:
        """The thinkagent error for an SDK exception: a `ProviderError` with the service's own
        message, status code and status string (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED`...;
        `invalid_thought_signature` for a refused thought signature, in any of Gemini's
        wordings), retryable for 408, 429 and 5xx; a retryable one for a transport failure the
        SDK lets through (`connection_error`, `timeout`) or a body that is not JSON
        (`malformed_response`). Anything else comes back as it is."""
        if isinstance(exc, genai_errors.APIError):
            status = exc.code if isinstance(exc.code, int) else None  # pyright: ignore[reportUnnecessaryIsInstance]
            message = exc.message if isinstance(exc.message, str) and exc.message else str(exc)
            return ProviderError(
                message,
                scope=self.scope,
                status=status,
                retryable=retryable_status(status, _RETRYABLE_STATUSES),
                error_type=error_type(message, exc.status if isinstance(exc.status, str) else None),
            )
        if isinstance(exc, _TRANSPORT_ERRORS):
            timeout = isinstance(exc, (TimeoutError, httpx2.TimeoutException))
            return connection_error(
                f"{'timeout' if timeout else 'connection error'}: {type(exc).__name__}: {exc}",
                scope=self.scope,
                timeout=timeout,
            )
        if isinstance(exc, _MALFORMED):
            return unreadable(exc, scope=self.scope)
        return exc

    @staticmethod
    def map_finish_reason(raw: str | None, *, tool_calls: bool = False) -> FinishReason | None:
        """The normalised finish reason (`finish_reason` in the rules): `STOP` is `"tool_call"`
        when the message calls tools."""
        return finish_reason(raw, tool_calls=tool_calls)


class _Kind(enum.Enum):
    """The kind of a streamed text part: chunks of the open kind continue the open part."""

    THOUGHT = enum.auto()
    TEXT = enum.auto()


class _Parts(StreamBuilder):
    """A stream's parts, keyed by Gemini's running part position. A text chunk of the kind
    still open continues the part at the current position; a chunk of the other kind, a
    function call (always sent whole) or any chunk after a signature (which closes its part)
    opens the next position. So the streamed message equals the non-streamed one (ADR 14).

    A part ends (`PartEnd`) when it arrives whole (a function call), when a signature closes
    it, when the next position opens, or when the stream finishes (`close`). The chunk
    fields the final message needs (`last`, `usage`, `raw_finish`, `response_id`) are kept
    as they arrive."""

    def __init__(self) -> None:
        super().__init__(json_arguments=True)
        self.response_id: str | None = None  # the ids of calls sent without one derive from it
        self.position = -1
        self.open: _Kind | None = None
        self.pending: int | None = None  # the position opened but not ended yet
        self.has_calls = False
        self.last: types.GenerateContentResponse | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.raw_finish: str | None = None
        self.candidate: types.Candidate | None = None  # the last with grounding metadata
        self.arguments: PartialArguments | None = None  # a call whose arguments stream
        self.last_call: str | None = None  # the id of the last built-in tool call

    def chunk(self, chunk: types.GenerateContentResponse) -> list[ModelStreamEvent]:
        """Fold one streamed response in: the events to yield, in order."""
        self.last = chunk
        self.response_id = chunk.response_id or self.response_id
        if chunk.usage_metadata is not None:
            self.usage = chunk.usage_metadata
        events: list[ModelStreamEvent] = []
        if chunk.candidates:  # else usage or prompt feedback only: read from `last` at the end
            candidate = chunk.candidates[0]
            if candidate.grounding_metadata is not None or candidate.url_context_metadata:
                self.candidate = candidate
            for part in _content_parts(candidate.content):
                self.fold(part, events)
            if candidate.finish_reason is not None:
                self.raw_finish = _enum_value(candidate.finish_reason)
        return events

    def close(self) -> list[ModelStreamEvent]:
        """The end of the part still open when the stream finished."""
        events: list[ModelStreamEvent] = []
        self._end(events)
        return events

    def fold(self, part: types.Part, events: list[ModelStreamEvent]) -> None:
        """Fold one streamed part in, adding its delta (none for a part with nothing to show
        or replay) and the ends of the parts it closes to `events`."""
        raw_signature = part.thought_signature
        signature = None if raw_signature is None else encode_signature(raw_signature)
        call = part.function_call
        if call is not None and (self.arguments is not None or call.will_continue):
            self._streamed_call(call, signature, events)
            return
        if _server_tools.is_server_part(part):
            self._next(events)
            self.open = None
            found = _server_tools.server_part(
                part, generated_call_id(self.response_id, self.position), self.last_call
            )
            if isinstance(found, ServerToolCall):
                self.last_call = found.id
            events.append(self.whole(self.position, found))
            self.pending = None
            return
        if call is not None:
            self._next(events)
            self.open = None
            self.has_calls = True
            delta = self.tool_call(
                self.position,
                id=call.id or generated_call_id(self.response_id, self.position),
                name=call.name or "",
                arguments=json.dumps(call.args) if call.args else "",
                signature=signature,
                details=None if call.id else _GENERATED,
            )
            if delta is not None:
                events.append(delta)
            self._end(events)  # a call arrives whole
            return
        text = part.text
        if not text and signature is None:
            return  # an empty chunk, or a part kind the shared schema has no place for
        kind = _Kind.THOUGHT if part.thought else _Kind.TEXT
        if kind is not self.open:
            self._next(events)
        self.open = None if signature is not None else kind  # a signature closes its part
        if kind is _Kind.THOUGHT:
            delta = self.thinking(self.position, text or "", signature=signature)
        else:
            delta = self.text(self.position, text or "", signature=signature)
        if delta is not None:
            events.append(delta)
        if signature is not None:
            self._end(events)

    def _streamed_call(
        self, call: types.FunctionCall, signature: str | None, events: list[ModelStreamEvent]
    ) -> None:
        """One piece of a call whose arguments stream (`partialArgs`): its head (name,
        signature) opens the call, each argument piece is the next fragment of its JSON, and
        an empty `functionCall` closes it."""
        if self.arguments is None:  # the head
            self._next(events)
            self.open = None
            self.has_calls = True
            self.arguments = PartialArguments()
            delta = self.tool_call(
                self.position,
                id=call.id or generated_call_id(self.response_id, self.position),
                name=call.name or "",
                signature=signature,
                details=None if call.id else _GENERATED,
            )
            if delta is not None:
                events.append(delta)
            return
        fragment = "".join(self.arguments.add(arg) for arg in call.partial_args or ())
        done = not (call.will_continue or call.partial_args or call.name)
        whole: dict[str, Any] | None = None
        if done:
            closing, whole = self.arguments.close()
            fragment += closing
            self.arguments = None
        if fragment:
            delta = self.tool_call(self.position, arguments=fragment)
            if delta is not None:
                events.append(delta)
        if whole is not None:  # pieces out of order: the call holds the rebuilt object
            self.replace_arguments(self.position, json.dumps(whole))
        if done:
            self._end(events)

    def _next(self, events: list[ModelStreamEvent]) -> None:
        """Open the next position, ending the one before."""
        self._end(events)
        self.position += 1
        self.pending = self.position

    def _end(self, events: list[ModelStreamEvent]) -> None:
        if self.pending is not None:
            end = self.end(self.pending)
            if end is not None:
                events.append(end)
            self.pending = None


# --- translation helpers ---------------------------------------------------------------------


def _content_parts(content: types.Content | None) -> Sequence[types.Part]:
    """A candidate's parts; none when it carries a finish reason or safety ratings only."""
    if content is None or content.parts is None:
        return ()
    return content.parts


async def _close(chunks: AsyncIterator[types.GenerateContentResponse]) -> None:
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        await aclose()


def _client_from_environment(max_retries: int) -> genai.Client:
    options = types.HttpOptions(retry_options=types.HttpRetryOptions(attempts=max_retries + 1))
    try:
        return genai.Client(http_options=options)
    except ValueError as exc:
        raise ConfigurationError(
            "no Gemini credentials: set GEMINI_API_KEY or GOOGLE_API_KEY (Gemini API), or "
            "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION "
            "(Vertex AI), or pass client=genai.Client(...)"
        ) from exc


def _base_config(
    thinking: GeminiThinking, generation_config: Mapping[str, Any]
) -> types.GenerateContentConfig:
    reserved = sorted(_RESERVED.intersection(generation_config))
    if reserved:
        raise ConfigurationError(
            f"generation_config may not set {', '.join(reserved)}: thinking is configured with "
            "thinking=GeminiThinking(...), instructions and tools come with each request, and "
            "the agent loop runs the tools (automatic function calling stays off)"
        )
    fields: dict[str, Any] = {
        **generation_config,
        "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
    }
    thinking_config = thinking.to_param()
    if thinking_config is not None:
        fields["thinking_config"] = types.ThinkingConfig(**thinking_config)
    try:
        return types.GenerateContentConfig(**fields)
    except ValidationError as exc:
        raise ConfigurationError(f"invalid generation_config: {exc}") from exc


def _http_options(
    base: types.HttpOptions | None, settings: ModelSettings
) -> types.HttpOptions | None:
    """Per-request HTTP options (the SDK patches them over the client's): timeout in
    milliseconds, extra headers, extra body fields."""
    if (
        "timeout" not in settings
        and "extra_headers" not in settings
        and "extra_body" not in settings
    ):
        return None
    options = base.model_copy() if base is not None else types.HttpOptions()
    if "timeout" in settings:
        options.timeout = round(settings["timeout"] * 1000)
    if "extra_headers" in settings:
        options.headers = {**(options.headers or {}), **settings["extra_headers"]}
    if "extra_body" in settings:
        options.extra_body = {**(options.extra_body or {}), **settings["extra_body"]}
    return options


def _tools(tools: Sequence[ToolDefinition]) -> list[types.Tool]:
    """The request's tools as function declarations, with their JSON schemas as they are."""
    declarations = [
        types.FunctionDeclaration(
            name=tool.name,
            description=tool.description,
            parameters_json_schema=tool.parameters,
        )
        for tool in tools
    ]
    return [types.Tool(function_declarations=declarations)]


def _tool_config(choice: str, tools: Sequence[ToolDefinition]) -> types.ToolConfig:
    if choice == "auto":
        mode, allowed = types.FunctionCallingConfigMode.AUTO, None
    elif choice == "none":
        mode, allowed = types.FunctionCallingConfigMode.NONE, None
    elif choice == "required":
        mode, allowed = types.FunctionCallingConfigMode.ANY, None
    else:
        tool_choice_name(choice, tools)  # raises for a name no tool on offer has
        mode, allowed = types.FunctionCallingConfigMode.ANY, [choice]
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=mode, allowed_function_names=allowed
        )
    )


def _is_generated(call: ToolCall) -> bool:
    details = call.provider_details
    return details is not None and details.get(GENERATED_ID) is True


def _mergeable(content: types.Content) -> bool:
    """A content may join the one before it (same role) only when none of its parts is
    signed: a signature stays in the model turn it came in."""
    return all(part.thought_signature is None for part in content.parts or ())


def _media_part(part: Image | Document) -> types.Part:
    """An image or document as inline data (its bytes) or file data (its URL)."""
    if part.data is not None:
        return types.Part(inline_data=types.Blob(data=part.data, mime_type=part.media_type))
    return types.Part(file_data=types.FileData(file_uri=part.url, mime_type=media_type(part)))


def _result_part(part: Image | Document) -> types.FunctionResponsePart:
    """A tool result's image or document, nested in its function response (Gemini 3)."""
    if part.data is not None:
        blob = types.FunctionResponseBlob(data=part.data, mime_type=part.media_type)
        return types.FunctionResponsePart(inline_data=blob)
    uri = types.FunctionResponseFileData(file_uri=part.url, mime_type=media_type(part))
    return types.FunctionResponsePart(file_data=uri)


def _thinking_config(thinking: GeminiThinking) -> types.ThinkingConfig:
    return types.ThinkingConfig(**(thinking.to_param() or {}))


def _model_content(
    message: Message, index: int, *, replay_thoughts: ReplayThoughts, sign_first_call: bool
) -> types.Content | None:
    """A model turn's parts in order, each signature on its part. `sign_first_call` puts the
    dummy signature on the turn's first function call when that call has none."""
    parts: list[types.Part] = []
    first_call = True
    for j, part in enumerate(message.parts):
        if isinstance(part, ThinkingBlock):
            if part.redacted is not None:
                continue
            if part.signature is not None:
                parts.append(
                    types.Part(
                        text=part.text,
                        thought=True,
                        thought_signature=_signature_bytes(part.signature, index, j),
                    )
                )
            elif replay_thoughts == "all" and part.text:
                parts.append(types.Part(text=part.text, thought=True))
        elif isinstance(part, TextPart):
            if part.signature is not None:
                parts.append(
                    types.Part(
                        text=part.text,
                        thought_signature=_signature_bytes(part.signature, index, j),
                    )
                )
            elif part.text:
                parts.append(types.Part(text=part.text))
        elif isinstance(part, ServerToolCall | ServerToolResult):
            replayed = _server_tools.replay_part(part)
            if replayed is not None:
                parts.append(replayed)
        elif isinstance(part, ToolCall):
            if part.signature is not None and isinstance(part.arguments, dict):
                signature: bytes | None = _signature_bytes(part.signature, index, j)
            elif part.signature is not None:  # arguments kept as text: the proof cannot fit
                signature = SKIP_SIGNATURE  # what is sent (an empty object)
            else:
                signature = SKIP_SIGNATURE if sign_first_call and first_call else None
            first_call = False
            parts.append(
                types.Part(
                    function_call=types.FunctionCall(
                        id=None if _is_generated(part) else part.id,
                        name=part.name,
                        args=arguments_object(part),
                    ),
                    thought_signature=signature,
                )
            )
    if not parts:
        return None
    return types.Content(role="model", parts=parts)


def _signature_bytes(signature: str, message_index: int, part_index: int) -> bytes:
    try:
        return decode_signature(signature)
    except ValueError as exc:
        raise HistoryError(str(exc), message_index=message_index, part_index=part_index) from None


def _tool_call(
    call: types.FunctionCall, signature: str | None, response_id: str | None, index: int
) -> ToolCall:
    return ToolCall(
        id=call.id or generated_call_id(response_id, index),
        name=call.name or "",
        arguments=tool_arguments(call.args or {}),
        signature=signature,
        provider_details=None if call.id else _GENERATED,
    )


def _enum_value(value: object) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _details(
    raw_finish: str | None,
    response: types.GenerateContentResponse | None,
    candidate: types.Candidate | None = None,
) -> ProviderDetails | None:
    """The finish reason, a blocked prompt's reason, and the candidate's grounding and URL
    context metadata (`candidate`, else the response's first)."""
    details: ProviderDetails = {}
    if raw_finish is not None:
        details["finish_reason"] = raw_finish
    feedback = response.prompt_feedback if response is not None else None
    if feedback is not None and feedback.block_reason is not None:
        details["block_reason"] = _enum_value(feedback.block_reason)
    if candidate is None and response is not None and response.candidates:
        candidate = response.candidates[0]
    details.update(_server_tools.metadata_details(candidate))
    return details or None


def _with_uses(
    usage: Usage | None, parts: Sequence[Part], grounding: types.GroundingMetadata | None
) -> Usage | None:
    """`usage` with the built-in tool uses the response records."""
    uses = _server_tools.uses(parts, grounding)
    if not uses:
        return usage
    return (usage or Usage()).model_copy(update={"server_tool_uses": uses})


def _usage(metadata: types.GenerateContentResponseUsageMetadata | None) -> Usage | None:
    """`promptTokenCount` (which already counts cached tokens) plus tool-use prompt tokens in;
    candidates plus thoughts out; thoughts as thinking; cached content as cache reads."""
    if metadata is None:
        return None
    thoughts = metadata.thoughts_token_count or 0
    return Usage(
        input_tokens=(metadata.prompt_token_count or 0)
        + (metadata.tool_use_prompt_token_count or 0),
        output_tokens=(metadata.candidates_token_count or 0) + thoughts,
        thinking_tokens=thoughts,
        cache_read_tokens=metadata.cached_content_token_count or 0,
    )


_FACTS = "gemini-facts"
_REPLAY = "gemini-replay"
_CONTENT = "gemini-content"
_WIRE = "gemini-wire"


@dataclass(frozen=True, slots=True)
class _Facts:
    """What `GeminiModel._contents` reads of one message beside its content (`_facts`): the
    message as the replay policy leaves it (None: as it is; never the message itself, which
    is kept weakly), the ids of its generated calls and of the calls its results answer,
    whether it came from elsewhere, whether it holds a prompt."""

    scoped: Message | None
    generated: tuple[str, ...] = ()
    results: tuple[str, ...] | None = None  # a user message's (None: an assistant message)
    foreign: bool = False
    prompt: bool = False


def _role(content: Any) -> str | None:
    """A content's role, typed or as JSON data."""
    return cast("str | None", content["role"] if isinstance(content, dict) else content.role)


def _joined(first: Any, second: Any, *, wire: bool) -> Any:
    """Two contents of one role as one, parts in order (typed, or as the SDK's JSON data)."""
    if wire:
        return _WireContent(first, parts=[*first.get("parts", ()), *second.get("parts", ())])
    return types.Content(role=first.role, parts=[*(first.parts or ()), *(second.parts or ())])


def _converter() -> Callable[..., dict[str, Any]] | None:
    """How the SDK turns a `Content` into its part of the request body, for the Gemini API
    and for Vertex AI: its own converters, then its conversion to JSON data (bytes as
    URL-safe base64), as `generate_content` applies them to each content; None when this SDK
    has other names for them (its typed `contents` are sent then)."""
    models = importlib.import_module("google.genai.models")
    common = importlib.import_module("google.genai._common")
    to_mldev = getattr(models, "_Content_to_mldev", None)
    to_vertex = getattr(models, "_Content_to_vertex", None)
    to_dict = getattr(common, "convert_to_dict", None)
    encode = getattr(common, "encode_unserializable_types", None)
    if not (to_mldev and to_vertex and to_dict and encode):  # pragma: no cover - another SDK
        return None

    def convert(content: types.Content, *, vertex: bool) -> dict[str, Any]:
        converted = (to_vertex if vertex else to_mldev)(content, None, None)
        return cast("dict[str, Any]", encode(to_dict(converted)))

    return convert


_CONVERT = _converter()


class _WireContent(SharedDict):
    """A content as the SDK puts it in the request body, with its JSON as the SDK writes it
    (`json.dumps`, ASCII, as bytes): derived once, like the content (`_EncodedBody`)."""

    __slots__ = ("text",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.text = json.dumps(self).encode()


class _EncodedBody:
    """The client's API client for one `generate_content(_stream)` call, whose request body,
    which the SDK encodes as `json.dumps` does when the request is built (`_build_request`),
    is written with its `contents`, when they are the call's, from each content's JSON,
    encoded once (`_WireContent`), instead of encoded again (ADR 180). Everything else,
    the body's other members, the transport, authentication, retries, errors and the reading
    of the response, is the SDK's: the methods that build a request run on this object (so
    they build it here), and every other attribute is the client's own."""

    def __init__(self, api: Any, contents: list[_WireContent]) -> None:
        self._api, self._contents = api, contents

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    def _build_request(self, *args: Any, **kwargs: Any) -> Any:
        request = self._api._build_request(*args, **kwargs)
        data = request.data
        if (
            isinstance(data, dict)
            and cast("dict[str, Any]", data).get("contents") is self._contents
        ):
            # as `json.dumps(data).encode()` writes it (ASCII), joined once as bytes
            pieces: list[bytes] = []
            for key, value in cast("dict[str, Any]", data).items():
                pieces += (b", " if pieces else b"{", json.dumps(key).encode(), b": ")
                if key == "contents":
                    pieces += (b"[", b", ".join(map(_TEXT, self._contents)), b"]")
                else:
                    pieces.append(json.dumps(value).encode())
            request.data = b"".join((*pieces, b"}")) if pieces else b"{}"
        return request

    @staticmethod
    def models(models: Any, contents: list[_WireContent]) -> Any:
        """`models` (the client's `aio.models`) for one call sending `contents` from their
        JSON; `models` itself when its API client is not the SDK's this knows."""
        api = getattr(models, "_api_client", None)
        if _ENCODED_METHODS is None or type(api) is not _ENCODED_METHODS[0]:
            return models
        own = copy(models)
        own._api_client = _EncodedBody(api, contents)
        return own


def _encoded_methods() -> tuple[type, ...] | None:
    """The SDK's API client class, with the methods `_EncodedBody` runs as its own (they call
    `_build_request`); None when this SDK has other names for them."""
    try:
        from google.genai._api_client import BaseApiClient
    except ImportError:  # pragma: no cover - another SDK
        return None
    names = ("async_request", "async_request_streamed", "_build_request")
    if not all(callable(getattr(BaseApiClient, n, None)) for n in names):
        return None  # pragma: no cover - another SDK
    _EncodedBody.async_request = BaseApiClient.async_request  # type: ignore[attr-defined]
    _EncodedBody.async_request_streamed = BaseApiClient.async_request_streamed  # type: ignore[attr-defined]
    return (BaseApiClient,)


_ENCODED_METHODS = _encoded_methods()


_TEXT = attrgetter("text")


def _client_extra_body(client: genai.Client) -> dict[str, Any] | None:
    """The client's own `http_options.extra_body` (a request's replaces it)."""
    options = getattr(getattr(client, "_api_client", None), "_http_options", None)
    extra = getattr(options, "extra_body", None)
    return cast("dict[str, Any] | None", extra) if isinstance(extra, dict) else None


@dataclass(frozen=True, slots=True)
class _Replayed:
    """What `GeminiModel._replay` found in a history's first messages, all final for the
    conversation's later requests: their contents (typed, or JSON data) and the role of the
    last, the ids of the calls the service gave none, the ids their results answer that are
    not among those (a later message generating one changes a kept content), the last
    message holding a prompt, the user messages whose notes go as text. No message: they are
    named by index."""

    contents: tuple[Any, ...] = ()
    last: str | None = None
    generated: frozenset[str] = frozenset()
    answered: frozenset[str] = frozenset()
    current: int = -1
    noted: tuple[int, ...] = ()


_EMPTY = _Replayed()


def _replayed(
    state: _Replayed,
    contents: list[Any],
    last: str | None,
    generated: list[str],
    answers: list[str],
    current: int,
    noted: list[int],
) -> _Replayed:
    """`state` carried over the messages `_replay` passed since: their contents so far,
    the ids generated and answered in them."""
    ids = state.generated.union(generated) if generated else state.generated
    fresh = [c for c in answers if c not in ids]
    return _Replayed(
        tuple(contents),
        last,
        ids,
        state.answered.union(fresh) if fresh else state.answered,
        current,
        tuple(noted),
    )
