"""`OpenAIResponsesModel`: OpenAI reasoning models through the Responses API (`openai` SDK).

```python
from thinkagent import Agent
from thinkagent.providers.openai import OpenAIResponsesModel, OpenAIThinking

model = OpenAIResponsesModel("gpt-5", thinking=OpenAIThinking(effort="medium", summary="auto"))
result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
```

The output items become one assistant `Message`, in output order: each `reasoning` item a
`ThinkingBlock` (its `rs_` id in `id`, its summary texts joined by a blank line in `text`, its
`encrypted_content` as the `signature`, the summary parts themselves in `provider_details`),
each `function_call` a `ToolCall` (arguments exactly as received), each text part of a
`message` a `TextPart`. Requests default to `store=False` with
`include=["reasoning.encrypted_content"]`, so every reasoning item can go back in full: on later
turns each is replayed byte for byte immediately before the item that followed it, and never
without it.

A stream folds its events into a `StreamBuilder`: each item is a part keyed by its output index
(a message's text parts by output and content index), and what only `response.output_item.done`
carries (a reasoning item's `encrypted_content` as its signature, its summary parts, the ids that
tie an item to the reasoning before it) is folded in there, so the streamed message equals the
parsed one. The other events make no part: the `.done` events and annotation events repeat what
the finished items carry, and progress events (`in_progress`, built-in tools') have nothing to
show. See `docs/providers/openai.md`.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import openai
from openai.resources.responses import AsyncResponses
from openai.types.responses import (
    Response,
    ResponseContentPartAddedEvent,
    ResponseErrorEvent,
    ResponseFailedEvent,
    ResponseOutputItem,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputRefusal,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningSummaryPartAddedEvent,
    ResponseReasoningTextDeltaEvent,
    ResponseStreamEvent,
    ResponseUsage,
)
from pydantic import JsonValue

from ...builtin_tools import BuiltinTool
from ...errors import ConfigurationError, HistoryError, ProviderError
from ...history import ForeignReasoning, HistoryProcessor, for_scope
from ...messages import (
    Citation,
    Document,
    FinishReason,
    Image,
    Message,
    OpaqueBlock,
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
from ...stream import StreamBuilder, ThinkingDelta, ToolCallDelta, WarningEvent
from .._common import (
    COMPACT,
    UNREADABLE,
    JsonPieces,
    arguments_json,
    check_prompt_cache,
    copy_settings,
    detached,
    endpoint_host,
    json_array,
    merge_settings,
    received,
    request_options,
    unreadable,
)
from .._system_notes import check_note_tools, current_prompt, is_prompt, shown_notes
from ..base import (
    MediaSupport,
    ModelProfile,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ModelStreamEvent,
)
from . import _server_tools
from ._thinking import default_context, reasons, responses_effort
from ._wire import (
    SDK_ERRORS,
    STREAM_BREAKS,
    OpenAIAdapter,
    OpenAIThinking,
    add_hint,
    client_from_environment,
    data_url,
    file_name,
    redact,
    send_json,
    set_tool_choice,
    strict_schema,
    user_items,
)

__all__ = [
    "AZURE_RESPONSES_SCOPE",
    "LOCAL_RESPONSES_SCOPE",
    "MANTLE_SCOPE",
    "RESPONSES_SCOPE",
    "BedrockMantleModel",
    "OpenAIResponsesModel",
    "responses_scope",
    "without_reasoning",
]

RESPONSES_SCOPE = "openai-responses"
"""The scope of messages from OpenAI's Responses API (its encrypted reasoning is valid only
there)."""

AZURE_RESPONSES_SCOPE = "azure-responses"
"""The scope of messages from an Azure OpenAI Responses deployment."""

LOCAL_RESPONSES_SCOPE = "openai-responses@localhost"
"""The scope of messages from a Responses server on this machine (any port)."""

MANTLE_SCOPE = "bedrock-mantle"
"""The scope of messages from Bedrock Mantle, the Responses API Bedrock runs (its reasoning is
issued by Bedrock), as `bedrock-mantle@<region>`."""

_AZURE_HOSTS = (".openai.azure.com", ".cognitiveservices.azure.com")
_MANTLE_HOST = re.compile(r"^bedrock-mantle\.([a-z0-9-]+)\.api\.aws$")
_UNREADABLE_ITEM = re.compile(
    r"(?:for item|Item with id) '?((?:rs|cmp|msg|fc)_[A-Za-z0-9_\-]+|[^\s']+)'?"
)

_DEFAULT_THINKING = OpenAIThinking(summary="auto")
"""Without a thinking config: the model's default effort, with summaries to show."""
_NONE = OpenAIThinking()

_MB = 1024 * 1024
_PROFILE = ModelProfile(
    native_output=True,
    media=MediaSupport(
        frozenset(
            {
                "image/png",
                "image/jpeg",
                "image/gif",
                "image/webp",
                "application/pdf",
                "text/*",
                "application/json",
                "application/vnd.openxmlformats-officedocument.*",
            }
        ),
        urls=True,
        max_bytes=20 * _MB,
        in_tool_results=True,
    ),
)
"""Images and files by bytes or URL (20 MB each, the images' limit), also in tool results
(developers.openai.com/api/docs/guides/images-vision, .../file-inputs)."""

_SEPARATOR = "\n\n"
"""How the summary parts of one reasoning item are joined into its block's text."""

_FINISH: Mapping[str, FinishReason] = {
    "completed": "stop",
    "max_output_tokens": "length",
    "content_filter": "content_filter",
    "failed": "error",
}


def responses_scope(client: object) -> str:
    """The scope of a Responses client's messages, from where it sends them.

    `"openai-responses"` for api.openai.com, `"azure-responses"` for an `AsyncAzureOpenAI`
    client or an Azure OpenAI host (`*.openai.azure.com`, `*.cognitiveservices.azure.com`, as
    used with a plain client on Azure's `/openai/v1/` path), `"openai-responses@localhost"` for
    any server on this machine (`localhost`, `127.*`, `::1`, whatever its port: a local server,
    the emulator, whose ports change from run to run), `"bedrock-mantle@<region>"` for Bedrock
    Mantle (`bedrock-mantle.<region>.api.aws`), and `"openai-responses@<host>"` (with the
    port when it is not the scheme's default) for any other endpoint: a gateway, another
    vendor's Responses API. Encrypted reasoning from one of these is never replayed to another;
    give `scope=` to tell two local servers apart.
    """
    if isinstance(client, openai.AsyncAzureOpenAI):
        return AZURE_RESPONSES_SCOPE
    base_url = getattr(client, "base_url", None)
    if base_url is None:
        return RESPONSES_SCOPE
    host = endpoint_host(base_url)
    if host == "api.openai.com":
        return RESPONSES_SCOPE
    if host.split(":")[0].endswith(_AZURE_HOSTS):
        return AZURE_RESPONSES_SCOPE
    mantle = _MANTLE_HOST.match(host)
    if mantle is not None:
        return f"{MANTLE_SCOPE}@{mantle.group(1)}"
    return f"{RESPONSES_SCOPE}@{host}"


