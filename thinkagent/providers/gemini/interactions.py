"""`GeminiInteractionsModel`: Gemini through the Interactions API (`client.interactions` of the
official `google-genai` SDK), where a conversation is a timeline of typed steps.

```python
from thinkagent import Agent
from thinkagent.providers.gemini import GeminiInteractionsModel, GeminiThinking

model = GeminiInteractionsModel("gemini-3-pro-preview", thinking=GeminiThinking(level="high"))
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

An interaction's output steps become one assistant `Message`, step for step and in order: a
`thought` step -> `ThinkingBlock` (its summary texts joined as the text, its `signature` as
the signature, exactly as received), a `model_output` step -> one `TextPart` (its text blocks
joined), a `function_call` step -> `ToolCall`; a step of a server-side tool stays whole as an
`OpaqueBlock`. On later turns the steps of this scope (`"gemini-interactions"`, or
`"vertex-interactions"` on a Vertex AI client: the Interactions API's signatures are not
documented as valid on `generateContent`, nor the other way round) go back in place, each
signature on its thought step, byte for byte; proofs of other scopes, or of another Gemini
generation, are never sent.

Stateless by default: every request carries the whole history with `store: false`. With
`stateful=True` the interactions are stored and each request sends only what follows the last
interaction of this scope in the history, linked by `previous_interaction_id`. A stream folds
`step.start` / `step.delta` / `step.stop` into a `StreamBuilder` keyed by step, so the streamed
message equals the parsed one. See `docs/providers/gemini.md`.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

import httpx2
from google import genai
from google.genai import errors as genai_errors
from google.genai import interactions as ix
from google.genai import types
from google.genai._interactions import (
    APIConnectionError,
    APIError,
    APIResponseValidationError,
    APITimeoutError,
)
from pydantic import BaseModel, JsonValue

from ...errors import ConfigurationError, HistoryError, ProviderError
from ...history import ForeignReasoning, for_scope
from ...messages import (
    Document,
    FinishReason,
    Image,
    Message,
    OpaqueBlock,
    Part,
    ProviderDetails,
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
    JsonPieces,
    arguments_object,
    connection_error,
    copy_settings,
    detached,
    interrupted,
    json_array,
    merge_settings,
    received,
    refuse_builtin_tools,
    request_options,
    retryable_status,
    tool_arguments,
    tool_choice_name,
    unreadable,
)
from .._system_notes import (
    check_note_tools,
    current_prompt,
    notes_as_text,
    notes_as_text_warning,
)
from ..base import (
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
    ToolDefinition,
)
from ._interactions_client import SDK_JSON, SDK_KNOWN, request_body, resource
from ._rules import (
    SKIP_SIGNATURE,
    GeminiThinking,
    MissingSignature,
    check_missing_signature,
    decode_signature,
    encode_signature,
    error_type,
    interaction_finish_reason,
    interactions_fields,
    interactions_thinking_for_setting,
    media_problem,
    media_type,
    model_profile,
    signatures_carry_over,
    thinking_for_model,
)

__all__ = ["GeminiInteractionsModel"]

DEFAULT_MAX_RETRIES = 2
"""Retries (after the first attempt) of a client `GeminiInteractionsModel` builds itself."""

_RESERVED = frozenset({"thinking_level", "thinking_summaries", "tool_choice"})
_SKIP = encode_signature(SKIP_SIGNATURE)
"""The documented dummy signature, in the base64 form the signature field carries."""
_NO_WARNINGS: tuple[WarningEvent, ...] = ()
_USER_STEPS = frozenset({"user_input", "function_result"})
_NO_SYSTEM_STEP = "the Interactions API has no system step"
_TRANSPORT_ERRORS = (httpx2.TransportError, TimeoutError)
_VENDOR_ERRORS = (APIError, genai_errors.ContinuationInterruptedError, *_TRANSPORT_ERRORS)
"""What `map_error` maps."""
_BREAKS = (APIConnectionError, genai_errors.ContinuationInterruptedError, *_TRANSPORT_ERRORS)
"""What cuts a stream that had begun: it ends as `StreamInterrupted`."""
_RETRYABLE_EVENT_CODES = frozenset(
    {"resource_exhausted", "unavailable", "internal", "deadline_exceeded", "aborted"}
)
_CONTINUING = "requires_continuation"
"""The status of a hop the SDK continues by itself (automatic continuation)."""


class GeminiInteractionsModel(AdapterBase[genai.Client, GeminiThinking]):
    """A Gemini model behind the Interactions API, through `google.genai.Client`.

    - `client`: your `genai.Client` (its credentials, base URL, timeout and retry options
      apply; the scope is `"vertex-interactions"` for a Vertex AI client, else
      `"gemini-interactions"`). When omitted one is built from the environment as for
      `GeminiModel`, with `max_retries` retries (the SDK retries 408, 409, 429 and 5xx).
    - `thinking`: a `GeminiThinking`: `level` becomes `thinking_level`, `include_thoughts`
      `thinking_summaries` (`auto` or `none`; on wherever the model thinks when None). The
      Interactions API takes no thinking budget: `budget` raises `ConfigurationError`.
    - `stateful`: False (default) sends the whole history on every request, with
      `store: false`: nothing is kept by Google. True stores each interaction and sends only
      what follows the last interaction of this scope in the history, with its id as
      `previous_interaction_id` (the whole history when there is none yet).
    - `foreign_reasoning`: reasoning from another provider or scope: `"drop"` (default) or
      `"text"`.
    - `missing_signature`: a current-turn function call that came from elsewhere, with no
      signed thought before it: `"skip_validator"` (default) puts a thought step with the
      documented dummy signature before the first call of that model turn; `"send"` sends
      it without.
    - `settings`: default `ModelSettings`, under each request's own.
    - `generation_config`: other `generation_config` fields sent on every request
      (`seed`, `temperature`...).

    Conflicting settings raise `ConfigurationError` here, before anything is sent.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: genai.Client | None = None,
        thinking: GeminiThinking | None = None,
        stateful: bool = False,
        foreign_reasoning: ForeignReasoning = "drop",
        missing_signature: MissingSignature = "skip_validator",
        max_retries: int = DEFAULT_MAX_RETRIES,
        settings: ModelSettings | None = None,
        generation_config: Mapping[str, Any] | None = None,
    ) -> None:
        if thinking is not None and not isinstance(thinking, GeminiThinking):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"thinking must be a GeminiThinking (or None), got {thinking!r}"
            )
        if thinking is not None and thinking.budget is not None:
            raise ConfigurationError(
                "the Interactions API takes no thinking budget: give a level "
                "(GeminiThinking(level=...)) or leave the model's default thinking"
            )
        if not isinstance(stateful, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"stateful must be True or False, got {stateful!r}")
        check_missing_signature(missing_signature)
        if not isinstance(max_retries, int) or max_retries < 0:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(f"max_retries must be 0 or more, got {max_retries!r}")
        reserved = sorted(_RESERVED.intersection(generation_config or {}))
        if reserved:
            raise ConfigurationError(
                f"generation_config may not set {', '.join(reserved)}: thinking is configured "
                "with thinking=GeminiThinking(...), the tool choice with each request's settings"
            )
        self._stateful = stateful
        self._missing_signature: MissingSignature = missing_signature
        self._generation_config = MappingProxyType(dict(generation_config or {}))
        self._thinking_fields = interactions_fields(thinking_for_model(model_name, thinking))
        if client is None:
            client = _client_from_environment(max_retries)
        vertex = bool(client.vertexai)
        super().__init__(
            model_name,
            client=client,
            scope="vertex-interactions" if vertex else "gemini-interactions",
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
        )
        self._platform = "vertex" if vertex else "gemini"
        self._profile = model_profile(model_name, self._platform)
        self._wire_opening: tuple[dict[str, Any], str] | None = None

    @property
    def profile(self) -> ModelProfile:
        """What this model takes besides text: as `GeminiModel` on the same platform."""
        return self._profile

    @property
    def stateful(self) -> bool:
        """Whether interactions are stored and chained with `previous_interaction_id`."""
        return self._stateful

    @property
    def missing_signature(self) -> MissingSignature:
        """What replay does with a current-turn function call that came from elsewhere."""
        return self._missing_signature

    @property
    def generation_config(self) -> Mapping[str, Any]:
        """The other `generation_config` fields sent on every request."""
        return self._generation_config

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.aio.interactions.create`: `model`, `input` (the
        steps), `store`, and what the request has (`system_instruction`, `tools`,
        `generation_config`, `response_format`, `previous_interaction_id`, the SDK's
        per-call options). Raises `ConfigurationError` for a tool choice naming no tool on
        offer or a medium the model cannot take, `HistoryError` for a signature that is not
        base64."""
        return self._typed(self._prepare(request)[0])

    def _typed(self, params: dict[str, Any]) -> dict[str, Any]:
        """`_prepare`'s arguments with the steps as they are (detached copies)."""
        messages, start = params["input"]
        params["input"] = detached(self._steps(messages, start))
        return params

    def _untransformed(self, params: dict[str, Any]) -> tuple[dict[str, Any], JsonPieces | None]:
        """`_prepare`'s arguments with the steps handed over as the SDK would write them, each
        message's marshalled once (`_wire_steps`): an empty `input`, which the SDK validates
        and writes at no cost, and the steps in `extra_body`, which the SDK merges into the
        body it wrote, in their place (ADR 180); and the steps' JSON text. The typed steps
        (and None) when the SDK's marshalling cannot be found."""
        if not SDK_KNOWN:  # pragma: no cover - another SDK
            return self._typed(params), None
        messages, start = params["input"]
        steps, text = self._encoded_steps(messages, start, wire=True)
        extra = params.get("extra_body")
        params["input"] = []
        params["extra_body"] = {"input": steps, **extra} if extra else {"input": steps}
        return params, text

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], tuple[WarningEvent, ...]]:
        refuse_builtin_tools(request.builtin_tools, "the Interactions API", " (use GeminiModel)")
        check_note_tools(request.messages, request.tools, scope=self.scope)
        settings = merge_settings(self.settings, request.settings)
        warnings = _NO_WARNINGS
        generation: dict[str, Any] = {**self._generation_config, **self._thinking_fields}
        if "thinking" in settings:
            own = self.thinking.include_thoughts if self.thinking is not None else None
            thinking, warnings = interactions_thinking_for_setting(
                self.model_name, settings["thinking"], own, scope=self.scope
            )
            generation.pop("thinking_level", None)
            generation.update(interactions_fields(thinking))
        copy_settings(
            settings,
            generation,
            max_tokens="max_output_tokens",
            temperature="temperature",
            top_p="top_p",
            stop_sequences="stop_sequences",
        )
        choice = settings.get("tool_choice")
        if choice is not None:
            generation["tool_choice"] = _tool_choice(choice, request.tools)
        messages = request.messages
        params: dict[str, Any] = {"model": self.model_name}
        link = self._link(messages) if self._stateful else None
        if link is not None:
            previous_id, start = link
            params["previous_interaction_id"] = previous_id
            params["input"] = (messages, start)  # the steps: `_typed` or `_untransformed`
        else:
            params["input"] = (messages, 0)
        params["store"] = self._stateful
        if request.instructions:
            params["system_instruction"] = request.instructions
        if request.tools:
            params["tools"] = [_function(tool) for tool in request.tools]
        if generation:
            params["generation_config"] = generation
        if request.output is not None and request.output.mode == "native":
            params["response_format"] = {
                "type": "text",
                "mime_type": "application/json",
                "schema": request.output.schema,
            }
        request_options(params, settings, {}, {})
        note = notes_as_text_warning(messages, why=_NO_SYSTEM_STEP, scope=self.scope)
        return params, warnings if note is None else (*warnings, note)

    def _link(self, messages: Sequence[Message]) -> tuple[str, int] | None:
        """The stored interaction a stateful request continues: the id of the last message of
        this scope that has one, and the index after it (None when there is none, nothing
        follows it, or it holds a turn-scoped note whose turn is over: the stored steps would
        show it again, so the whole history goes without it)."""
        for i in range(len(messages) - 1, -1, -1):
            message = messages[i]
            if message.role == "assistant" and message.scope == self.scope and message.id:
                if i + 1 == len(messages) or _cleared_note(messages, i):
                    return None
                return message.id, i + 1
        return None

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `input` steps for a whole history: this scope's steps replayed in place, each
        signature on its thought step; proofs of other scopes and of another Gemini
        generation removed (`for_scope` with `signatures_carry_over`); a thought step with the
        documented dummy signature before the first function call of each current-turn model
        turn that came from elsewhere; images and documents as content blocks
        (`ConfigurationError` naming the part the model cannot take); system notes as the
        user's text (`_system_notes`: there is no system step); an empty user input first
        when the history has none there."""
        return detached(self._steps(messages, 0))

    def _steps(
        self, messages: Sequence[Message], start: int, *, wire: bool = False
    ) -> list[dict[str, Any]]:
        """The steps of `messages[start:]`, the rules of `build_messages` applied to the whole
        history (so the current turn and the indexes in errors are the history's); with
        `wire`, as the SDK writes them into the body (`_marshal`)."""
        return self._encoded_steps(messages, start, wire=wire)[0]

    def _encoded_steps(
        self, messages: Sequence[Message], start: int, *, wire: bool
    ) -> tuple[list[dict[str, Any]], JsonPieces]:
        """`_steps`, and with `wire` their JSON text as the SDK writes the list (else "").

        What each message sends is derived once (`_facts`, `_message_steps`) and shared, and
        what a pass found before the current turn is kept for the conversation's next
        request (`_Pass`, `PerPrefix`), which passes over the messages after it only."""
        kind = (_PASS, wire)
        n, kept = self._per_prefix.resume(messages, kind)
        done = cast("_Pass", kept) if n else _EMPTY_PASS
        get = self._per_message.get
        end = len(messages)
        facts = [get(messages[i], _FACTS, self._facts, messages, i) for i in range(n, end)]
        current = _last_prompt(facts, n, end, done.current)
        prompt = current_prompt(messages)  # which notes are shown as text (`notes_as_text`)
        skip_validator = self._missing_signature == "skip_validator"
        sent: list[tuple[list[dict[str, Any]], str]] = []
        for index in range(n, end):
            fact = facts[index - n]
            dummy = skip_validator and fact.foreign and index > current
            step_kind = (_WIRE if wire else _STEPS, dummy, index < prompt)
            message = fact.scoped or messages[index]
            sent.append(
                get(
                    messages[index],
                    step_kind,
                    self._message_steps,
                    message,
                    index,
                    dummy,
                    prompt,
                    wire,
                )
            )
        every = (*done.messages, *sent)
        final = min(current, prompt)  # before it, what each message sends is settled
        if final > n:
            settled = sent[: final - n]
            state = _Pass(
                _last_prompt(facts, n, final, done.current),
                every[:final],
                (*done.steps, *(step for message_steps, _ in settled for step in message_steps)),
                (*done.texts, *(text for _, text in settled if text)),
            )
            self._per_prefix.keep(messages, final, kind, state)
        if start == 0:  # the whole history: the steps and texts of its prefix kept flat
            steps = [*done.steps, *(step for message_steps, _ in sent for step in message_steps)]
            texts = [*done.texts, *(text for _, text in sent if text)]
        else:
            steps = [step for message_steps, _ in every[start:] for step in message_steps]
            texts = [text for _, text in every[start:] if text]
        if start == 0 and (not steps or steps[0]["type"] not in _USER_STEPS):
            opening, text = self._opening(wire)
            steps.insert(0, opening)
            texts.insert(0, text)
        return steps, json_array(texts) if wire else ()

    def _opening(self, wire: bool) -> tuple[dict[str, Any], str]:
        """The empty user input that opens a history starting with no user step (as the SDK
        writes it, and its JSON, with `wire`)."""
        opening = {"type": "user_input", "content": [{"type": "text", "text": ""}]}
        if not wire:
            return opening, ""
        if self._wire_opening is None:
            steps, text = self._wire_steps([opening])
            self._wire_opening = steps[0], text
        return self._wire_opening

    def _facts(self, messages: Sequence[Message], index: int) -> _Facts:
        """What `_steps` reads of `messages[index]` beside its steps: the message as the replay
        policy leaves it, whether it came from elsewhere, whether it holds a prompt (a user
        turn's text: the model turns after the last one form the current turn)."""
        model = self.model_name
        given = messages[index]
        (message,) = for_scope(
            (given,),
            self.scope,
            foreign_reasoning=self.foreign_reasoning,
            readable=lambda m: signatures_carry_over(m.model, model),
        )
        scoped = message if message is not given else None  # never the key itself: kept weakly
        if message.role == "user":
            return _Facts(scoped, prompt=any(isinstance(p, TextPart) for p in message.parts))
        foreign = message.scope != self.scope or not signatures_carry_over(message.model, model)
        return _Facts(scoped, foreign=foreign)

    def _message_steps(
        self, message: Message, index: int, dummy_thought: bool, prompt: int, wire: bool
    ) -> tuple[list[dict[str, Any]], str]:
        """One message's steps (as the replay policy leaves it: `_user_steps`, its notes
        shown as text as of `prompt`; `_model_steps`), or their wire form and its JSON text
        (the list's items, "" for none)."""
        if message.role == "user":
            steps = self._user_steps(notes_as_text(message, index, prompt), index)
        else:
            steps = _model_steps(message, index, dummy_thought=dummy_thought)
        return self._wire_steps(steps) if wire and steps else (steps, "")

    def _wire_steps(self, steps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
        """`steps` as the SDK writes them into the request body (its own models' field order
        and values, by its own validation and serialization: `request_body`), and their
        JSON text as items of the body's list (`json.dumps`, as the SDK writes the body)."""
        marshalled = request_body(self.model_name, steps)
        assert marshalled is not None
        return marshalled, ",".join(map(SDK_JSON.encode, marshalled))

    def _user_steps(self, message: Message, index: int) -> list[dict[str, Any]]:
        """A user message: its prompt as one `user_input` step, its tool results as
        `function_result` steps, in the message's order."""
        steps: list[dict[str, Any]] = []
        content: list[dict[str, Any]] = []

        def flush() -> None:
            if content:
                steps.append({"type": "user_input", "content": list(content)})
                content.clear()

        for j, part in enumerate(message.parts):
            if isinstance(part, ToolResult):
                flush()
                steps.append(self._result_step(part, index, j))
            elif isinstance(part, TextPart) and (part.text or len(message.parts) == 1):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, Image | Document):
                content.append(_media_block(self._media(part, index, j, in_result=False)))
        flush()
        return steps

    def _result_step(self, part: ToolResult, index: int, j: int) -> dict[str, Any]:
        result: Any
        if part.media:
            media = [self._media(m, index, j, in_result=True) for m in part.media]
            result = [{"type": "text", "text": part.content_text()}, *map(_media_block, media)]
        elif isinstance(part.content, str | dict):
            result = part.content
        else:
            result = part.content_text()
        step: dict[str, Any] = {
            "type": "function_result",
            "call_id": part.call_id,
            "name": part.name,
            "result": result,
        }
        if part.is_error:
            step["is_error"] = True
        return step

    def _media(
        self, part: Image | Document, index: int, j: int, *, in_result: bool
    ) -> Image | Document:
        """`part`, once this model is known to take it (else `ConfigurationError` naming the
        message and part)."""
        media = self._profile.media
        if in_result and not media.in_tool_results:
            problem: str | None = f"{self.model_name} takes no media in tool results"
        else:
            problem = media.problem(part) or media_problem(
                part, scope=self._platform, in_result=in_result
            )
        if problem is not None:
            raise ConfigurationError(f"messages[{index}].parts[{j}]: {problem}")
        return part

    async def request(self, request: ModelRequest) -> ModelResponse:
        params, warnings = self._prepare(request)
        params, text = self._untransformed(params)
        try:
            interaction = await self._create(params, text)
        except _VENDOR_ERRORS as exc:
            raise self.map_error(exc) from exc
        try:
            parsed = received(self.parse_response(cast("ix.Interaction", interaction)))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc
        return ModelResponse(parsed.message, warnings) if warnings else parsed

    async def _create(self, params: dict[str, Any], text: JsonPieces | None) -> object:
        """`client.aio.interactions.create(**params)`, by the client's own resource reading and
        writing without a model built per call, the steps in the extra body written as `text`
        (`_interactions_client`), when it is the SDK's."""
        interactions = resource(self.client)
        if interactions is None:
            return await self.client.aio.interactions.create(**params)  # pyright: ignore[reportUnknownMemberType]
        if text is not None:
            interactions = interactions.encoded("input", params["extra_body"]["input"], text)
        return await interactions.create(**params)

    def parse_response(self, response: ix.Interaction) -> ModelResponse:
        """The shared form of an interaction: its output steps as parts in order (echoed
        input steps skipped), the id (stored interactions only), usage and finish reason.
        A failed interaction raises `ProviderError` with the service's error."""
        status = _text(response.status)
        if status == "failed":
            raise _failed(response, self.scope)
        parts = [p for p in map(_step_part, _steps_of(response)) if p is not None]
        has_calls = any(isinstance(p, ToolCall) for p in parts)
        return ModelResponse(
            Message(
                role="assistant",
                parts=tuple(parts),
                scope=self.scope,
                model=self.model_name,
                id=response.id or None,
                usage=_usage(_plain(response.usage)),
                finish_reason=self.map_finish_reason(status, tool_calls=has_calls),
                provider_details=_details(status),
            )
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """The request's warnings, then deltas as the steps stream with a `PartEnd` as each
        step stops, then the complete `ModelResponse` (its parts as in the non-streamed one:
        see `_Steps`). A stream that breaks, or ends before `interaction.completed`, raises
        `StreamInterrupted` with what had arrived, unsigned; an `error` event raises
        `ProviderError`."""
        params, warnings = self._prepare(request)
        params, text = self._untransformed(params)
        for warning in warnings:
            yield warning
        steps = _Steps(self.scope)
        try:
            events = await self._create({**params, "stream": True}, text)
            try:
                async for event in cast("AsyncIterator[object]", events):
                    for out in steps.fold(event):
                        yield out
            finally:  # left early (or failed): release the connection now
                await _close(events)
        except _VENDOR_ERRORS as exc:
            if not steps.started or not isinstance(exc, _BREAKS):
                raise self.map_error(exc) from exc
            reason = f"the stream broke before it completed: {type(exc).__name__}: {exc}"
            raise interrupted(reason, steps, scope=self.scope, model=self.model_name) from exc
        except UNREADABLE as exc:
            reason = f"a stream event could not be read: {type(exc).__name__}: {exc}"
            raise interrupted(reason, steps, scope=self.scope, model=self.model_name) from exc
        if steps.status is None:
            reason = "the stream ended before interaction.completed"
            raise interrupted(reason, steps, scope=self.scope, model=self.model_name)
        if steps.status == "failed":
            raise ProviderError("the interaction failed", scope=self.scope, error_type="failed")
        message = steps.message(
            scope=self.scope,
            model=self.model_name,
            usage=steps.usage,
            finish_reason=self.map_finish_reason(steps.status, tool_calls=steps.has_calls),
            id=steps.interaction_id,
            provider_details=_details(steps.status),
        )
        yield ModelResponse(message, warnings)

    def map_error(self, exc: BaseException) -> BaseException:
        """The thinkagent error for an SDK exception: a `ProviderError` with the service's own
        message, status code and status string (`invalid_thought_signature` for a refused
        thought signature), retryable for 408, 409, 429 and 5xx (the statuses the SDK
        retries); a retryable one for a request that got no response (`connection_error`,
        `timeout`), a body that is not the documented shape (`malformed_response`) or an
        automatic continuation cut after progress (`continuation_interrupted`). Anything else
        comes back as it is."""
        if isinstance(exc, APIResponseValidationError):
            return unreadable(exc, scope=self.scope)
        if isinstance(exc, (APIConnectionError, *_TRANSPORT_ERRORS)):
            timeout = isinstance(exc, (APITimeoutError, TimeoutError, httpx2.TimeoutException))
            return connection_error(
                f"{'timeout' if timeout else 'connection error'}: {type(exc).__name__}: {exc}",
                scope=self.scope,
                timeout=timeout,
            )
        if isinstance(exc, APIError):
            status = exc.status_code
            error = _error_body(exc.body)
            message = error.get("message")
            message = message if isinstance(message, str) and message else str(exc)
            name = error.get("status")
            return ProviderError(
                message,
                scope=self.scope,
                status=status,
                retryable=retryable_status(status),
                error_type=error_type(message, name if isinstance(name, str) else None),
            )
        if isinstance(exc, genai_errors.ContinuationInterruptedError):
            return ProviderError(
                str(exc),
                scope=self.scope,
                retryable=True,
                error_type="continuation_interrupted",
            )
        return exc

    @staticmethod
    def map_finish_reason(raw: str | None, *, tool_calls: bool = False) -> FinishReason | None:
        """The normalised finish reason of an interaction's status
        (`interaction_finish_reason` in the rules)."""
        return interaction_finish_reason(raw, tool_calls=tool_calls)


class _Steps(StreamBuilder):
    """A stream's parts, keyed by (hop, step index): the SDK's automatic continuation joins
    the events of several interactions, each counting its steps from 0. A thought opens its
    part with its first summary text or signature, a text step with its first text, a
    function call at its start (arguments then arrive as JSON pieces); a step of a
    server-side tool is kept whole as it folds. `step.stop` ends the part. The events of the
    schema before May 2026 (`content.start` / `content.delta` / `content.stop`,
    `interaction.complete`), which the SDK hands over unparsed, fold the same way."""

    def __init__(self, scope: str) -> None:
        super().__init__(json_arguments=True)
        self.scope = scope
        self.hop = 0
        self.raw: dict[Hashable, dict[str, JsonValue]] = {}
        self.argued: set[Hashable] = set()  # calls whose arguments came whole
        self.started = False
        self.status: str | None = None
        self.interaction_id: str | None = None
        self.usage: Usage | None = None
        self.has_calls = False

    def fold(self, event: object) -> list[ModelStreamEvent]:
        """Fold one SDK event in: the events to yield, in order."""
        self.started = True
        if not isinstance(event, BaseModel):
            raise ValueError(f"not a stream event: {event!r:.80}")
        data = _plain(event)
        kind = _text(data.get("event_type"))
        index = data.get("index")
        key = (self.hop, index if isinstance(index, int) else -1)
        if kind == "step.start":
            return self._start(key, _mapping(data.get("step")) or {})
        if kind == "content.start":
            return self._start(key, _legacy_step(_mapping(data.get("content")) or {}))
        if kind in ("step.delta", "content.delta"):
            return self._delta(key, _mapping(data.get("delta")) or {})
        if kind in ("step.stop", "content.stop"):
            end = self.end(key)
            return [end] if end is not None else []
        if kind in ("interaction.completed", "interaction.complete"):
            self._completed(_mapping(data.get("interaction")) or {})
        elif kind == "error":
            raise _event_error(_mapping(data.get("error")) or {}, self.scope)
        return []

    def _start(self, key: Hashable, step: dict[str, JsonValue]) -> list[ModelStreamEvent]:
        kind = _text(step.get("type")) or ""
        if kind in _USER_STEPS:
            return []
        if kind == "thought":
            delta = None
            text, signature = _summary_text(step.get("summary")), _text(step.get("signature"))
            if text or signature:
                delta = self.thinking(key, text, signature=signature or None)
        elif kind == "model_output":
            text = _content_text(step.get("content"))
            delta = self.text(key, text) if text else None
        elif kind == "function_call":
            self.has_calls = True
            arguments = step.get("arguments")
            if arguments:
                self.argued.add(key)
            delta = self.tool_call(
                key,
                id=_text(step.get("id")) or "",
                name=_text(step.get("name")) or "",
                arguments=json.dumps(arguments) if arguments else "",
                signature=_text(step.get("signature")) or None,
            )
        else:
            self.raw[key] = step
            self.opaque(key, step)
            return []
        return [delta] if delta is not None else []

    def _delta(self, key: Hashable, delta: dict[str, JsonValue]) -> list[ModelStreamEvent]:
        kind = _text(delta.get("type"))
        out: ModelStreamEvent | None = None
        if kind == "text":
            text = _text(delta.get("text"))
            out = self.text(key, text) if text else None
        elif kind == "thought_summary":
            text = _summary_text([delta.get("content")])
            out = self.thinking(key, text) if text else None
        elif kind == "thought_signature":
            signature = _text(delta.get("signature"))
            out = self.thinking(key, signature=signature) if signature else None
        elif kind == "arguments_delta":
            out = self.tool_call(key, arguments=_text(delta.get("arguments")) or "")
        elif kind == "function_call":  # the earlier schema: the whole call in one delta
            return self._start(key, delta if key not in self.argued else {**delta, "arguments": {}})
        elif key in self.raw:  # a server-side tool's step: its delta carries its fields
            self.raw[key] = {**self.raw[key], **{k: v for k, v in delta.items() if k != "type"}}
            self.opaque(key, self.raw[key])
        return [out] if out is not None else []

    def _completed(self, data: dict[str, JsonValue]) -> None:
        status = _text(data.get("status"))
        usage = _usage(_mapping(data.get("usage")))
        if usage is not None:
            self.usage = usage if self.usage is None else self.usage + usage
        self.interaction_id = _text(data.get("id")) or self.interaction_id
        if status == _CONTINUING:  # the SDK sends the next hop's events next
            self.hop += 1
        else:
            self.status = status or "completed"


# --- translation helpers ---------------------------------------------------------------------


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


async def _close(events: object) -> None:
    close = getattr(events, "close", None)
    if close is not None:
        await close()


def _function(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    }


def _tool_choice(choice: str, tools: Sequence[ToolDefinition]) -> str | dict[str, Any]:
    if choice in ("auto", "none"):
        return choice
    if choice == "required":
        return "any"
    tool_choice_name(choice, tools)  # raises for a name no tool on offer has
    return {"allowed_tools": {"mode": "any", "tools": [choice]}}


def _cleared_note(messages: Sequence[Message], end: int) -> bool:
    """Whether `messages[:end]` holds a turn-scoped note whose turn is over."""
    prompt = current_prompt(messages)
    return any(
        note.clear_at == "next_user_message"
        for message in messages[: min(end, prompt)]
        if message.role == "user"
        for note in message.notes
    )


def _model_steps(message: Message, index: int, *, dummy_thought: bool) -> list[dict[str, Any]]:
    """A model turn's steps in order: signed thoughts, text as `model_output`, calls, kept
    provider steps. `dummy_thought` puts a thought step with the dummy signature before the
    first call when no signed thought comes before it."""
    steps: list[dict[str, Any]] = []
    texts: list[str] = []
    signed = False
    unfit = _proofs_of_other_steps(message.parts)

    def flush() -> None:
        if texts:
            content = [{"type": "text", "text": text} for text in texts]
            steps.append({"type": "model_output", "content": content})
            texts.clear()

    for j, part in enumerate(message.parts):
        if isinstance(part, ThinkingBlock):
            if part.signature is None:
                continue  # a thought step goes back for its signature; text alone is not one
            flush()
            signed = True
            steps.append(
                {"type": "thought", "signature": _SKIP} if j in unfit else _thought(part, index, j)
            )
        elif isinstance(part, TextPart):
            if part.text:
                texts.append(part.text)
        elif isinstance(part, ToolCall):
            flush()
            if dummy_thought and not signed:
                steps.append({"type": "thought", "signature": _SKIP})
                signed = True
            step: dict[str, Any] = {
                "type": "function_call",
                "id": part.id,
                "name": part.name,
                "arguments": arguments_object(part),
            }
            if part.signature is not None:  # arguments kept as text: the proof cannot fit
                step["signature"] = part.signature if isinstance(part.arguments, dict) else _SKIP
            steps.append(step)
        elif isinstance(part, OpaqueBlock):
            flush()
            steps.append(dict(part.data))
    flush()
    return steps


def _proofs_of_other_steps(parts: Sequence[Part]) -> set[int]:
    """The thoughts whose signature seals steps that cannot go back as they came: a call whose
    arguments were kept as text (sent as an empty object), or text holding U+FFFD (what a lone
    surrogate was mended to on receipt). They go back with the documented dummy instead."""
    unfit: set[int] = set()
    thought: int | None = None
    for j, part in enumerate(parts):
        if isinstance(part, ThinkingBlock):
            thought = j
        elif thought is not None and (
            (isinstance(part, ToolCall) and not isinstance(part.arguments, dict))
            or (isinstance(part, TextPart) and "\ufffd" in part.text)
        ):
            unfit.add(thought)
    return unfit


def _thought(block: ThinkingBlock, index: int, j: int) -> dict[str, Any]:
    signature = cast("str", block.signature)
    try:
        decode_signature(signature)
    except ValueError as exc:
        raise HistoryError(str(exc), message_index=index, part_index=j) from None
    step: dict[str, Any] = {"type": "thought", "signature": signature}
    if block.text:
        step["summary"] = [{"type": "text", "text": block.text}]
    return step


def _media_block(part: Image | Document) -> dict[str, Any]:
    """An image or document as a content block: its bytes (base64) or its URL."""
    block: dict[str, Any] = {"type": part.kind}
    if part.data is not None:
        block["data"] = base64.b64encode(part.data).decode("ascii")
    else:
        block["uri"] = part.url
    kind = media_type(part)
    if kind is not None:
        block["mime_type"] = kind
    return block


def _plain(value: object) -> dict[str, JsonValue]:
    """An SDK object (or the dict the SDK leaves when a body does not validate) as JSON
    data, by its wire names; a step the SDK does not know keeps its raw payload."""
    if getattr(value, "is_unknown", False) is True:  # a step or event the SDK does not know
        value = getattr(value, "raw", None)
    if isinstance(value, BaseModel):
        return cast(
            "dict[str, JsonValue]",
            value.model_dump(mode="json", by_alias=True, exclude_none=True, warnings=False),
        )
    if isinstance(value, Mapping):
        return dict(cast("Mapping[str, JsonValue]", value))
    if value is None:
        return {}
    raise ValueError(f"expected an object, got {value!r:.80}")


def _steps_of(response: ix.Interaction) -> list[dict[str, JsonValue]]:
    """An interaction's steps; from a response of the schema before May 2026, its `outputs`
    (content blocks and thoughts) read as steps."""
    if response.steps is None and response.model_extra:
        outputs = response.model_extra.get("outputs")
        if isinstance(outputs, list):
            return [_legacy_step(_plain(item)) for item in cast("list[object]", outputs)]
    return _plain_steps(response.steps)


def _legacy_step(block: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """An output of the schema before May 2026 as a step: a text or image block is a
    `model_output` step of its own; thoughts and calls had the steps' fields already."""
    if block.get("type") in ("text", "image"):
        return {"type": "model_output", "content": [block]}
    return block


def _plain_steps(steps: object) -> list[dict[str, JsonValue]]:
    if steps is None:
        return []
    if not isinstance(steps, list):
        raise ValueError(f"steps must be a list, got {steps!r:.80}")
    return [_plain(step) for step in cast("list[object]", steps)]


def _mapping(value: JsonValue | None) -> dict[str, JsonValue] | None:
    return cast("dict[str, JsonValue]", value) if isinstance(value, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _summary_text(summary: JsonValue | None) -> str:
    """A thought summary's text: its text blocks joined (images have no place in it)."""
    if not isinstance(summary, list):
        return ""
    blocks = (_mapping(item) for item in summary)
    return "".join(_text(b.get("text")) or "" for b in blocks if b is not None)


def _content_text(content: JsonValue | None) -> str:
    return _summary_text(content)


def _step_part(step: dict[str, JsonValue]) -> Part | None:
    """One output step as a part (None for an echoed input step or an empty one)."""
    kind = _text(step.get("type"))
    if kind in _USER_STEPS:
        return None
    if kind == "thought":
        text, signature = _summary_text(step.get("summary")), _text(step.get("signature"))
        if not text and not signature:
            return None
        return ThinkingBlock(text=text, signature=signature or None)
    if kind == "model_output":
        text = _content_text(step.get("content"))
        return TextPart(text=text) if text else None
    if kind == "function_call":
        arguments = step.get("arguments")
        return ToolCall(
            id=_text(step.get("id")) or "",
            name=_text(step.get("name")) or "",
            arguments=tool_arguments(arguments) if arguments is not None else {},
            signature=_text(step.get("signature")) or None,
        )
    return OpaqueBlock.of(step)


def _details(status: str | None) -> ProviderDetails | None:
    return {"status": status} if status is not None else None


def _usage(usage: Mapping[str, JsonValue] | None) -> Usage | None:
    """Input with tool-use prompt tokens; output with thought tokens (the service counts
    them apart); thoughts as thinking; the cached prompt as cache reads."""
    if not usage:
        return None

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and value > 0 else 0

    thoughts = count("total_thought_tokens")
    return Usage(
        input_tokens=count("total_input_tokens") + count("total_tool_use_tokens"),
        output_tokens=count("total_output_tokens") + thoughts,
        thinking_tokens=thoughts,
        cache_read_tokens=count("total_cached_tokens"),
    )


def _error_body(body: object) -> Mapping[str, object]:
    """The `error` object of an error body (`{"error": {"code", "message", "status"}}`)."""
    if isinstance(body, Mapping):
        error = cast("Mapping[str, object]", body).get("error")
        if isinstance(error, Mapping):
            return cast("Mapping[str, object]", error)
    return {}


def _event_error(error: Mapping[str, JsonValue], scope: str) -> ProviderError:
    """An `error` event of a stream: its message, and its code as the error type."""
    code = _text(error.get("code"))
    message = _text(error.get("message")) or "the stream reported an error"
    return ProviderError(
        message,
        scope=scope,
        retryable=code in _RETRYABLE_EVENT_CODES,
        error_type=error_type(message, code),
    )


def _failed(response: ix.Interaction, scope: str) -> ProviderError:
    errors = [_plain(e) for e in response.errors or ()]
    messages = [m for e in errors if (m := _text(e.get("message")))]
    message = "; ".join(messages) or "the interaction failed"
    return ProviderError(message, scope=scope, error_type="failed")


_FACTS = "interactions-facts"
_PASS = "interactions-pass"
_STEPS = "interactions-steps"
_WIRE = "interactions-wire"


@dataclass(frozen=True, slots=True)
class _Facts:
    """What `GeminiInteractionsModel._steps` reads of one message beside its steps: the message
    as the replay policy leaves it (None: as it is; never the message itself, which is kept
    weakly), whether it came from elsewhere, whether it holds a prompt."""

    scoped: Message | None
    foreign: bool = False
    prompt: bool = False


@dataclass(frozen=True, slots=True)
class _Pass:
    """What `GeminiInteractionsModel._encoded_steps` found in a history's first messages, all
    before its current turn: the last of them holding a prompt (-1: none), and what each sends
    (its steps and their JSON text), by index (never a message: `PerPrefix`)."""

    current: int
    messages: tuple[tuple[list[dict[str, Any]], str], ...]
    steps: tuple[dict[str, Any], ...]  # theirs, in order
    texts: tuple[str, ...]  # their steps' JSON texts, in order


_EMPTY_PASS = _Pass(-1, (), (), ())


def _last_prompt(facts: Sequence[_Facts], first: int, end: int, before: int) -> int:
    """The index of the last message of `first..end-1` holding a prompt (`facts` starting at
    `first`), else `before`."""
    return next((i for i in range(end - 1, first - 1, -1) if facts[i - first].prompt), before)
