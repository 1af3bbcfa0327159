"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (OpenAI and compatible
endpoints; ``/chat/completions`` too, DeepSeek's base URL has no ``/v1``) and Azure's
``POST /openai/deployments/{deployment}/chat/completions?api-version=...`` and
``/openai/v1/chat/completions``. JSON and SSE (``data: {chunk}`` ... ``data: [DONE]``,
with a last usage chunk when ``stream_options.include_usage`` is set).

The model name picks the reasoning *dialect* (see :func:`.rules.openai_profile`):

* OpenAI models (``gpt-*``, ``o1*``, ``o3*``, ``o4*``) reason internally and return no
  reasoning text, only ``completion_tokens_details.reasoning_tokens``; reasoning sent
  back is ignored. ``gpt-3*``, ``gpt-4*`` and ``gpt-5-chat*`` do not reason and refuse
  ``reasoning_effort``.
* DeepSeek (except ``deepseek-chat``), Qwen/QwQ, Kimi/Moonshot: ``reasoning_content``
  on the message (``delta.reasoning_content`` when streaming, before the content).
  DeepSeek in thinking mode requires every assistant message with ``tool_calls`` to carry
  its ``reasoning_content`` back.
* OpenRouter-style names (``vendor/model``) and Ollama-style tags (``qwen3:8b``): the
  ``reasoning`` field.
* MiniMax: ``<think>...</think>`` inline at the start of ``content``.

