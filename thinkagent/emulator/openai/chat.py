"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (OpenAI and compatible
endpoints; ``/chat/completions`` too, DeepSeek's base URL has no ``/v1``), Azure's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` and
``/openai/v1/chat/completions``, and ``/{dialect}/v1/chat/completions`` (the dialect knob:
``/vllm/v1``, ``/openrouter/v1``, ``/zai/v1``... serve any model name in that host's
dialect). JSON and SSE (``data: {chunk}`` ... ``data: [DONE]``, with a last usage chunk when
``stream_options.include_usage`` is set).

The model name (or the knob) picks the reasoning *dialect* (see :func:`.rules.openai_profile`
and :mod:`.compat`):

* OpenAI models (``gpt-*``, ``o1*``, ``o3*``, ``o4*``) reason internally and return no
  reasoning text, only ``completion_tokens_details.reasoning_tokens``; reasoning sent
  back is ignored. ``gpt-3*``, ``gpt-4*`` and ``gpt-5-chat*`` do not reason and refuse
  ``reasoning_effort``.
* DeepSeek (except ``deepseek-chat``), Qwen/QwQ, Kimi/Moonshot, Z.AI GLM, xAI Grok:
  ``reasoning_content`` on the message (``delta.reasoning_content`` when streaming, before the
  content). DeepSeek and Kimi in thinking mode refuse an assistant message with
  ``tool_calls`` that does not carry it back.
* OpenRouter names (``vendor/model``): ``reasoning`` and the vendor's ``reasoning_details``
  (signed for Anthropic, a thought signature for Google), checked by the upstream's rules.
* Ollama tags (``qwen3:8b``), vLLM, Groq, Cerebras, Together: the ``reasoning`` field.
* Mistral (``magistral-*``, and ``mistral-*`` with ``reasoning_effort``): a content list of
  ``thinking`` and ``text`` chunks.
* Gemini on its OpenAI-compatible endpoint (``/v1beta/openai/chat/completions``): thought
  signatures on tool calls (``extra_content.google.thought_signature``), thoughts inline as
  ``<thought>`` tags when asked for.
* MiniMax: ``<think>...</think>`` inline at the start of ``content`` (``reasoning_details``
  with ``reasoning_split``).

Requests are checked as the service checks them: ``stream`` is a boolean, each content part
has a known type for its role, images are PNG, JPEG, GIF or WEBP data URLs (or URLs) of at most
20 MB, documents come as ``file`` parts. Images and documents reach the brain as ``Media``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from ..brain import ConversationBuilder
from ..encoding import (
    arguments_json,
    as_list,
    as_mapping,
    chunk_text,
    hex_id,
    list_or_none,
    mapping_or_none,
    split_json,
    sse_data,
    stable_id,
    uuid_id,
)
from ..framework import EmulatorState, JsonReply, StreamReply, WireError, WireRequest, WireRoute
from ..model import (
    Call,
    CallResult,
    Conversation,
    Media,
    Reply,
    Settings,
    StopReason,
    ToolSpec,
    Turn,
)
from ..signing import Signer
from .bodies import check_chat
from .caching import AutomaticCache
from .compat import (
    assistant_reasoning,
    check_gemini_calls,
    check_replay,
    check_string_content,
    check_switches,
    check_system_placement,
    gemini_signature,
    groq_effort,
    router_details,
    thinking_on,
)
from .rules import (
    KNOBS,
    OpenAIError,
    OpenAIProfile,
    OpenAIWire,
    brain_effort,
    check_effort,
    credential,
    file_media,
    image_media,
    invalid_value,
    is_azure,
    missing_parameter,
    model_not_found,
    openai_profile,
    parse_arguments,
    stream_error_payload,
    text_of,
    tool_choice,
    tool_spec,
)

__all__ = ["OpenAIChatAPI"]

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_FINISH: Mapping[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
}
#: Content part types by role (the values the service lists in its 400).
_PART_TYPES: Mapping[str, tuple[str, ...]] = {
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
    "system": ("text",),
    "developer": ("text",),
    "tool": ("text",),
    "function": ("text",),
}
_THINK_OPEN = "<think>\n"
_THINK_CLOSE = "\n</think>\n\n"


@dataclass(frozen=True)
class _ChatRequest:
    model: OpenAIProfile
    model_name: str
    conversation: Conversation
    prefix_totals: tuple[int, ...]  # the input tokens of the first k messages, for each k from 0
    settings: Settings
    stream: bool
    include_usage: bool
    body: Mapping[str, Any]


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _invalid_type(param: str, expected: str, value: Any) -> OpenAIError:
    """OpenAI's 400 for a value of the wrong JSON type (``expected``: ``a string``...)."""
    got = _type_name(value)
    article = "" if got == "null" else "an " if got[0] in "aeiou" else "a "
    return OpenAIError(
        400,
        f"Invalid type for '{param}': expected {expected}, but got {article}{got} instead.",
        param=param,
        code="invalid_type",
    )


def _check_ids(message: Mapping[str, Any], index: int) -> None:
    """A tool message's ``tool_call_id`` and an assistant's ``tool_calls[k].id`` are strings."""
    if message.get("role") == "tool":
        call_id = message.get("tool_call_id")
        if call_id is None:
            raise missing_parameter(f"messages[{index}].tool_call_id")
        if not isinstance(call_id, str):
            raise _invalid_type(f"messages[{index}].tool_call_id", "a string", call_id)
    elif message.get("role") == "assistant" and message.get("tool_calls") is not None:
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            raise _invalid_type(f"messages[{index}].tool_calls", "an array", calls)
        for k, raw in enumerate(cast("list[Any]", calls)):
            call = mapping_or_none(raw)
            if call is None:
                raise _invalid_type(f"messages[{index}].tool_calls[{k}]", "an object", raw)
            if call.get("id") is None:
                raise missing_parameter(f"messages[{index}].tool_calls[{k}].id")
            if not isinstance(call.get("id"), str):
                raise _invalid_type(f"messages[{index}].tool_calls[{k}].id", "a string", call["id"])


def _tools(raw: Any) -> tuple[ToolSpec, ...]:
    if raw is None:
        return ()
    items = list_or_none(raw)
    if items is None:
        raise OpenAIError(
            400,
            f"Invalid type for 'tools': expected an array, but got {_type_name(raw)} instead.",
            param="tools",
            code="invalid_type",
        )
    tools: list[ToolSpec] = []
    for index, item in enumerate(items):
        tool = as_mapping(item)
        if tool.get("type", "function") != "function":
            continue  # custom tools: not planned by the brain
        function = mapping_or_none(tool.get("function"))
        if function is None:
            raise missing_parameter(f"tools[{index}].function")
        if not isinstance(function.get("name"), str):
            raise missing_parameter(f"tools[{index}].function.name")
        tools.append(
            tool_spec(function["name"], function.get("description"), function.get("parameters"))
        )
    return tuple(tools)


def _check_content(message: Mapping[str, Any], index: int, model: OpenAIProfile) -> None:
    """A message's content is a string, null, or a list of parts of its role's types
    (Mistral's ``thinking`` chunks too, in an assistant message to a Mistral model)."""
    content = message.get("content")
    if content is None or isinstance(content, str):
        return
    parts = list_or_none(content)
    if parts is None:
        raise _invalid_type(f"messages[{index}].content", "one of a string or array", content)
    role = str(message.get("role"))
    allowed = _PART_TYPES.get(role, ("text",))
    if role == "assistant" and model.family == "mistral":
        allowed = (*allowed, "thinking")
    for k, raw in enumerate(parts):
        part = mapping_or_none(raw)
        param = f"messages[{index}].content[{k}]"
        if part is None:
            raise _invalid_type(param, "an object", raw)
        if part.get("type") not in allowed:
            raise invalid_value(part.get("type"), allowed, f"{param}.type")


def _media(content: Any, index: int) -> tuple[Media, ...]:
    """The images and documents of a user message's content parts."""
    media: list[Media] = []
    for k, raw in enumerate(as_list(content) if isinstance(content, list) else []):
        part = as_mapping(raw)
        param = f"messages[{index}].content[{k}]"
        if part.get("type") == "image_url":
            media.append(
                image_media(as_mapping(part.get("image_url")).get("url"), f"{param}.image_url.url")
            )
        elif part.get("type") == "file":
            media.append(file_media(as_mapping(part.get("file")), f"{param}.file"))
    return tuple(media)


def _response_schema(raw: Any) -> Mapping[str, Any] | None:
    """The JSON schema a ``response_format`` asks the answer to follow (None: free text)."""
    if raw is None:
        return None
    response_format = mapping_or_none(raw)
    if response_format is None:
        raise _invalid_type("response_format", "an object", raw)
    kind = response_format.get("type")
    if kind not in ("text", "json_object", "json_schema"):
        raise invalid_value(kind, ("text", "json_object", "json_schema"), "response_format.type")
    if kind != "json_schema":
        return None
    spec = mapping_or_none(response_format.get("json_schema"))
    if spec is None or not isinstance(spec.get("name"), str):
        raise missing_parameter(
            "response_format.json_schema.name" if spec else "response_format.json_schema"
        )
    return as_mapping(spec.get("schema"))


def _check_history(messages: Sequence[Mapping[str, Any]]) -> None:
    """Tool messages answer the preceding assistant ``tool_calls``, and every call is
    answered before the next message (OpenAI's rules and messages)."""
    pending: dict[str, None] = {}
    owner = -1
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if owner < 0 or call_id not in pending:
                raise OpenAIError(
                    400,
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    param=f"messages.[{index}].role",
                )
            del pending[cast("str", call_id)]
            continue
        if pending:
            break
        owner = -1
        calls = as_list(message.get("tool_calls")) if role == "assistant" else []
        if calls:
            owner = index
            pending = {str(as_mapping(c).get("id")): None for c in calls}
    if pending:
        raise OpenAIError(
            400,
            "An assistant message with 'tool_calls' must be followed by tool messages responding "
            "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
            + ", ".join(pending),
            param=f"messages.[{owner}].role",
        )


def _parse(request: WireRequest, signer: Signer) -> _ChatRequest:
    body = mapping_or_none(request.body)
    if body is None:
        raise OpenAIError(
            400,
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
            "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
            "this, please contact us through our help center at help.openai.com.)",
        )
    check_chat(body)
    azure = is_azure(request)
    deployment = request.path_params.get("deployment")
    knob = request.path_params.get("dialect")
    if knob is not None and knob.lower() not in KNOBS:
        raise OpenAIError(
            404,
            f"The emulator has no dialect '{knob}' (known: {', '.join(sorted(KNOBS))}).",
            code="unknown_url",
        )
    raw_model = body.get("model")
    if not isinstance(raw_model, str) or not raw_model:
        if deployment is None:
            raise OpenAIError(400, "you must provide a model parameter")
        raw_model = deployment
    gemini = request.path.startswith("/v1beta/openai/")
    if gemini:
        model = (
            OpenAIProfile(raw_model, "gemini", "none")
            if raw_model.lower().startswith("gemini-")
            else None
        )
    else:
        model = openai_profile(raw_model, knob=knob)
    if model is None and deployment is not None:
        model = openai_profile(deployment)
    if model is None and azure:
        model = openai_profile(raw_model, azure=True)
    if model is None:
        raise model_not_found(raw_model)

    raw_messages = body.get("messages")
    if raw_messages is None:
        raise missing_parameter("messages")
    items = list_or_none(raw_messages)
    if items is None:
        raise OpenAIError(
            400,
            f"Invalid type for 'messages': expected an array, but got {_type_name(raw_messages)} instead.",
            param="messages",
            code="invalid_type",
        )
    if not items:
        raise OpenAIError(
            400,
            "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
            "empty array instead.",
            param="messages",
            code="empty_array",
        )
    messages: list[Mapping[str, Any]] = []
    for index, item in enumerate(items):
        message = mapping_or_none(item)
        if message is None:
            raise OpenAIError(
                400,
                f"Invalid type for 'messages[{index}]': expected an object, but got "
                f"{_type_name(item)} instead.",
                param=f"messages[{index}]",
                code="invalid_type",
            )
        if message.get("role") not in _ROLES:
            raise invalid_value(message.get("role"), _ROLES, f"messages[{index}].role")
        _check_ids(message, index)
        _check_content(message, index, model)
        messages.append(message)
    for name, expected in (("stream", "a boolean"), ("stream_options", "an object")):
        value = body.get(name)
        if value is not None and not isinstance(value, bool if name == "stream" else Mapping):
            raise _invalid_type(name, expected, value)
    check_switches(model, body)
    check_string_content(model, body)

    raw_effort = body.get("reasoning_effort")
    if groq_effort(model, raw_effort):  # Qwen 3 on Groq: `none` or `default` only
        raw_effort = None if raw_effort == "default" else raw_effort
    effort = check_effort(model, raw_effort, "reasoning_effort")
    if model.family == "openai" and model.reasons and body.get("max_tokens") is not None:
        raise OpenAIError(
            400,
            "Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
            param="max_tokens",
            code="unsupported_parameter",
        )
    tools = _tools(body.get("tools"))
    if (
        tools
        and model.name.lower().startswith("gpt-5.4")
        and body.get("reasoning_effort") not in (None, "none")
    ):
        # https://github.com/pipecat-ai/pipecat/issues/4043
        raise OpenAIError(
            400,
            f"Function tools with reasoning_effort are not supported for {model.name} in "
            "/v1/chat/completions. Please use /v1/responses instead.",
            param="reasoning_effort",
        )
    choice, tool_name = tool_choice(body.get("tool_choice"), nested=True)
    _check_history(messages)
    check_system_placement(model, messages)

    schema = _response_schema(body.get("response_format"))
    if model.dialect == "hidden" or model.dialect == "none":
        thinking, brain_level = brain_effort(effort)
    else:
        thinking = thinking_on(model, body, raw_effort)
        brain_level = brain_effort(raw_effort or "medium")[1]
    if thinking and model.family != "openai":
        check_replay(model, messages, signer)
    if gemini and model.name.lower().startswith("gemini-3"):
        check_gemini_calls(messages, signer)

    conversation, totals = _conversation(model, messages, tools)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    settings = Settings(
        thinking=thinking,
        effort=brain_level,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        tool_choice=choice,
        tool_name=tool_name,
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
        response_schema=schema,
    )
    options = as_mapping(body.get("stream_options"))
    return _ChatRequest(
        model=model,
        model_name=raw_model,
        conversation=conversation,
        prefix_totals=totals,
        settings=settings,
        stream=body.get("stream") is True,
        include_usage=options.get("include_usage") is True,
        body=body,
    )


def _conversation(
    model: OpenAIProfile, messages: Sequence[Mapping[str, Any]], tools: tuple[ToolSpec, ...]
) -> tuple[Conversation, tuple[int, ...]]:
    """The neutral conversation of ``messages`` (consecutive tool messages make one user turn
    of results), and the input tokens of each prefix of ``messages``, as
    :func:`~thinkagent.emulator.brain.prefix_tokens` counts the conversation of its first
    ``k`` messages (``k`` from 0), for prompt caching."""
    built = ConversationBuilder(tools)
    totals = [built.tokens]
    after_tool = False  # the latest message is a tool's: the next result joins its turn
    for index, message in enumerate(messages):
        role = message.get("role")
        content = text_of(message.get("content"))
        if role == "tool":
            result = CallResult(str(message.get("tool_call_id")), content)
            if after_tool:
                built.merge(results=(result,))
            else:
                built.append(Turn("user", results=(result,)))
        elif role in ("system", "developer"):
            built.add_system(content)
        elif role == "user":
            built.append(Turn("user", text=content, media=_media(message.get("content"), index)))
        elif role == "assistant":
            thinking = ""
            if model.family != "openai":  # OpenAI's own endpoint ignores replayed reasoning
                fields = not (model.family == "cerebras" and "glm" in model.name.lower())
                thinking, content = assistant_reasoning(message, fields=fields)
            calls = tuple(
                Call(
                    str(call.get("id")),
                    str(as_mapping(call.get("function")).get("name")),
                    parse_arguments(as_mapping(call.get("function")).get("arguments")),
                )
                for call in (as_mapping(c) for c in as_list(message.get("tool_calls")))
            )
            built.append(Turn("assistant", text=content, thinking=thinking, calls=calls))
        after_tool = role == "tool"
        totals.append(built.tokens)
    return built.conversation(), tuple(totals)


# --- rendering -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rendered:
    """A reply in Chat Completions terms."""

    reasoning: str | None  # the text of the dialect's reasoning field
    field: str | None  # that field's name (None: no reasoning field)
    details: tuple[dict[str, Any], ...]  # the `reasoning_details` items
    thinking_chunk: str | None  # the text of a leading `thinking` content chunk (Mistral)
    content: str | None  # the message content (``<think>`` tags included)
    refusal: str | None
    calls: tuple[tuple[str, str, str], ...]  # (id, name, arguments JSON)
    finish: str
    signature: str | None = None  # Gemini's thought signature on the first call


def _call_id(model: OpenAIProfile, seed: str, index: int) -> str:
    """A generated tool call id, in the host's own format."""
    if model.family == "deepseek":
        return stable_id(f"call_{index:02d}_", seed, str(index), length=24)
    if model.family == "mistral":  # nine letters and digits
        return stable_id("", seed, str(index), length=9)
    return stable_id("call_", seed, str(index), length=24)


def _dialect(parsed: _ChatRequest) -> str:
    """Where this request's reasoning goes: the model's dialect, moved by the switches that
    move it (``reasoning_format`` on Groq and Cerebras, ``reasoning_split`` on MiniMax)."""
    model, body = parsed.model, parsed.body
    if model.family in ("groq", "cerebras"):
        chosen = body.get("reasoning_format")
        if chosen == "raw":
            return "think_tags"
        if chosen in ("hidden", "none"):
            return "none"
    if model.family == "minimax" and body.get("reasoning_split") is True:
        return "reasoning_details"
    return model.dialect


def _render(parsed: _ChatRequest, reply: Reply, seed: str, signer: Signer) -> _Rendered:
    model = parsed.model
    thinking = reply.thinking if reply.thinking is not None and not reply.redacted else None
    calls: list[tuple[str, str, str]] = []
    for index, call in enumerate(reply.tool_calls):
        call_id = call.id if call.id is not None else _call_id(model, seed, index)
        calls.append((call_id, call.name, arguments_json(call.arguments)))
    text: str | None = reply.text
    refusal: str | None = None
    if reply.stop == "refusal":
        refusal, text = reply.text, None
    elif model.family == "openai" and calls:
        text = None  # OpenAI models send no content beside their tool calls
    elif not text and calls:
        text = None
    dialect = _dialect(parsed)
    reasoning: str | None = None
    field: str | None = None
    details: tuple[dict[str, Any], ...] = ()
    chunk: str | None = None
    if thinking is None:
        pass
    elif dialect in ("reasoning_content", "reasoning"):
        reasoning, field = thinking, dialect
    elif dialect == "reasoning_details" and model.family == "minimax":
        item = {"type": "reasoning.text", "id": "reasoning-text-1", "text": thinking}
        details = ({**item, "format": "MiniMax-response-v1", "index": 0},)
    elif dialect == "reasoning_details":
        reasoning, field = thinking, "reasoning"
        first = calls[0][0] if calls else None
        details = tuple(router_details(model, thinking, signer, first, hex_id("rs_", seed)))
    elif dialect == "think_tags":
        text = _THINK_OPEN + thinking + _THINK_CLOSE + (text or "")
    elif dialect == "content_chunks":
        chunk = thinking
    signature: str | None = None
    if model.family == "gemini":
        if thinking is not None and _include_thoughts(parsed.body):
            text = f"<thought>{thinking}</thought>{text or ''}"
        if calls:
            signature = gemini_signature(signer, calls[0][0])
    return _Rendered(
        reasoning,
        field,
        details,
        chunk,
        text,
        refusal,
        tuple(calls),
        _FINISH[reply.stop],
        signature,
    )


def _include_thoughts(body: Mapping[str, Any]) -> bool:
    """Whether a Gemini request asks for its thoughts
    (``extra_body.google.thinking_config.include_thoughts``)."""
    google = as_mapping(as_mapping(body.get("extra_body")).get("google"))
    return as_mapping(google.get("thinking_config")).get("include_thoughts") is True


def _call_json(rendered: _Rendered, index: int, call: Mapping[str, Any]) -> dict[str, Any]:
    """A tool call (or its first stream fragment) with Gemini's signature on the first one."""
    if index == 0 and rendered.signature is not None:
        return {**call, "extra_content": {"google": {"thought_signature": rendered.signature}}}
    return dict(call)


def _usage(parsed: _ChatRequest, reply: Reply, cached: int) -> dict[str, Any]:
    usage = reply.usage
    assert usage is not None
    prompt, completion = usage.input_tokens, usage.output_tokens
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if parsed.model.family == "deepseek":
        out["prompt_tokens_details"] = {"cached_tokens": cached}
        out["prompt_cache_hit_tokens"] = cached
        out["prompt_cache_miss_tokens"] = prompt - cached
        out["completion_tokens_details"] = {"reasoning_tokens": usage.thinking_tokens}
    else:
        out["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
        out["completion_tokens_details"] = {
            "reasoning_tokens": usage.thinking_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
    return out


class OpenAIChatAPI(OpenAIWire):
    """The Chat Completions wire API (OpenAI, Azure and compatible endpoints)."""

    name: ClassVar[str] = "openai"
    operation: ClassVar[str] = "ChatCompletions_Create"

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self.cache = AutomaticCache()
        """Automatic prompt caching (:mod:`.caching`)."""

    def reset(self) -> None:
        self.cache.clear()

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/v1/chat/completions", self.completions),
            WireRoute("/chat/completions", self.completions),
            WireRoute("/openai/deployments/{deployment}/chat/completions", self.completions),
            WireRoute("/openai/v1/chat/completions", self.completions),
            WireRoute("/{dialect}/v1/chat/completions", self.completions),
            WireRoute("/v1beta/openai/chat/completions", self.completions),
        )

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        return sse_data({"error": stream_error_payload(error)})

    # --- handler -----------------------------------------------------------------------

    def completions(self, request: WireRequest) -> JsonReply | StreamReply:
        parsed = _parse(request, self.state.signer)
        sent = parsed.body
        messages = [as_mapping(m) for m in as_list(sent.get("messages"))]
        cached = self.cache.read(
            model=parsed.model,
            model_name=parsed.model_name,
            credential=credential(request),
            body=sent,
            head={"tools": sent.get("tools"), "response_format": sent.get("response_format")},
            items=messages,
            totals=parsed.prefix_totals,
        )
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest() + "\x1f" + parsed.model_name
        rendered = _render(parsed, reply, seed, self.state.signer)
        deepseek = parsed.model.family == "deepseek"
        completion_id = (
            uuid_id("chat", seed, reply.stop)
            if deepseek
            else stable_id("chatcmpl-", seed, reply.stop, length=29)
        )
        envelope: dict[str, Any] = {
            "id": completion_id,
            "created": int(time.time()),
            "model": parsed.model_name,
        }
        fingerprint = hex_id("fp_", parsed.model_name, length=10)
        headers = {"x-request-id": hex_id("req_", str(request.seq), seed, length=32)}
        if parsed.stream:
            return self._stream(parsed, reply, rendered, envelope, fingerprint, headers, cached)
        content: str | list[dict[str, Any]] | None = rendered.content
        if rendered.thinking_chunk is not None:
            content = [_thinking_chunk(rendered.thinking_chunk)]
            if rendered.content:
                content.append({"type": "text", "text": rendered.content})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if rendered.field is not None:
            message[rendered.field] = rendered.reasoning
        if rendered.details:
            message["reasoning_details"] = list(rendered.details)
        if parsed.model.family == "openai":
            message["refusal"] = rendered.refusal
            message["annotations"] = []
        if rendered.calls:
            message["tool_calls"] = [
                _call_json(
                    rendered,
                    i,
                    {
                        **({"index": i} if deepseek else {}),
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    },
                )
                for i, (call_id, name, arguments) in enumerate(rendered.calls)
            ]
        body: dict[str, Any] = {
            "id": envelope["id"],
            "object": "chat.completion",
            "created": envelope["created"],
            "model": envelope["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": rendered.finish,
                }
            ],
            "usage": _usage(parsed, reply, cached),
            "system_fingerprint": fingerprint,
        }
        if parsed.model.family == "openai":
            body["service_tier"] = "default"
        return JsonReply(body, 200, headers)

    def _stream(
        self,
        parsed: _ChatRequest,
        reply: Reply,
        rendered: _Rendered,
        envelope: Mapping[str, Any],
        fingerprint: str,
        headers: Mapping[str, str],
        cached: int,
    ) -> StreamReply:
        base: dict[str, Any] = {**envelope, "object": "chat.completion.chunk"}
        if parsed.model.family == "openai":
            base["service_tier"] = "default"
        base["system_fingerprint"] = fingerprint
        if parsed.include_usage:
            base["usage"] = None

        def chunk(delta: Mapping[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return sse_data({**base, "choices": [choice]})

        events: list[bytes] = []
        cut_at: int | None = None
        if rendered.details or rendered.field is not None or rendered.thinking_chunk is not None:
            pieces = _reasoning_deltas(rendered)
            for index, delta in enumerate(pieces):
                events.append(chunk({"role": "assistant", **delta} if index == 0 else delta))
            cut_at = max(1, len(pieces) // 2)
        else:  # ``content: null`` when the reply has none (a turn of tool calls only)
            opening = "" if rendered.content is not None else None
            events.append(chunk({"role": "assistant", "content": opening, "refusal": None}))
        content = rendered.content or ""
        if content.startswith(_THINK_OPEN):
            thought, _, text = content[len(_THINK_OPEN) :].partition(_THINK_CLOSE)
            thought_pieces = chunk_text(thought)
            first = len(events) + 2
            # the tags arrive split across chunks, as real streams cut them
            for piece in ["<th", "ink>\n", *thought_pieces, "\n</th", "ink>\n\n"]:
                events.append(chunk({"content": piece}))
            cut_at = first + max(1, len(thought_pieces) // 2)
            content = text
        for piece in chunk_text(content):
            events.append(chunk({"content": piece}))
        if rendered.refusal:
            for piece in chunk_text(rendered.refusal):
                events.append(chunk({"refusal": piece}))
        for index, (call_id, name, arguments) in enumerate(rendered.calls):
            events.append(
                chunk(
                    {
                        "tool_calls": [
                            _call_json(
                                rendered,
                                index,
                                {
                                    "index": index,
                                    "id": call_id,
                                    "type": "function",
                                    "function": {"name": name, "arguments": ""},
                                },
                            )
                        ]
                    }
                )
            )
            for piece in split_json(arguments):
                events.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
        if parsed.model.family == "mistral":  # usage on its last chunk, never asked for
            events.append(
                sse_data(
                    {
                        **base,
                        "choices": [
                            {
                                "index": 0,
                                "delta": {},
                                "logprobs": None,
                                "finish_reason": rendered.finish,
                            }
                        ],
                        "usage": _usage(parsed, reply, cached),
                    }
                )
            )
        else:
            events.append(chunk({}, rendered.finish))
        if parsed.include_usage:
            events.append(sse_data({**base, "choices": [], "usage": _usage(parsed, reply, cached)}))
        events.append(sse_data("[DONE]"))
        stream_headers = {**headers, "cache-control": "no-cache"}
        return StreamReply(events, "text/event-stream; charset=utf-8", stream_headers, cut_at)


def _thinking_chunk(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": [{"type": "text", "text": text}]}


def _reasoning_deltas(rendered: _Rendered) -> list[dict[str, Any]]:
    """The deltas that stream a reply's reasoning: its field piece by piece (with the matching
    ``reasoning_details`` fragments, then the items' proofs whole), or its ``thinking`` chunk
    piece by piece."""
    if rendered.thinking_chunk is not None:
        return [
            {"content": [_thinking_chunk(piece)]}
            for piece in chunk_text(rendered.thinking_chunk) or [""]
        ]
    deltas: list[dict[str, Any]] = []
    for item in rendered.details or ({},):
        key = "text" if "text" in item else "summary" if "summary" in item else None
        frame = {k: v for k, v in item.items() if k not in ("text", "summary", "signature", "data")}
        if key is None and item:  # an encrypted item arrives whole
            deltas.append({"content": None, "reasoning_details": [item]})
            continue
        text = str(item.get(key, "")) if key is not None else rendered.reasoning or ""
        for piece in chunk_text(text) or [""]:
            delta: dict[str, Any] = {"content": None}
            if rendered.field is not None:
                delta[rendered.field] = piece
            if item:
                delta["reasoning_details"] = [{**frame, key: piece}]
            deltas.append(delta)
        if "signature" in item:
            signed = {**frame, "text": "", "signature": item["signature"]}
            deltas.append({"content": None, "reasoning_details": [signed]})
    return deltas