class OpenAIResponsesModel(OpenAIAdapter):
    """An OpenAI reasoning model behind the Responses API, through `openai.AsyncOpenAI` (or
    `openai.AsyncAzureOpenAI`).

    - `client`: your client; built from the environment (`OPENAI_API_KEY`...) when omitted.
    - `thinking`: an `OpenAIThinking`, sent as `reasoning` (`to_param()`: effort, summary,
      context, mode). Omitted: the model's default effort with `summary="auto"`, so thinking
      blocks carry visible text.
    - `store`: `False` by default: nothing is kept server-side, every reasoning item comes back
      with its `encrypted_content` and is replayed in full.
    - `compact_threshold`: turn on server-side compaction (`context_management` with this
      `compact_threshold`): past that many input tokens the service compacts the conversation
      into an encrypted `compaction` item, kept as an `OpaqueBlock`; what came before the
      latest one is no longer sent.
    - `scope`: the provider scope of this model's messages (its reasoning and compaction items
      are only replayed there); by default from the client (`responses_scope`):
      `"openai-responses"` on api.openai.com, `"azure-responses"` on Azure OpenAI,
      `"bedrock-mantle@<region>"` on Bedrock Mantle, `"openai-responses@<host[:port]>"` on any
      other endpoint.
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
        thinking: OpenAIThinking | None = None,
        store: bool = False,
        compact_threshold: int | None = None,
        scope: str | None = None,
        foreign_reasoning: ForeignReasoning = "drop",
        settings: ModelSettings | None = None,
        extra_body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> None:
        if client is None:
            client = client_from_environment()
        if isinstance(thinking, OpenAIThinking):
            extra = [
                name
                for name in ("enabled", "format", "split", "preserve", "budget_tokens")
                if getattr(thinking, name) is not None
            ]
            if extra:
                raise ConfigurationError(
                    f"the Responses API has no switch for OpenAIThinking.{extra[0]}: set "
                    "effort, summary, context or mode, or use OpenAIChatModel with the "
                    "endpoint's dialect"
                )
        threshold = cast("object", compact_threshold)
        if threshold is not None and (
            not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1
        ):
            raise ConfigurationError(
                f"compact_threshold must be a positive int or None, got {threshold!r}"
            )
        super().__init__(
            model_name,
            client=client,
            scope=scope or responses_scope(client),
            thinking=thinking,
            foreign_reasoning=foreign_reasoning,
            settings=settings,
            extra_body=extra_body,
            extra_headers=extra_headers,
        )
        self._store = store
        self._compact_threshold = compact_threshold
        self._profile = _PROFILE if reasons(model_name) else replace(_PROFILE, reasoning=False)

    @property
    def store(self) -> bool:
        """Whether the service keeps responses (`store`); False: reasoning travels encrypted."""
        return self._store

    @property
    def compact_threshold(self) -> int | None:
        """The input tokens past which the service compacts the conversation (None: never)."""
        return self._compact_threshold

    @property
    def profile(self) -> ModelProfile:
        """Images (`input_image`) and files (`input_file`: PDFs, text and office documents) by
        bytes or URL, also in tool results; a JSON-schema `text.format` together with tools and
        reasoning; `reasoning` false for the models that do not reason (`gpt-4.1`...)."""
        return self._profile

    def check_builtin_tools(self, tools: Sequence[BuiltinTool]) -> None:
        """Raise `ConfigurationError` for a built-in tool (or option) the Responses API or this
        model lacks (see `_server_tools`)."""
        effort = self.thinking.effort if self.thinking is not None else None
        _server_tools.check(tools, self.model_name, effort)

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments for `client.responses.create` (without `stream`).

        Raises `ConfigurationError` for a `tool_choice` naming no tool on offer, for
        `stop_sequences` (the Responses API has none), for media it does not take and for a
        built-in tool it does not have.
        """
        return detached(self._prepare(request)[0])

    def _prepare(self, request: ModelRequest) -> tuple[dict[str, Any], tuple[WarningEvent, ...]]:
        """The request's keyword arguments and the warnings for what had to be adjusted."""
        params, warnings, _ = self._prepared(request)
        return params, warnings

    def _prepared(
        self, request: ModelRequest
    ) -> tuple[dict[str, Any], tuple[WarningEvent, ...], JsonPieces]:
        """The request's keyword arguments (the items shared: never to be changed), the
        warnings for what had to be adjusted, and the JSON text of the items."""
        settings = merge_settings(self.settings, request.settings)
        check_note_tools(request.messages, request.tools, scope=self.scope)
        items, warnings, text = self._input(request.messages)
        params: dict[str, Any] = {
            "model": self.model_name,
            "input": items,
            "store": self._store,
            "include": ["reasoning.encrypted_content"],
        }
        if request.instructions:
            params["instructions"] = request.instructions
        # No summary asked by default of a model that does not reason: it has none to give.
        thinking = self.thinking or (_DEFAULT_THINKING if self._profile.reasoning else _NONE)
        effort, effort_warnings = responses_effort(
            self.model_name, thinking, settings.get("thinking"), scope=self.scope
        )
        warnings += effort_warnings
        reasoning = {k: v for k, v in thinking.to_param().items() if k != "effort"}
        if effort is not None:
            reasoning = {"effort": effort, **reasoning}
        if reasoning:
            params["reasoning"] = reasoning
        if self._compact_threshold is not None:
            params["context_management"] = [
                {"type": "compaction", "compact_threshold": self._compact_threshold}
            ]
        if request.tools:
            deferred = _server_tools.deferred(request.builtin_tools)
            params["tools"] = [
                {
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "strict": False,
                    **({"defer_loading": True} if tool.name in deferred else {}),
                }
                for tool in request.tools
            ]
            set_tool_choice(params, settings, request.tools, _named_tool_choice)
        if request.builtin_tools:
            hosted, include = _server_tools.declarations(
                request.builtin_tools, self.model_name, effort
            )
            params["tools"] = [*params.get("tools", []), *hosted]
            params["include"] = [*params["include"], *include]
        output = request.output
        if output is not None and output.mode == "native":
            text_format: dict[str, Any] = {
                "type": "json_schema",
                "name": output.name,
                "schema": output.schema,
                "strict": strict_schema(output.schema),
            }
            if output.description:
                text_format["description"] = output.description
            params["text"] = {"format": text_format}
        if "prompt_cache" in settings:  # caching is the service's own: nothing to send
            check_prompt_cache(settings["prompt_cache"])
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
            prompt_cache_key="prompt_cache_key",
        )
        request_options(params, settings, self._extra_body, self._extra_headers)
        return params, tuple(warnings), text

    def build_messages(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """The `input` items for a history, with this scope's reasoning replayed.

        - User turns: their tool results as `function_call_output` items (with their images
          and files as `input_image`/`input_file` parts), then their text, images and files as
          a `user` message, then their system notes as `developer` messages (`_system_notes`
          says which are shown).
        - This scope's assistant turns, item by item in their original order: reasoning items
          as they came (`id`, `summary`, `encrypted_content`, and `content` when it came),
          function calls with their `fc_` id and exact arguments, text as output messages with
          their `msg_` id and `phase`, compaction items (and the rest of a compacted window)
          exactly as they came. A reasoning item goes back only immediately before the item
          that followed it: when that item is not sent, neither is the reasoning; a reasoning
          item goes back when it can be read there: with its `encrypted_content`, by its id
          with `store=True`, or, unsigned, with its reasoning text as it came (DeepSeek's and
          LM Studio's `reasoning_text` items). One that cannot (no `encrypted_content` with
          `store=False`, nothing to read) is left out, and the item after it goes back without
          its id, so the service never looks for the missing reasoning.
        - Nothing before this scope's latest compaction item: it carries what came before
          (developers.openai.com/api/docs/guides/compaction). A compacted window from
          `compact()` goes back whole (the user messages it kept, then its compaction item).
        - Built-in tools' items (`web_search_call`, `mcp_call`...) exactly as they came, in
          their place; the decision on an approval request as an `mcp_approval_response`.
        - Other scopes' turns: text as assistant messages and function calls without item ids;
          their reasoning, compaction and built-in tools' items are dropped (or their reasoning
          sent as text with `foreign_reasoning="text"`).
        """
        return detached(self._input(messages)[0])

    def _input(
        self, messages: Sequence[Message]
    ) -> tuple[list[dict[str, Any]], list[WarningEvent], JsonPieces]:
        """The `input` items for a history, and the warnings for what was left out of them: other
        scopes' reasoning and compaction items, and, when the model sees every earlier turn's
        reasoning (`reasoning.context` `all_turns`), this scope's reasoning items that are no
        longer in the history (a history processor removed them); and the items' JSON text.
        Each message's items and their JSON are derived once (`_sent`); the items are shared,
        never to be changed."""
        get = self._per_message.get
        n = len(messages)
        begin, kept = self._per_prefix.resume(messages, _PREFIX)
        if begin and (begin == n or not is_prompt(messages[begin])):
            begin, kept = 0, None  # a branch: the kept prefix's last turn goes on
        sent = [get(messages[i], _SENT, self._sent, messages, i) for i in range(begin, n)]
        prefix = cast("_InputPrefix", kept) if kept is not None else _NO_PREFIX
        requests = set(prefix.requests)  # the history's approval requests
        for one in sent:
            requests.update(one.approvals)
        if prefix.results & requests != prefix.decided:  # a request the prefix answers came later
            begin, prefix = 0, _NO_PREFIX
            sent = [get(m, _SENT, self._sent, messages, i) for i, m in enumerate(messages)]
            requests = {c for one in sent for c in one.approvals}
        prompt = current_prompt(messages)  # which notes are shown (`shown_notes`)
        # The next request resumes at the current prompt: what comes before it is final for
        # every history that starts with it (and has a prompt there).
        cut = prompt if prompt > begin else None
        start, (reasoning, compaction), context = prefix.start, prefix.foreign, prefix.context
        results, decided = set(prefix.results), set(prefix.decided)
        facts: tuple[int, tuple[int, int], str | None, frozenset[str], frozenset[str]] | None = None
        for k, one in enumerate(sent):
            i = begin + k
            if i == cut:
                facts = (
                    start,
                    (reasoning, compaction),
                    context,
                    frozenset(results),
                    frozenset(decided),
                )
            if one.compaction is not None:
                start = i
            if one.foreign:
                reasoning += one.foreign[0]
                compaction += one.foreign[1]
            if one.results:
                results.update(one.results)
                decided.update(c for c in one.results if c in requests)
            if one.context is not None:
                context = one.context
        out: list[dict[str, Any]] = []
        texts: list[str] = []
        removed: list[tuple[int, str]] = []
        if start < begin:  # no compaction item after the prefix: what it sent goes first
            out, texts, removed = list(prefix.items), list(prefix.texts), list(prefix.removed)
        snapshot: tuple[tuple[dict[str, Any], ...], tuple[str, ...], tuple[tuple[int, str], ...]]
        snapshot = ((), (), ())
        for i in range(max(start, begin), n):
            if i == cut:
                snapshot = (tuple(out), tuple(texts), tuple(removed))
            one = sent[i - begin]
            if one.results is not None:  # a user message: its items depend on the history
                decided_here = tuple(c for c in one.results if c in requests) if requests else ()
                message = one.scoped or messages[i]
                kind = (_USER, decided_here, i < prompt)
                items, encoded = get(
                    messages[i], kind, self._user, message, i, prompt, decided_here
                )
                out += items
                texts += encoded
                continue
            items, missing, encoded = one.items, one.missing, one.texts
            if i == start and one.compaction:  # the window starts inside the message
                parts = (one.scoped or messages[i]).parts[one.compaction :]
                items, missing = _native_items(parts, store=self._store)
                encoded = [COMPACT.encode(item) for item in items]
            out += items
            texts += encoded
            if missing:
                removed += [(i, item_id) for item_id in missing]
        if facts is not None and cut is not None and start < cut:
            # (not after a compaction item at or after the cut: what is sent starts there)
            asked = prefix.requests.union(*(one.approvals for one in sent[: cut - begin]))
            state = _InputPrefix(*snapshot, *facts, asked)
            self._per_prefix.keep(messages, cut, _PREFIX, state)
        warnings = [
            w for w in (_foreign_warning(reasoning, compaction, self.scope),) if w is not None
        ]
        if removed and self._context(context) == "all_turns":
            where = ", ".join(f"{item_id!r} (messages[{i}])" for i, item_id in removed)
            warnings.append(
                WarningEvent(
                    "reasoning_context_trimmed",
                    f"reasoning.context is all_turns but {len(removed)} reasoning item(s) of "
                    f"this conversation are no longer in the history: {where}; the items that "
                    "followed them go without them, and the model no longer sees that reasoning",
                    self.scope,
                )
            )
        return out, warnings, json_array(texts)

    def _sent(self, messages: Sequence[Message], index: int) -> _Sent:
        """What `messages[index]` sends, whatever comes before or after it: its items (its
        media checked first), as the replay policy leaves it (`for_scope`)."""
        given = messages[index]
        _PROFILE.media.check(messages, start=index, stop=index + 1)
        foreign = _foreign_items_dropped(given, self.scope)
        (message,) = for_scope((given,), self.scope, foreign_reasoning=self.foreign_reasoning)
        scoped = message if message is not given else None  # never the key itself: kept weakly
        if message.role == "user":
            results = tuple(p.call_id for p in message.parts if isinstance(p, ToolResult))
            return _Sent.of(scoped, [], results=results)
        if message.scope != self.scope:
            return _Sent.of(scoped, _foreign_items(message.parts), foreign=foreign)
        items, missing = _native_items(message.parts, store=self._store)
        approvals = tuple(_server_tools.approval_requests((message,)))
        context = (message.provider_details or {}).get("reasoning_context")
        return _Sent.of(
            scoped,
            items,
            missing,
            _compaction_start(message),
            approvals=approvals,
            context=context if isinstance(context, str) else None,
        )

    def _user(
        self, message: Message, index: int, prompt: int, decided: tuple[str, ...]
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """A user message's items (as the replay policy leaves it) and their JSON: its tool
        results (the decision on an approval request among `decided` as an
        `mcp_approval_response`), its text and media, then its notes shown as of `prompt`, as
        developer messages."""

        def answer(result: ToolResult) -> dict[str, Any]:
            if result.call_id in decided:
                return _server_tools.approval_response(result)
            return _call_output(result)

        items = user_items(message, answer, _input_content)
        items += [_developer(note.text) for note in shown_notes(message, index, prompt)]
        return items, [COMPACT.encode(item) for item in items]

    def _context(self, recorded: str | None) -> str:
        """The `reasoning.context` of a conversation: the one asked for, else the one the
        service said it used on the latest response (`recorded`), else the model's default."""
        asked = self.thinking.context if self.thinking is not None else None
        if asked is not None and asked != "auto":
            return asked
        return recorded if recorded is not None else default_context(self.model_name)

    async def request(self, request: ModelRequest) -> ModelResponse:
        params, warnings, text = self._prepared(request)
        try:
            response = cast(
                "Response",
                await send_json(
                    self.client, AsyncResponses, self.client.responses.create, params, "input", text
                ),
            )
        except SDK_ERRORS as exc:
            raise self.map_error(exc) from exc
        try:
            parsed = received(self.parse_response(response))
        except UNREADABLE as exc:
            raise unreadable(exc, scope=self.scope) from exc
        return ModelResponse(parsed.message, warnings)

    async def compact(
        self, messages: Sequence[Message], *, instructions: str | None = None
    ) -> list[Message]:
        """The history with this conversation compacted by the service
        (`client.responses.compact`): `messages` as they are, with the compacted window (the
        user messages it keeps, then its encrypted `compaction` item, each an `OpaqueBlock`
        kept exactly as it came) added to the last assistant message when it is this scope's,
        else as an assistant message of its own. Later requests send nothing before that
        window; nothing recorded is removed.

        Raises `HistoryError` when the last message is another scope's assistant message (the
        window would have no message of this scope to go in), `ProviderError` for the
        service's refusal.
        """
        history = list(messages)
        last = history[-1] if history else None
        if last is not None and last.role == "assistant" and last.scope != self.scope:
            raise HistoryError(
                f"the last message is from scope {last.scope!r}: compact a conversation that "
                f"ends with a user message or with a message of {self.scope!r}",
                message_index=len(history) - 1,
            )
        params: dict[str, Any] = {"model": self.model_name, "input": self.build_messages(history)}
        if instructions:
            params["instructions"] = instructions
        request_options(params, ModelSettings(), self._extra_body, self._extra_headers)
        try:
            compacted = await self.client.responses.compact(**params)
        except SDK_ERRORS as exc:
            raise self.map_error(exc) from exc
        window: ProviderDetails = {"compacted": compacted.id}
        parts = tuple(_opaque(item, window) for item in compacted.output)
        if last is not None and last.role == "assistant":
            history[-1] = last.model_copy(update={"parts": (*last.parts, *parts)})
        else:
            history.append(
                Message(role="assistant", parts=parts, scope=self.scope, model=self.model_name)
            )
        return history

    def parse_response(self, response: Response) -> ModelResponse:
        """The shared form of an SDK `Response`: its output items in order, usage, finish
        reason. A failed response raises `ProviderError`."""
        if response.status == "failed":
            raise _failed(response, self.scope, self._secrets)
        return ModelResponse(self._message(response, _output_parts(response.output)))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelStreamEvent]:
        """Warnings, then deltas and part ends as the service streams them, then the complete
        `ModelResponse`: parts keyed by output index (text by output and content index), with
        what `output_item.done` carries folded in (and each part of the item ended there), so
        it equals the non-streamed one. Raises `ProviderError` for an `error` or
        `response.failed` event, `StreamInterrupted` (with the partial message) for a cut one."""
        params, warnings, text = self._prepared(request)
        for warning in warnings:
            yield warning
        try:
            events = await send_json(
                self.client,
                AsyncResponses,
                self.client.responses.create,
                params,
                "input",
                text,
                stream=True,
            )
        except openai.OpenAIError as exc:
            raise self.map_error(exc) from exc
        state = _ResponseStream(self.model_name)
        try:
            async with events:
                async for event in events:
                    if event.type == "response.failed" or event.type == "error":
                        raise _event_error(event, self.scope, self._secrets)
                    for delta in state.fold(event):
                        yield delta
        except (openai.OpenAIError, *STREAM_BREAKS) as exc:  # a break, or an error event
            raise self._stream_error(exc, state.builder, state.model, "response.completed") from exc
        if state.final is None:
            raise self._stream_error(None, state.builder, state.model, "response.completed")
        parts = state.builder.message(scope=self.scope, model=state.model).parts
        yield ModelResponse(self._message(state.final, parts), warnings)

    def map_error(self, exc: BaseException) -> BaseException:
        """The `ProviderError` for an SDK exception (the service's message, status and type,
        credentials masked), with what to do when the service could not read a reasoning or
        compaction item of the history; anything else comes back as it is."""
        error = super().map_error(exc)
        return _unreadable_item(error) if isinstance(error, ProviderError) else error

    @staticmethod
    def map_finish_reason(raw: str | None) -> FinishReason | None:
        """The normalised finish reason for a response's status, or for the reason an
        incomplete one gives (`max_output_tokens`...); a completed response is `"stop"` (the
        message says `"tool_call"` when it has calls)."""
        return _FINISH.get(raw) if raw is not None else None

    def _message(self, response: Response, parts: Sequence[Part]) -> Message:
        """The message of a response with its parts (parsed, or built by a stream), and the
        `reasoning.context` the service says it used."""
        raw = _raw_finish(response)
        finish = self.map_finish_reason(raw)
        if finish == "stop" and any(isinstance(p, ToolCall) for p in parts):
            finish = "tool_call"
        usage = _usage(response.usage)
        uses = _server_tools.uses(parts)
        if uses:
            usage = usage.model_copy(update={"server_tool_uses": uses})
        details: ProviderDetails = {}
        if raw is not None:
            details["finish_reason"] = raw
        context = response.reasoning.context if response.reasoning is not None else None
        if context is not None:
            details["reasoning_context"] = context
        return Message(
            role="assistant",
            parts=tuple(parts),
            scope=self.scope,
            model=response.model or self.model_name,
            id=response.id,
            usage=usage,
            finish_reason=finish,
            provider_details=details or None,
        )


class BedrockMantleModel(OpenAIResponsesModel):
    """A model behind Bedrock Mantle, the OpenAI-compatible Responses API that Bedrock runs
    (`https://bedrock-mantle.<region>.api.aws/v1`,
    docs.aws.amazon.com/bedrock/latest/userguide/bedrock-mantle.html). Its reasoning items are
    Bedrock's, so its messages have a scope of their own, `bedrock-mantle@<region>`.

    - `region`: the AWS region; by default from the client's host, else `AWS_REGION` or
      `AWS_DEFAULT_REGION`.
    - `client`: your `openai.AsyncOpenAI`; built when omitted from the Bedrock API key in
      `AWS_BEARER_TOKEN_BEDROCK`, pointed at the region's Mantle endpoint.

    Every other option is `OpenAIResponsesModel`'s.
    """

    def __init__(
        self,
        model_name: str,
        *,
        client: openai.AsyncOpenAI | None = None,
        region: str | None = None,
        scope: str | None = None,
        **options: Any,
    ) -> None:
        region = region or _mantle_region(client)
        if not region:
            raise ConfigurationError(
                "no AWS region for Bedrock Mantle: pass region=..., or set AWS_REGION"
            )
        if client is None:
            client = mantle_client(region)
        super().__init__(
            model_name, client=client, scope=scope or f"{MANTLE_SCOPE}@{region}", **options
        )
        self._region = region

    @property
    def region(self) -> str:
        """The AWS region of the Mantle endpoint."""
        return self._region


def mantle_client(region: str) -> openai.AsyncOpenAI:
    """An `openai.AsyncOpenAI` for Bedrock Mantle in `region`, with the Bedrock API key in
    `AWS_BEARER_TOKEN_BEDROCK`."""
    key = os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    if not key:
        raise ConfigurationError(
            "no Bedrock API key for Bedrock Mantle: set AWS_BEARER_TOKEN_BEDROCK or pass "
            "client=openai.AsyncOpenAI(...)"
        )
    base_url = f"https://bedrock-mantle.{region}.api.aws/v1"
    return client_from_environment(lambda: openai.AsyncOpenAI(api_key=key, base_url=base_url))


def _mantle_region(client: object) -> str | None:
    """The region a client's Mantle host names, else the environment's."""
    base_url = getattr(client, "base_url", None)
    if base_url is not None:
        found = _MANTLE_HOST.match(endpoint_host(base_url))
        if found is not None:
            return found.group(1)
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")


def without_reasoning(scope: str) -> HistoryProcessor:
    """A history processor that sends `scope`'s messages without their reasoning and
    compaction items: the recovery when the service can no longer read them
    (`invalid_encrypted_content`, or an item not found with `store=False`).

    ```python
    agent = Agent(model, history_processors=[without_reasoning(model.scope)])
    ```

    Text and tool calls go as they are (the calls without their item ids), and everything
    before a compaction item goes again, since the item that carried it is gone. Only what is
    sent changes; the history keeps every item.
    """

    def process(messages: list[Message]) -> list[Message]:
        out: list[Message] = []
        for message in messages:
            if message.role != "assistant" or message.scope != scope:
                out.append(message)
                continue
            parts = tuple(
                p for p in message.parts if not isinstance(p, ThinkingBlock | OpaqueBlock)
            )
            if parts:  # a message of nothing but reasoning or compaction has nothing left
                out.append(message.model_copy(update={"parts": parts}))
        return out

    return process


class _ResponseStream:
    """One streamed response: the builder its events fold into, and what the stream needs to
    remember about its output items: each reasoning item's id by output index (the item after
    one points back at it), which reasoning items have summary parts (those are the block's
    text; reasoning-text parts are only when there are none, as in the non-streamed message),
    which reasoning-text part each is showing, and the keys of each item's parts (ended when
    the item is done)."""

    __slots__ = (
        "_argued",
        "_keys",
        "_reasoning",
        "_summarised",
        "_text_part",
        "builder",
        "final",
        "model",
    )

    def __init__(self, model: str) -> None:
        self.builder = StreamBuilder(json_arguments=False)
        self.model = model
        self.final: Response | None = None
        self._reasoning: dict[int, str | None] = {}
        self._summarised: set[int] = set()
        self._text_part: dict[int, int] = {}
        self._keys: dict[int, list[Hashable]] = {}
        self._argued: set[int] = set()  # the calls whose arguments have arrived

    def fold(self, event: ResponseStreamEvent) -> Sequence[ModelStreamEvent]:
        """The events one stream event makes (the rest make no part: see the module
        docstring)."""
        builder = self.builder
        delta: ModelStreamEvent | None = None
        if event.type == "response.reasoning_summary_text.delta":
            delta = builder.thinking(event.output_index, event.delta)
        elif event.type == "response.output_text.delta" or event.type == "response.refusal.delta":
            delta = builder.text((event.output_index, event.content_index), event.delta)
        elif event.type == "response.function_call_arguments.delta":
            self._argued.add(event.output_index)
            delta = builder.tool_call(event.output_index, arguments=event.delta)
        elif event.type == "response.function_call_arguments.done":
            delta = self._whole_arguments(event.output_index, event.arguments)
        elif event.type == "response.reasoning_summary_part.added":
            delta = self._summary_part(event)
        elif event.type == "response.reasoning_text.delta":
            delta = self._reasoning_text(event)
        elif event.type == "response.output_item.added":
            delta = self._added(event)
        elif event.type == "response.content_part.added":
            self._part_added(event)
        elif event.type == "response.output_item.done":
            return self._done(event)
        elif event.type == "response.created":
            self.model = event.response.model or self.model
        elif event.type == "response.completed" or event.type == "response.incomplete":
            self.final = event.response
        return (delta,) if delta is not None else ()

    def _added(self, event: ResponseOutputItemAddedEvent) -> ToolCallDelta | None:
        """Open the part of a reasoning item, a function call or a compaction item (a message's
        text parts open with their `content_part.added`; built-in tools' items make no part)."""
        item, key = event.item, event.output_index
        if item.type == "reasoning":
            item_id = _item_id(item)
            self._reasoning[key] = item_id
            self._keys[key] = [key]
            self.builder.thinking(key, id=item_id)
        elif item.type == "compaction":
            self._keys[key] = [key]
            self.builder.opaque(key, _opaque(item).data)
        elif item.type == "function_call":
            self._keys[key] = [key]
            if item.arguments:
                self._argued.add(key)
            details: ProviderDetails | None = {"item_id": item.id} if item.id is not None else None
            return self.builder.tool_call(
                key, id=item.call_id, name=item.name, arguments=item.arguments, details=details
            )
        return None

    def _whole_arguments(self, key: int, arguments: str) -> ToolCallDelta | None:
        """A call's whole arguments from a `.done` event, when no delta brought them (LM
        Studio's Responses server sends none): the streamed call then equals the parsed one."""
        if key in self._argued or not arguments:
            return None
        self._argued.add(key)
        return self.builder.tool_call(key, arguments=arguments)

    def _part_added(self, event: ResponseContentPartAddedEvent) -> None:
        """Open a message's text (or refusal) part at its place (a reasoning item's text parts
        go into its block)."""
        if event.part.type != "reasoning_text":
            key = (event.output_index, event.content_index)
            self._keys.setdefault(event.output_index, []).append(key)
            self.builder.text(key, details={"item_id": event.item_id})

    def _summary_part(self, event: ResponseReasoningSummaryPartAddedEvent) -> ThinkingDelta | None:
        """A blank line before each summary part but the first."""
        key = event.output_index
        self._summarised.add(key)
        return self.builder.thinking(key, _SEPARATOR) if event.summary_index else None

    def _reasoning_text(self, event: ResponseReasoningTextDeltaEvent) -> ThinkingDelta | None:
        """Reasoning text, when the item has no summary (a blank line between its parts)."""
        key, number, text = event.output_index, event.content_index, event.delta
        if key in self._summarised:
            return None  # the summary is the block's text, as in the non-streamed message
        if self._text_part.get(key, 0) != number:
            self._text_part[key] = number
            text = _SEPARATOR + text
        return self.builder.thinking(key, text)

    def _done(self, event: ResponseOutputItemDoneEvent) -> list[ModelStreamEvent]:
        """Fold in what only the finished item carries: a reasoning item's summary and content
        parts and `encrypted_content` (its signature, yielded), the details tying a call or a
        message to the reasoning before it; then end the item's parts."""
        builder, item, key = self.builder, event.item, event.output_index
        follows = self._reasoning.get(key - 1)
        out: list[ModelStreamEvent] = []
        if item.type == "reasoning":
            builder.thinking(key, id=_item_id(item), details=_reasoning_details(item))
            if item.encrypted_content is not None:
                signed = builder.thinking(key, signature=item.encrypted_content)
                out += [signed] if signed is not None else []
        elif item.type == "function_call":
            builder.tool_call(key, details=_item_details(item.id, follows))
            whole = self._whole_arguments(key, item.arguments)
            out += [whole] if whole is not None else []
        elif item.type == "message":
            for number, content in enumerate(item.content):
                builder.text(
                    (key, number),
                    details=_text_details(item, content, follows),
                    citations=_citations(content),
                )
        elif item.type == "compaction":
            builder.opaque(key, _opaque(item).data)
        elif item.type in _server_tools.ITEMS:
            for number, part in enumerate(_server_tools.item_parts(_plain_item(item))):
                out.append(builder.whole((key, "server", number), part))
        for part_key in self._keys.pop(key, ()):
            end = builder.end(part_key)
            out += [end] if end is not None else []
        return out


def _item_id(item: ResponseReasoningItem) -> str | None:
    """A reasoning item's id (xAI's items may come without one)."""
    item_id = getattr(item, "id", None)
    return item_id if isinstance(item_id, str) and item_id else None


def _output_parts(items: Sequence[ResponseOutputItem]) -> list[Part]:
    """The parts for a response's output items, in order: compaction items kept whole as
    `OpaqueBlock`s (items of other types are skipped)."""
    parts: list[Part] = []
    follows: str | None = None  # the reasoning item just before this one
    for item in items:
        if item.type == "reasoning":
            texts = [s.text for s in item.summary] or [c.text for c in item.content or ()]
            text, item_id = _SEPARATOR.join(texts), _item_id(item)
            if text or item_id is not None or item.encrypted_content is not None:
                parts.append(
                    ThinkingBlock(
                        text=text,
                        signature=item.encrypted_content,
                        id=item_id,
                        provider_details=_reasoning_details(item),
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
            for content in item.content:
                text = content.refusal if content.type == "refusal" else content.text
                parts.append(
                    TextPart(
                        text=text,
                        provider_details=_text_details(item, content, follows),
                        citations=_citations(content),
                    )
                )
        elif item.type == "compaction":
            parts.append(_opaque(item))
        elif item.type in _server_tools.ITEMS:
            parts += _server_tools.item_parts(_plain_item(item))
        follows = _item_id(item) if item.type == "reasoning" else None
    return parts


def _reasoning_details(item: ResponseReasoningItem) -> ProviderDetails:
    """A reasoning item's summary parts (and content parts, when they came) as they came, and
    an `encrypted_content` that came as null (DeepSeek's unsigned items), to send it back so."""
    details: dict[str, JsonValue] = {"summary": [_plain(s) for s in item.summary]}
    if item.content is not None:
        details["content"] = [_plain(c) for c in item.content]
    if item.encrypted_content is None and "encrypted_content" in item.model_fields_set:
        details["encrypted_content"] = None
    return details


def _text_details(
    item: ResponseOutputMessage,
    content: ResponseOutputText | ResponseOutputRefusal,
    follows: str | None,
) -> ProviderDetails:
    """A message part's item id, the reasoning before it, its phase, annotations or refusal."""
    details: dict[str, JsonValue] = {"item_id": item.id}
    if follows is not None:
        details["reasoning_id"] = follows
    if item.phase is not None:
        details["phase"] = item.phase
    if content.type == "refusal":
        details["refusal"] = True
    return details


def _citations(content: ResponseOutputText | ResponseOutputRefusal) -> tuple[Citation, ...]:
    """A text part's annotations, as its citations (a refusal has none)."""
    if content.type == "refusal" or not content.annotations:
        return ()
    return _server_tools.citations([_plain_item(a) for a in content.annotations])


def _plain_item(value: Any) -> dict[str, JsonValue]:
    """An SDK object as the JSON object it came as (unknown keys included)."""
    return cast("dict[str, JsonValue]", value.to_dict(mode="json"))


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


def _opaque(item: Any, details: ProviderDetails | None = None) -> OpaqueBlock:
    """An output item kept whole, exactly as it came (a compaction item, the user messages of a
    compacted window: the SDK reads those as assistant messages, which `to_dict` warns about
    while giving back what came)."""
    data = cast("dict[str, JsonValue]", item.to_dict(mode="json", warnings=False))
    kind = data.get("type")
    return OpaqueBlock(
        type=kind if isinstance(kind, str) else "unknown", data=data, provider_details=details
    )


_SENT = "sent"
_USER = "user"
_PREFIX = "input"


@dataclass(frozen=True, slots=True)
class _InputPrefix:
    """What `_input` found in a conversation's messages before its current prompt
    (`PerPrefix`): the items they sent and their JSON, the reasoning items missing from them
    (by message index); where what is sent starts (the latest compaction), how many other
    scopes' reasoning and compaction items were left out, the latest `reasoning.context`
    recorded; the call ids their results answer, those answering approval requests, and the
    approval requests they hold. No message: a state kept with the conversation's first
    message must not hold it."""

    items: tuple[dict[str, Any], ...] = ()
    texts: tuple[str, ...] = ()
    removed: tuple[tuple[int, str], ...] = ()
    start: int = 0
    foreign: tuple[int, int] = (0, 0)
    context: str | None = None
    results: frozenset[str] = frozenset()
    decided: frozenset[str] = frozenset()
    requests: frozenset[str] = frozenset()


_NO_PREFIX = _InputPrefix()


@dataclass(frozen=True, slots=True)
class _Sent:
    """What one message sends: the message as the replay policy leaves it (None: as it is;
    never the message itself, which is kept weakly), its input items; for this scope's, the
    ids of the reasoning items its parts followed that are no longer among them and, when it
    holds a compaction item, the part where what is sent starts; for another scope's, how
    many reasoning and compaction items were left out; for a user message, the call ids its
    results answer (its items depend on the rest of the history: `_user`); for this scope's,
    the ids of its approval requests. `texts`: each item's JSON."""

    scoped: Message | None
    items: list[dict[str, Any]]
    texts: list[str]
    missing: list[str] = field(default_factory=list[str])
    compaction: int | None = None
    foreign: tuple[int, int] | None = None
    results: tuple[str, ...] | None = None
    approvals: tuple[str, ...] = ()
    context: str | None = None

    @classmethod
    def of(
        cls,
        scoped: Message | None,
        items: list[dict[str, Any]],
        missing: list[str] | None = None,
        compaction: int | None = None,
        foreign: tuple[int, int] | None = None,
        *,
        results: tuple[str, ...] | None = None,
        approvals: tuple[str, ...] = (),
        context: str | None = None,
    ) -> _Sent:
        """What a message sends, its items' JSON encoded once here."""
        texts = [COMPACT.encode(item) for item in items]
        return cls(
            scoped, items, texts, missing or [], compaction, foreign, results, approvals, context
        )


def _compaction_start(message: Message) -> int | None:
    """Where what is sent starts in a message of this scope: the part of its latest compaction
    item, or the start of the compacted window it ends (`compact()`'s user messages go with
    it); None when it holds none (then what is sent starts further back)."""
    parts = message.parts
    for j in range(len(parts) - 1, -1, -1):
        part = parts[j]
        if not isinstance(part, OpaqueBlock) or part.type != "compaction":
            continue
        window = (part.provider_details or {}).get("compacted")
        while j > 0 and window is not None and _window(parts[j - 1]) == window:
            j -= 1
        return j
    return None


def _window(part: Part) -> JsonValue:
    """The compacted window an item of `compact()`'s output belongs to (None: none)."""
    return (part.provider_details or {}).get("compacted") if isinstance(part, OpaqueBlock) else None


def _foreign_items_dropped(message: Message, scope: str) -> tuple[int, int] | None:
    """How many Responses reasoning and compaction items another scope's message holds (None
    for this scope's messages, and for none)."""
    if message.role != "assistant" or message.scope == scope:
        return None
    reasoning = compaction = 0
    for part in message.parts:
        if isinstance(part, ThinkingBlock) and part.id is not None:
            reasoning += 1
        elif isinstance(part, OpaqueBlock) and part.type == "compaction":
            compaction += 1
    return (reasoning, compaction) if reasoning or compaction else None


def _foreign_warning(reasoning: int, compaction: int, scope: str) -> WarningEvent | None:
    """The warning for Responses reasoning and compaction items of other scopes: only their
    issuer can read them, so they are left out (and what a compaction item stood for is sent
    in full)."""
    if not (reasoning or compaction):
        return None
    return WarningEvent(
        "foreign_items_dropped",
        f"{reasoning} reasoning and {compaction} compaction item(s) from other scopes were left "
        f"out: only their issuer can read them ({scope!r} gets the conversation without them)",
        scope,
    )


_ITEM_NOT_FOUND = re.compile(r"Item with id '([^']+)' not found")
_NOT_VERIFIED = re.compile(r"The encrypted content (?:for item )?(\S+) could not be verified")


def _unreadable_item(error: ProviderError) -> ProviderError:
    """`error` with what to do when the service could not read an item of the history: an
    `encrypted_content` it cannot verify (`invalid_encrypted_content`: issued by another
    account or endpoint, or changed) or an item sent by its id alone with `store=False`."""
    found = _ITEM_NOT_FOUND.search(error.message) or _NOT_VERIFIED.search(error.message)
    if found is None:
        return error
    item = found.group(1)
    kind = "compaction" if item.startswith("cmp_") else "reasoning"
    why = (
        "it was sent by its id alone and nothing is stored with store=False"
        if found.re is _ITEM_NOT_FOUND
        else "its encrypted_content was issued elsewhere (another account, project or "
        "endpoint) or changed"
    )
    return add_hint(
        error,
        f"Hint: the service cannot read {kind} item {item} of this history: {why}. Send the "
        "history without this scope's reasoning and compaction items: "
        f"Agent(..., history_processors=[without_reasoning({error.scope!r})]).",
    )


def _event_error(
    event: ResponseFailedEvent | ResponseErrorEvent, scope: str, secrets: Sequence[str]
) -> ProviderError:
    """The `ProviderError` for a `response.failed` or an `error` event."""
    if event.type == "error":
        return _error(event.message, event.code, scope, secrets)
    return _failed(event.response, scope, secrets)


def _failed(response: Response, scope: str, secrets: Sequence[str]) -> ProviderError:
    """The `ProviderError` for a failed response."""
    error = response.error
    if error is None:
        return _error("the response failed", None, scope, secrets)
    return _error(error.message, str(error.code), scope, secrets)


def _error(message: str, code: str | None, scope: str, secrets: Sequence[str]) -> ProviderError:
    """The `ProviderError` for a failed response or an `error` event in the stream."""
    return _unreadable_item(
        ProviderError(
            redact(message, secrets),
            scope=scope,
            retryable=code in ("server_error", "rate_limit_exceeded"),
            error_type=code,
        )
    )


def _raw_finish(response: Response) -> str | None:
    """Why a response ended, as the service says it: the reason an incomplete one gives, or its
    status."""
    incomplete = response.incomplete_details
    return (incomplete.reason if incomplete is not None else None) or response.status


def _native_items(parts: Sequence[Part], *, store: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """The input items for this scope's parts of one message, and the ids of the reasoning
    items its parts followed that are no longer among them (removed from the history)."""
    # One entry per output item: (reasoning id or None, the item or None when it cannot be
    # sent, the reasoning id it followed); the text parts of one message item form one entry.
    entries: list[tuple[str | None, dict[str, Any] | None, str | None]] = []
    after: str | None = None  # the id of the block just before this part, if it is one
    open_message: str | None = None  # the message item the previous text part belongs to
    present = {p.id for p in parts if isinstance(p, ThinkingBlock)}
    removed: list[str] = []
    for part in parts:
        details = part.provider_details or {}
        item_id = details.get("item_id")
        marker = details.get("reasoning_id")
        if isinstance(marker, str) and marker not in present and marker not in removed:
            removed.append(marker)
        anchor = marker if isinstance(marker, str) else after
        if isinstance(part, ThinkingBlock):
            entries.append((part.id or "", _reasoning_item(part, store=store), None))
            after, open_message = part.id, None
            continue
        after = None
        if isinstance(part, OpaqueBlock | ServerToolCall | ServerToolResult):
            # A compaction item or a built-in tool's item: exactly as it came (a result that
            # travels inside its call's item goes with it).
            replayed = _server_tools.replay_item(part)
            if replayed is not None:
                entries.append((None, replayed, None))
            open_message = None
        elif isinstance(part, ToolCall):
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
                # Citations carry the annotations whole; older histories kept them in details.
                annotations = [c.data for c in part.citations] or details.get("annotations")
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
    return out, removed


def _reasoning_item(block: ThinkingBlock, *, store: bool) -> dict[str, Any] | None:
    """The input item replaying a reasoning block, or None when it cannot be read back: it
    goes with its `encrypted_content`, by its id alone with `store=True`, or, unsigned, with
    the reasoning text it came with (its `content` parts)."""
    if block.redacted is not None:
        return None
    details = block.provider_details or {}
    content = details.get("content")
    has_content = isinstance(content, list) and bool(content)
    if block.signature is None and not has_content and not (store and block.id is not None):
        return None  # with store=False the service cannot find it by id alone
    summary = details.get("summary")
    item: dict[str, Any] = {"type": "reasoning"}
    if block.id is not None:
        item["id"] = block.id
    item["summary"] = (
        summary
        if isinstance(summary, list)
        else ([{"type": "summary_text", "text": block.text}] if block.text else [])
    )
    if block.signature is not None:
        item["encrypted_content"] = block.signature
    elif "encrypted_content" in details:
        item["encrypted_content"] = details["encrypted_content"]
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
    """A tool result as a `function_call_output` item: its text, or its text and media as
    input content parts."""
    output: str | list[dict[str, Any]] = result.content_text()
    if result.media:
        output = [{"type": "input_text", "text": output}, *map(_input_content, result.media)]
    return {"type": "function_call_output", "call_id": result.call_id, "output": output}


def _developer(text: str) -> dict[str, Any]:
    """A system note as a `developer` message: instructions the model ranks above the user's,
    taken anywhere in `input` (openai-python `types/responses/easy_input_message_param.py`)."""
    return {"type": "message", "role": "developer", "content": text}


def _input_content(part: TextPart | Image | Document) -> dict[str, Any]:
    """A user message part as a Responses input content part."""
    if isinstance(part, TextPart):
        return {"type": "input_text", "text": part.text}
    if isinstance(part, Image):
        return {"type": "input_image", "image_url": data_url(part), "detail": "auto"}
    if part.data is None:
        return {"type": "input_file", "file_url": part.url}
    return {"type": "input_file", "filename": file_name(part), "file_data": data_url(part)}


def _usage(usage: ResponseUsage | None) -> Usage:
    """A response's counts, with the input tokens read from the cache (`cached_tokens`) and
    written to it (`cache_write_tokens`, where the host reports them)."""
    if usage is None:
        return Usage()
    output = usage.output_tokens_details
    cached = usage.input_tokens_details
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        thinking_tokens=output.reasoning_tokens or 0,
        cache_read_tokens=cached.cached_tokens or 0,
        cache_write_tokens=cached.cache_write_tokens or 0,
    )