Reasoning text on these endpoints is unsigned: nothing is sealed, nothing is verified.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

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
from ..framework import JsonReply, StreamReply, WireError, WireRequest, WireRoute
from ..model import (
    Call,
    CallResult,
    Conversation,
    Reply,
    Settings,
    StopReason,
    ToolSpec,
    Turn,
)
from .rules import (
    OpenAIError,
    OpenAIProfile,
    OpenAIWire,
    brain_effort,
    check_effort,
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
# https://github.com/langgenius/dify-official-plugins/issues/2306 and
# https://github.com/CherryHQ/cherry-studio/issues/11751 (message, index and body)
_DEEPSEEK_MISSING = (
    "Missing `reasoning_content` field in the assistant message at message index {index}. "
    "For more information, please refer to "
    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
_THINK_OPEN = "<think>\n"
_THINK_CLOSE = "\n</think>\n\n"


@dataclass(frozen=True)
class _ChatRequest:
    model: OpenAIProfile
    model_name: str
    conversation: Conversation
    settings: Settings
    stream: bool
    include_usage: bool


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


def _split_think(content: str) -> tuple[str, str]:
    """(thinking, text) of a content that may start with ``<think>...</think>``."""
    stripped = content.lstrip()
    if stripped.startswith("<think>") and "</think>" in stripped:
        inner, _, rest = stripped[len("<think>") :].partition("</think>")
        return inner.strip(), rest.lstrip()
    return "", content


def _thinking_requested(model: OpenAIProfile, body: Mapping[str, Any], effort: str | None) -> bool:
    """Whether a compatible endpoint thinks for this request (its own switches)."""
    if effort == "none":
        return False
    if model.family == "deepseek":
        switch = as_mapping(body.get("thinking")).get("type")
        if switch in ("enabled", "disabled"):
            return switch == "enabled"
        return model.reasons
    if model.family == "qwen" and body.get("enable_thinking") is False:
        return False
    if model.family == "router":
        reasoning = as_mapping(body.get("reasoning"))
        if reasoning.get("enabled") is False or reasoning.get("effort") == "none":
            return False
        if body.get("think") is False:
            return False
    return model.reasons


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


def _parse(request: WireRequest) -> _ChatRequest:
    body = mapping_or_none(request.body)
    if body is None:
        raise OpenAIError(
            400,
            "We could not parse the JSON body of your request. (HINT: This likely means you "
            "aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, "
            "but what was sent was not valid JSON. If you have trouble figuring out how to fix "
            "this, please contact us through our help center at help.openai.com.)",
        )
    azure = is_azure(request)
    deployment = request.path_params.get("deployment")
    raw_model = body.get("model")
    if not isinstance(raw_model, str) or not raw_model:
        if deployment is None:
            raise OpenAIError(400, "you must provide a model parameter")
        raw_model = deployment
    model = openai_profile(raw_model)
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
        messages.append(message)

    effort = check_effort(model, body.get("reasoning_effort"), "reasoning_effort")
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

    if model.dialect == "hidden" or model.dialect == "none":
        thinking, brain_level = brain_effort(effort)
    else:
        thinking = _thinking_requested(model, body, body.get("reasoning_effort"))
        brain_level = brain_effort(body.get("reasoning_effort") or "medium")[1]
    if model.family == "deepseek" and thinking:
        for index, message in enumerate(messages):
            if (
                message.get("role") == "assistant"
                and as_list(message.get("tool_calls"))
                and "reasoning_content" not in message
            ):
                raise OpenAIError(
                    400,
                    _DEEPSEEK_MISSING.format(index=index),
                    code="invalid_request_error",
                )

    conversation = _conversation(model, messages, tools)
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    settings = Settings(
        thinking=thinking,
        effort=brain_level,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
        tool_choice=choice,
        tool_name=tool_name,
        parallel_tool_calls=body.get("parallel_tool_calls") is not False,
    )
    options = as_mapping(body.get("stream_options"))
    return _ChatRequest(
        model=model,
        model_name=raw_model,
        conversation=conversation,
        settings=settings,
        stream=body.get("stream") is True,
        include_usage=options.get("include_usage") is True,
    )


def _conversation(
    model: OpenAIProfile, messages: Sequence[Mapping[str, Any]], tools: tuple[ToolSpec, ...]
) -> Conversation:
    system: list[str] = []
    turns: list[Turn] = []
    results: list[CallResult] = []
    for message in messages:
        role = message.get("role")
        if role == "tool":
            results.append(
                CallResult(str(message.get("tool_call_id")), text_of(message.get("content")))
            )
            continue
        if results:
            turns.append(Turn("user", results=tuple(results)))
            results = []
        content = text_of(message.get("content"))
        if role in ("system", "developer"):
            system.append(content)
        elif role == "user":
            turns.append(Turn("user", text=content))
        elif role == "assistant":
            thinking = ""
            if model.dialect == "reasoning_content":
                thinking = str(message.get("reasoning_content") or "")
            elif model.dialect == "reasoning":
                thinking = str(message.get("reasoning") or "")
            elif model.dialect == "think_tags":
                thinking, content = _split_think(content)
            calls = tuple(
                Call(
                    str(call.get("id")),
                    str(as_mapping(call.get("function")).get("name")),
                    parse_arguments(as_mapping(call.get("function")).get("arguments")),
                )
                for call in (as_mapping(c) for c in as_list(message.get("tool_calls")))
            )
            turns.append(Turn("assistant", text=content, thinking=thinking, calls=calls))
    if results:
        turns.append(Turn("user", results=tuple(results)))
    return Conversation(system="\n".join(s for s in system if s), turns=tuple(turns), tools=tools)


# --- rendering -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Rendered:
    """A reply in Chat Completions terms."""

    reasoning: str | None  # the text of the dialect's reasoning field
    content: str | None  # the message content (``<think>`` tags included)
    refusal: str | None
    calls: tuple[tuple[str, str, str], ...]  # (id, name, arguments JSON)
    finish: str


def _render(parsed: _ChatRequest, reply: Reply, seed: str) -> _Rendered:
    model = parsed.model
    thinking = reply.thinking if reply.thinking is not None and not reply.redacted else None
    calls: list[tuple[str, str, str]] = []
    for index, call in enumerate(reply.tool_calls):
        if call.id is not None:
            call_id = call.id
        elif model.family == "deepseek":
            call_id = stable_id(f"call_{index:02d}_", seed, str(index), length=24)
        else:
            call_id = stable_id("call_", seed, str(index), length=24)
        calls.append((call_id, call.name, arguments_json(call.arguments)))
    text: str | None = reply.text
    refusal: str | None = None
    if reply.stop == "refusal":
        refusal, text = reply.text, None
    elif model.family == "openai" and calls:
        text = None  # OpenAI models send no content beside their tool calls
    elif not text and calls:
        text = None
    reasoning: str | None = None
    if model.dialect in ("reasoning_content", "reasoning"):
        reasoning = thinking
    elif model.dialect == "think_tags" and thinking is not None:
        text = _THINK_OPEN + thinking + _THINK_CLOSE + (text or "")
    return _Rendered(reasoning, text, refusal, tuple(calls), _FINISH[reply.stop])


def _usage(parsed: _ChatRequest, reply: Reply) -> dict[str, Any]:
    usage = reply.usage
    assert usage is not None
    prompt, completion = usage.input_tokens, usage.output_tokens
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if parsed.model.family == "deepseek":
        out["prompt_tokens_details"] = {"cached_tokens": 0}
        out["prompt_cache_hit_tokens"] = 0
        out["prompt_cache_miss_tokens"] = prompt
        out["completion_tokens_details"] = {"reasoning_tokens": usage.thinking_tokens}
    else:
        out["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
        out["completion_tokens_details"] = {
            "reasoning_tokens": usage.thinking_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        }
    return out


def _reasoning_field(model: OpenAIProfile) -> str:
    return "reasoning" if model.dialect == "reasoning" else "reasoning_content"


class OpenAIChatAPI(OpenAIWire):
    """The Chat Completions wire API (OpenAI, Azure and compatible endpoints)."""

    name: ClassVar[str] = "openai"
    operation: ClassVar[str] = "ChatCompletions_Create"

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/v1/chat/completions", self.completions),
            WireRoute("/chat/completions", self.completions),
            WireRoute("/openai/deployments/{deployment}/chat/completions", self.completions),
            WireRoute("/openai/v1/chat/completions", self.completions),
        )

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        return sse_data({"error": stream_error_payload(error)})

    # --- handler -----------------------------------------------------------------------

    def completions(self, request: WireRequest) -> JsonReply | StreamReply:
        parsed = _parse(request)
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest() + "\x1f" + parsed.model_name
        rendered = _render(parsed, reply, seed)
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
            return self._stream(parsed, reply, rendered, envelope, fingerprint, headers)
        message: dict[str, Any] = {"role": "assistant", "content": rendered.content}
        if rendered.reasoning is not None:
            message[_reasoning_field(parsed.model)] = rendered.reasoning
        if parsed.model.family == "openai":
            message["refusal"] = rendered.refusal
            message["annotations"] = []
        if rendered.calls:
            message["tool_calls"] = [
                {
                    **({"index": i} if deepseek else {}),
                    "id": call_id,
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
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
            "usage": _usage(parsed, reply),
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
        field = _reasoning_field(parsed.model)
        if rendered.reasoning is not None:
            pieces = chunk_text(rendered.reasoning) or [""]
            for index, piece in enumerate(pieces):
                delta: dict[str, Any] = {"content": None, field: piece}
                if index == 0:
                    delta = {"role": "assistant", **delta}
                events.append(chunk(delta))
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
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for piece in split_json(arguments):
                events.append(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                )
        events.append(chunk({}, rendered.finish))
        if parsed.include_usage:
            events.append(sse_data({**base, "choices": [], "usage": _usage(parsed, reply)}))
        events.append(sse_data("[DONE]"))
        stream_headers = {**headers, "cache-control": "no-cache"}
        return StreamReply(events, "text/event-stream; charset=utf-8", stream_headers, cut_at)
