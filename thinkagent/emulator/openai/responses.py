"""OpenAI Responses: ``POST /v1/responses`` (scope ``openai``), Azure's
``POST /openai/responses?api-version=...`` and ``/openai/v1/responses`` (scope ``azure``), and
``/{dialect}/v1/responses``. JSON and typed SSE events (``event: response.x`` + ``data:
{"type": "response.x", ..., "sequence_number": n}``). Besides OpenAI's models it serves
DeepSeek's Responses format (``deepseek-*``: unsigned ``reasoning_text`` items, a reasoning item
required before each call while thinking) and xAI's (``grok-*``: items without an id, sealed for
scope ``xai``); on ``/lmstudio/v1/responses`` LM Studio's open Responses server (unsigned
``reasoning_text`` items, a preamble message before function calls, and function-call arguments
streamed only in ``response.function_call_arguments.done`` and ``output_item.done``); on
``/mantle/v1/responses`` Bedrock Mantle (OpenAI's item shapes, sealed for scope
``bedrock-mantle``). Images and files in the input are read as ``Media``, and ``text.format``
``json_schema`` shapes the answer.

``reasoning.context`` (``auto``, ``current_turn``, ``all_turns``) is echoed as the mode in
effect: the gpt-5.6 family defaults to ``all_turns``, earlier models to ``current_turn``
(openai-python ``shared_params/reasoning.py``); ``reasoning.mode`` is echoed as sent. Messages
of gpt-5.3 and later models carry ``phase`` (``commentary`` for a preamble before function
calls, ``final_answer``).

Compaction (developers.openai.com/api/docs/guides/compaction): with ``context_management:
[{"type": "compaction", "compact_threshold": N}]`` a request whose input reaches ``N`` tokens
gets a ``compaction`` item (``cmp_...``) first in its output, its ``encrypted_content`` sealed
like reasoning and carrying the conversation it stands for; ``POST /v1/responses/compact``
returns the user messages followed by one such item. A compaction item in the input must
verify (``invalid_encrypted_content`` otherwise, as for reasoning); everything before the latest
one is read from it, so items before it may be left out.

A reasoning model's output is a ``reasoning`` item (``rs_...``; ``summary`` parts when
``reasoning.summary`` is set; ``encrypted_content`` when ``include`` asks for
``reasoning.encrypted_content``), then either ``function_call`` items or one assistant
``message``. The encrypted content is a Fernet-style token (``gAAAAA...``) that carries
the reasoning enciphered and sealed by the emulator's signer under the endpoint's scope:
replayed, it decrypts only on the scope that issued it, and only unaltered. Responses
created with ``store`` (the default) also keep their reasoning items in memory, so an item
replayed by id alone is found.

Input rules, checked in this order, with the real status and message: a reasoning item
must be followed by the item it preceded (a function call or an assistant message);
encrypted content must verify; a reasoning item without it must be stored; each
``function_call_output`` must answer an earlier ``function_call``; each
``function_call`` must have its output.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from ..brain import ConversationBuilder, prefix_tokens
from ..encoding import (
    arguments_json,
    as_list,
    as_mapping,
    b64decode,
    b64encode,
    chunk_text,
    hex_id,
    list_or_none,
    mapping_or_none,
    split_json,
    sse_event,
    stable_id,
)
from ..framework import EmulatorState, JsonReply, StreamReply, WireError, WireRequest, WireRoute
from ..model import (
    Call,
    CallResult,
    Conversation,
    Media,
    Reply,
    ServerToolSpec,
    ServerUse,
    Settings,
    ToolSpec,
    Turn,
)
from ..signing import Signer, expand
from . import server_tools
from .bodies import check_responses
from .caching import AutomaticCache
from .compat import DEEPSEEK_RESPONSES_MISSING
from .rules import (
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

__all__ = ["OpenAIResponsesAPI", "open_reasoning", "seal_reasoning"]

#: Signing kinds of encrypted reasoning: the seal over the content, and the key stream.
KIND_REASONING = "openai.reasoning"
KIND_REASONING_KEY = "openai.reasoning.key"

_FERNET_VERSION = 0x80
_FERNET_TIME = 1_757_687_103  # a fixed timestamp keeps tokens deterministic
_SUMMARY_MODES = ("auto", "concise", "detailed")
_ENCRYPTED = "reasoning.encrypted_content"
_OUTPUT_ITEM_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "image_generation_call",
        "local_shell_call",
        "shell_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
    }
)
_STORE_LIMIT = 10_000
#: The model families this wire serves: OpenAI's (and Azure's), DeepSeek's Responses format
#: (unsigned ``reasoning_text`` items), xAI's (sealed items without an id), LM Studio's
#: (unsigned ``reasoning_text`` items, no argument deltas) and Bedrock Mantle's.
_FAMILIES = frozenset({"openai", "deepseek", "xai", "lmstudio", "mantle"})
_CONTEXTS = ("auto", "current_turn", "all_turns")
#: guess: the tokens a compaction item renders as (its size is not published; it is meant to
#: carry the conversation "using fewer tokens")
_SUMMARY_TOKENS = 64
_GPT_VERSION_RE = re.compile(r"^(?:ft:)?gpt-(\d+)(?:\.(\d+))?", re.IGNORECASE)


# --- encrypted reasoning -----------------------------------------------------------------


def _xor(data: bytes, key: bytes) -> bytes:
    if not data:
        return b""
    return (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(len(data), "big")


def seal_reasoning(signer: Signer, scope: str, item_id: str, text: str) -> str:
    """The ``encrypted_content`` of reasoning item ``item_id``: a Fernet-style token
    (version byte, timestamp, IV) that carries ``text`` enciphered with a key stream
    derived from the signer's secret and sealed with :meth:`Signer.seal` for ``scope``."""
    content = item_id.encode() + b"\x00" + text.encode("utf-8", "surrogatepass")
    seal = signer.seal(scope, KIND_REASONING, content)
    iv = hashlib.sha256(seal).digest()[:16]
    key = expand(signer.seal(scope, KIND_REASONING_KEY, iv, size=96), len(content))
    token = (
        bytes((_FERNET_VERSION,))
        + _FERNET_TIME.to_bytes(8, "big")
        + iv
        + len(seal).to_bytes(2, "big")
        + seal
        + _xor(content, key)
    )
    return b64encode(token, urlsafe=True)


def open_reasoning(signer: Signer, scope: str, token: str) -> tuple[str, str] | None:
    """``(item id, reasoning text)`` from an ``encrypted_content`` issued for ``scope``
    by this signer, or ``None`` if it does not decrypt and verify."""
    raw = b64decode(token, urlsafe=True)
    if raw is None or len(raw) < 27 or raw[0] != _FERNET_VERSION:
        return None
    iv = raw[9:25]
    seal_len = int.from_bytes(raw[25:27], "big")
    seal = raw[27 : 27 + seal_len]
    cipher = raw[27 + seal_len :]
    if len(seal) != seal_len or hashlib.sha256(seal).digest()[:16] != iv:
        return None
    key = expand(signer.seal(scope, KIND_REASONING_KEY, iv, size=96), len(cipher))
    content = _xor(cipher, key)
    if not signer.verify(scope, KIND_REASONING, seal, content):
        return None
    item_id, _, text = content.partition(b"\x00")
    try:
        return item_id.decode(), text.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None


# --- request -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ResponsesRequest:
    scope: str
    model: OpenAIProfile
    model_name: str
    conversation: Conversation
    settings: Settings
    effort: str | None
    summary: str | None
    include_encrypted: bool
    store: bool
    stream: bool
    instructions: str | None
    max_output_tokens: int | None
    parallel: bool
    tool_choice: Any
    tools: list[dict[str, Any]]
    items: list[Mapping[str, Any]]
    prefix_totals: tuple[int, ...]  # the input tokens of the first k items, for each k from 0
    texts: Mapping[int, str]  # the reasoning items' texts, by item index
    compacted: Mapping[int, tuple[Turn, ...]]  # what each compaction item stands for
    context: str | None  # the reasoning.context in effect (None: the model does not reason)
    mode: Any
    compact_threshold: int | None
    rendered_tokens: int  # the input as the model reads it: a compaction item as its summary
    include: tuple[Any, ...] = ()
    listed: frozenset[str] = frozenset()  # MCP servers whose tools the input lists


def _input_error(message: str, status: int = 400) -> OpenAIError:
    return OpenAIError(status, message, param="input")


def _tools(raw: Any) -> tuple[tuple[ToolSpec, ...], list[dict[str, Any]]]:
    """The neutral tools and the tools as the response echoes them."""
    specs: list[ToolSpec] = []
    echoed: list[dict[str, Any]] = []
    for index, item in enumerate(as_list(raw)):
        tool = as_mapping(item)
        if tool.get("type") != "function":
            echoed.append(dict(tool))
            continue
        if not isinstance(tool.get("name"), str):
            raise missing_parameter(f"tools[{index}].name")
        specs.append(tool_spec(tool["name"], tool.get("description"), tool.get("parameters")))
        echoed.append(
            {
                "description": tool.get("description"),
                "name": tool["name"],
                "parameters": tool.get("parameters"),
                "strict": tool.get("strict", True),
                "type": "function",
            }
        )
    return tuple(specs), echoed


#: The roles of an input message; a `developer` or `system` one may stand anywhere in `input`
#: (openai-python `types/responses/easy_input_message_param.py`: their instructions rank above
#: the user's; Codex sends developer items between turns). The refusal of another role is
#: OpenAI's enum text (a guess for this field).
_INPUT_ROLES = ("user", "assistant", "system", "developer")


def _items(raw: Any) -> list[Mapping[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"type": "message", "role": "user", "content": raw}]
    items = list_or_none(raw)
    if items is None:
        raise OpenAIError(
            400,
            "Invalid type for 'input': expected one of a string or an array of input items.",
            param="input",
            code="invalid_type",
        )
    out: list[Mapping[str, Any]] = []
    for index, item in enumerate(items):
        entry = mapping_or_none(item)
        if entry is None:
            raise OpenAIError(
                400,
                f"Invalid type for 'input[{index}]': expected an input item object.",
                param=f"input[{index}]",
                code="invalid_type",
            )
        if entry.get("type") is None and "role" in entry:
            entry = {**entry, "type": "message"}
        if entry.get("type") == "message" and entry.get("role") not in _INPUT_ROLES:
            raise invalid_value(entry.get("role"), _INPUT_ROLES, f"input[{index}].role")
        out.append(entry)
    return out


def _follows(item: Mapping[str, Any] | None) -> bool:
    """Whether ``item`` can be the item a reasoning item preceded."""
    if item is None:
        return False
    kind = item.get("type")
    return kind in _OUTPUT_ITEM_TYPES or (kind == "message" and item.get("role") == "assistant")


class _Store:
    """Reasoning items of stored responses, by (scope, id): what ``store`` keeps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[tuple[str, str], str] = OrderedDict()

    def put(self, scope: str, item_id: str, text: str) -> None:
        with self._lock:
            self._items[(scope, item_id)] = text
            while len(self._items) > _STORE_LIMIT:
                self._items.popitem(last=False)

    def get(self, scope: str, item_id: str) -> str | None:
        with self._lock:
            return self._items.get((scope, item_id))

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _reasoning_texts(
    items: Sequence[Mapping[str, Any]],
    scope: str,
    signer: Signer,
    store: _Store,
    stored: bool,
    model: OpenAIProfile,
) -> dict[int, str]:
    """Check the reasoning items of ``input``; returns their text by input index. DeepSeek's
    items carry their reasoning as ``reasoning_text`` content, unsigned; xAI's are sealed
    for its own scope and need no id."""
    for index, item in enumerate(items):
        if item.get("type") == "reasoning" and not _follows(
            items[index + 1] if index + 1 < len(items) else None
        ):
            # https://github.com/continuedev/continue/issues/8933 (message, param "input")
            raise _input_error(
                f"Item '{item.get('id')}' of type 'reasoning' was provided without its "
                "required following item."
            )
    texts: dict[int, str] = {}
    for index, item in enumerate(items):
        if item.get("type") != "reasoning":
            continue
        if model.family in ("deepseek", "lmstudio"):
            texts[index] = text_of(item.get("content"))
            continue
        item_id = str(item.get("id") or "")
        token = item.get("encrypted_content")
        if model.family == "xai":
            opened = open_reasoning(signer, scope, token) if isinstance(token, str) else None
            if opened is None:
                # https://github.com/NousResearch/hermes-agent/issues/32617
                raise OpenAIError(400, "Could not decrypt the provided encrypted_content")
            texts[index] = opened[1]
            continue
        if isinstance(token, str) and token:
            opened = open_reasoning(signer, scope, token)
            if opened is None or opened[0] != item_id:
                raise _unverified(item_id)
            texts[index] = opened[1]
            continue
        text = store.get(scope, item_id)
        if text is None:
            # https://github.com/can1357/oh-my-pi/issues/41
            message = f"Item with id '{item_id}' not found."
            if not stored:
                message += (
                    " Items are not persisted when `store` is set to false. Try again with "
                    "`store` set to true, or remove this item from your input."
                )
            raise _input_error(message, 404)
        texts[index] = text
    return texts


def _unverified(item_id: str) -> OpenAIError:
    """The refusal of an ``encrypted_content`` that does not verify (a reasoning or a
    compaction item)."""
    # https://github.com/openai/codex/issues/35334 (message, also for `cmp_` items) and
    # https://github.com/Wei-Shaw/sub2api/issues/2863 (code and body)
    return OpenAIError(
        400,
        f"The encrypted content for item {item_id} could not be verified. "
        "Reason: Encrypted content could not be decrypted or parsed.",
        code="invalid_encrypted_content",
    )


def _compacted(
    items: Sequence[Mapping[str, Any]], scope: str, signer: Signer
) -> dict[int, tuple[Turn, ...]]:
    """The conversation each compaction item of ``input`` stands for, by item index; one that
    does not verify on this scope is refused."""
    out: dict[int, tuple[Turn, ...]] = {}
    for index, item in enumerate(items):
        if item.get("type") != "compaction":
            continue
        item_id = str(item.get("id") or "")
        token = item.get("encrypted_content")
        opened = open_reasoning(signer, scope, token) if isinstance(token, str) else None
        turns = _load_turns(opened[1]) if opened is not None else None
        if opened is None or turns is None or (item_id and opened[0] != item_id):
            raise _unverified(item_id)
        out[index] = turns
    return out


def _dump_turns(turns: Sequence[Turn]) -> str:
    """A conversation's turns as the text a compaction item carries (media left out)."""
    return json.dumps(
        [
            {
                "role": t.role,
                "text": t.text,
                "thinking": t.thinking,
                "calls": [[c.id, c.name, dict(c.arguments)] for c in t.calls],
                "results": [[r.call_id, r.content, r.is_error] for r in t.results],
            }
            for t in turns
        ]
    )


def _load_turns(text: str) -> tuple[Turn, ...] | None:
    """The turns a compaction item carries (None: not a compaction item's text)."""
    try:
        raw = json.loads(text)
        return tuple(
            Turn(
                t["role"],
                text=t["text"],
                thinking=t["thinking"],
                calls=tuple(Call(c[0], c[1], c[2]) for c in t["calls"]),
                results=tuple(CallResult(r[0], r[1], r[2]) for r in t["results"]),
            )
            for t in raw
        )
    except (ValueError, TypeError, KeyError, IndexError):
        return None


def _check_deepseek(items: Sequence[Mapping[str, Any]]) -> None:
    """DeepSeek in thinking mode: every function call (or run of parallel calls) comes right
    after its reasoning item."""
    for index, item in enumerate(items):
        if item.get("type") != "function_call":
            continue
        before = index - 1
        while before >= 0 and items[before].get("type") == "function_call":
            before -= 1
        if before < 0 or items[before].get("type") != "reasoning":
            raise OpenAIError(400, DEEPSEEK_RESPONSES_MISSING, code="invalid_request_error")


def _check_calls(
    items: Sequence[Mapping[str, Any]], compacted: Mapping[int, tuple[Turn, ...]]
) -> None:
    """Each ``function_call_output`` answers an earlier call (one a compaction item stands for
    counts), and each call has its output."""
    called = {c.id for turns in compacted.values() for t in turns for c in t.calls}
    answered: set[str] = set()
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            called.add(str(item.get("call_id")))
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in called:
                # https://github.com/continuedev/continue/issues/10092
                raise _input_error(
                    f"No tool call found for function call output with call_id {call_id}."
                )
            answered.add(call_id)
    for item in items:
        if item.get("type") == "function_call" and str(item.get("call_id")) not in answered:
            # https://github.com/tjardoo/openai-client/pull/124
            raise _input_error(f"No tool output found for function call {item.get('call_id')}.")


def _media(content: Any, param: str) -> tuple[Media, ...]:
    """The images and files of a message's (or a function call output's) input parts."""
    media: list[Media] = []
    for k, raw in enumerate(as_list(content) if isinstance(content, list) else []):
        part = as_mapping(raw)
        if part.get("type") == "input_image":
            media.append(image_media(part.get("image_url"), f"{param}[{k}].image_url"))
        elif part.get("type") == "input_file":
            media.append(file_media(part, f"{param}[{k}]"))
    return tuple(media)


def _conversation(
    items: Sequence[Mapping[str, Any]],
    texts: Mapping[int, str],
    instructions: str,
    tools: tuple[ToolSpec, ...],
    compacted: Mapping[int, tuple[Turn, ...]],
    server: tuple[ServerToolSpec, ...] = (),
    listed: set[str] | None = None,
) -> tuple[Conversation, tuple[int, ...]]:
    """The neutral conversation of ``input`` (a compaction item stands for everything before
    it: what it carries replaces the items before it), and the input tokens of each prefix of
    ``input``, as :func:`~thinkagent.emulator.brain.prefix_tokens` counts the conversation of
    its first ``k`` items (``k`` from 0), for prompt caching."""
    built = ConversationBuilder(tools, server)
    built.add_system(instructions)
    totals = [built.tokens]
    listed = set() if listed is None else listed

    def assistant(
        text: str = "",
        thinking: str = "",
        calls: tuple[Call, ...] = (),
        uses: tuple[ServerUse, ...] = (),
    ) -> None:
        last = built.last
        if last is not None and last.role == "assistant" and not thinking:
            built.merge(text=text, calls=calls, uses=uses)
        else:
            built.append(
                Turn("assistant", text=text, thinking=thinking, calls=calls, server_uses=uses)
            )

    for index, item in enumerate(items):
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            content = text_of(item.get("content"))
            if role in ("system", "developer"):
                built.add_system(content)
            elif role == "assistant":
                assistant(text=content)
            else:
                media = _media(item.get("content"), f"input[{index}].content")
                built.append(Turn("user", text=content, media=media))
        elif kind == "reasoning":
            built.append(Turn("assistant", thinking=texts.get(index, "")))
        elif kind == "compaction":
            built.restart(compacted.get(index, ()))
        elif kind == "function_call":
            call = Call(
                str(item.get("call_id")),
                str(item.get("name")),
                parse_arguments(item.get("arguments")),
            )
            assistant(calls=(call,))
        elif kind in server_tools.HOSTED_ITEMS:
            use = server_tools.read_item(item, listed)
            if use is not None:
                assistant(uses=(use,))
        elif kind == "mcp_approval_response":
            built.append(server_tools.approval_turn(item))
        elif kind == "function_call_output":
            output = item.get("output")
            media = _media(output, f"input[{index}].output")
            result = CallResult(str(item.get("call_id")), text_of(output), media=media)
            last = built.last
            if last is not None and last.role == "user" and last.results:
                built.merge(results=(result,))
            else:
                built.append(Turn("user", results=(result,)))
        totals.append(built.tokens)
    return built.conversation(), tuple(totals)


def _response_schema(raw: Any) -> Mapping[str, Any] | None:
    """The JSON schema ``text.format`` asks the answer to follow (None: free text)."""
    text_format = mapping_or_none(as_mapping(raw).get("format"))
    if text_format is None:
        return None
    kind = text_format.get("type")
    if kind not in ("text", "json_object", "json_schema"):
        raise invalid_value(kind, ("text", "json_schema", "json_object"), "text.format.type")
    if kind != "json_schema":
        return None
    if not isinstance(text_format.get("name"), str):
        raise missing_parameter("text.format.name")
    return as_mapping(text_format.get("schema"))


def _parse(request: WireRequest, signer: Signer, store: _Store) -> _ResponsesRequest:
    body = mapping_or_none(request.body)
    if body is None:
        raise OpenAIError(400, "Invalid type for request body: expected an object.")
    check_responses(body)
    raw_model = body.get("model")
    if not isinstance(raw_model, str) or not raw_model:
        raise missing_parameter("model")
    model = openai_profile(
        raw_model, azure=is_azure(request), knob=request.path_params.get("dialect")
    )
    if model is None or model.family not in _FAMILIES:
        raise model_not_found(raw_model)
    scope = _scope(request, model)
    previous = body.get("previous_response_id")
    if previous is not None:
        raise OpenAIError(
            404,
            f"Previous response with id '{previous}' not found.",
            param="previous_response_id",
        )
    reasoning = as_mapping(body.get("reasoning"))
    effort = check_effort(model, reasoning.get("effort"), "reasoning.effort")
    summary = reasoning.get("summary", reasoning.get("generate_summary"))
    if summary is not None and summary not in _SUMMARY_MODES:
        raise invalid_value(summary, ("concise", "detailed", "auto"), "reasoning.summary")
    context = _context(model, reasoning.get("context")) if effort is not None else None
    mode = reasoning.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise OpenAIError(
            400,
            "Invalid type for 'reasoning.mode': expected a string.",
            param="reasoning.mode",
            code="invalid_type",
        )
    threshold = _compact_threshold(body.get("context_management"))
    specs, echoed_tools = _tools(body.get("tools"))
    hosted = server_tools.declared(body.get("tools"), model)
    choice, tool_name = tool_choice(body.get("tool_choice"), nested=False)
    stored = body.get("store") is not False
    items = _items(body.get("input"))
    texts = _reasoning_texts(items, scope, signer, store, stored, model)
    compacted = _compacted(items, scope, signer)
    _check_calls(items, compacted)
    server_tools.check_approvals(items)
    if model.family == "deepseek" and brain_effort(effort)[0]:
        _check_deepseek(items)
    instructions = body.get("instructions")
    instructions = instructions if isinstance(instructions, str) else None
    listed: set[str] = set()
    conversation, totals = _conversation(
        items, texts, instructions or "", specs, compacted, hosted, listed
    )
    rendered = conversation
    if compacted:  # what follows the latest compaction item, and that item as a summary
        summaries = dict.fromkeys(compacted, ())
        rendered, _ = _conversation(items, texts, instructions or "", specs, summaries, hosted)
    thinking, level = brain_effort(effort)
    max_output = body.get("max_output_tokens")
    max_output = max_output if isinstance(max_output, int) else None
    parallel = body.get("parallel_tool_calls") is not False
    settings = Settings(
        thinking=thinking,
        effort=level,
        max_tokens=max_output,
        tool_choice=choice,
        tool_name=tool_name,
        parallel_tool_calls=parallel,
        response_schema=_response_schema(body.get("text")),
    )
    return _ResponsesRequest(
        scope=scope,
        model=model,
        model_name=raw_model,
        conversation=conversation,
        settings=settings,
        effort=effort,
        summary=cast("str | None", summary),
        include_encrypted=_ENCRYPTED in as_list(body.get("include")),
        store=stored,
        stream=body.get("stream") is True,
        instructions=instructions,
        max_output_tokens=max_output,
        parallel=parallel,
        tool_choice=body.get("tool_choice", "auto"),
        tools=echoed_tools,
        items=items,
        prefix_totals=totals,
        texts=texts,
        compacted=compacted,
        context=context,
        mode=mode,
        compact_threshold=threshold,
        rendered_tokens=sum(prefix_tokens(rendered)) + (_SUMMARY_TOKENS if compacted else 0),
        include=tuple(as_list(body.get("include"))),
        listed=frozenset(listed),
    )


def _scope(request: WireRequest, model: OpenAIProfile) -> str:
    """Whose proofs a request's items carry: Azure's, xAI's, Bedrock Mantle's, or OpenAI's."""
    if is_azure(request):
        return "azure"
    if model.family == "mantle":
        return "bedrock-mantle"
    return "xai" if model.family == "xai" else "openai"


def _gpt_version(name: str) -> tuple[int, int] | None:
    found = _GPT_VERSION_RE.match(name)
    return (int(found.group(1)), int(found.group(2) or 0)) if found is not None else None


def _context(model: OpenAIProfile, asked: Any) -> str:
    """The ``reasoning.context`` in effect: the one asked for on the gpt-5.6 family and later
    (their default ``all_turns``), ``current_turn`` on earlier models."""
    if asked is not None and asked not in _CONTEXTS:
        raise invalid_value(asked, _CONTEXTS, "reasoning.context")
    version = _gpt_version(model.name)
    if version is None or version < (5, 6):
        # guess: what an earlier model does with an explicit `all_turns` is not published
        # (the parameter is documented for gpt-5.6 and newer): it keeps its own mode.
        return "current_turn"
    return "all_turns" if asked in (None, "auto") else str(asked)


def _compact_threshold(raw: Any) -> int | None:
    """The ``compact_threshold`` of a ``context_management`` list (None: no compaction)."""
    if raw is None:
        return None
    entries = list_or_none(raw)
    if entries is None:
        raise OpenAIError(
            400,
            "Invalid type for 'context_management': expected an array of objects.",
            param="context_management",
            code="invalid_type",
        )
    threshold: int | None = None
    for index, raw_entry in enumerate(entries):
        entry = as_mapping(raw_entry)
        if entry.get("type") != "compaction":
            # "Currently only 'compaction' is supported." (openai-python response_create_params)
            raise invalid_value(
                entry.get("type"), ("compaction",), f"context_management[{index}].type"
            )
        value = entry.get("compact_threshold")
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            raise OpenAIError(
                400,
                f"Invalid 'context_management[{index}].compact_threshold': expected a positive "
                "integer.",
                param=f"context_management[{index}].compact_threshold",
                code="invalid_value",
            )
        threshold = value if isinstance(value, int) else threshold
    return threshold


# --- rendering -----------------------------------------------------------------------------


def _summary_text(reply: Reply, thinking: str) -> str:
    if reply.tool_calls:
        title = f"Calling {reply.tool_calls[0].name}"
    elif reply.stop == "max_tokens":
        title = "Drafting the answer"
    else:
        title = "Answering the question"
    return f"**{title}**\n\n{thinking}"


class OpenAIResponsesAPI(OpenAIWire):
    """The Responses wire API (scope ``openai``, or ``azure`` on Azure's routes)."""

    name: ClassVar[str] = "openai-responses"
    operation: ClassVar[str] = "Responses_Create"

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self._store = _Store()
        self._cache = AutomaticCache()

    def reset(self) -> None:
        """Forget the stored reasoning items and the cached prompts."""
        self._store.clear()
        self._cache.clear()

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/v1/responses", self.responses),
            WireRoute("/openai/responses", self.responses),
            WireRoute("/openai/v1/responses", self.responses),
            WireRoute("/{dialect}/v1/responses", self.responses),
            WireRoute("/v1/responses/compact", self.compact),
            WireRoute("/openai/v1/responses/compact", self.compact),
            WireRoute("/{dialect}/v1/responses/compact", self.compact),
        )

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        payload = stream_error_payload(error)
        return sse_event(
            "error",
            {
                "type": "error",
                "code": payload["code"] or payload["type"],
                "message": payload["message"],
                "param": None,
                "error": payload,
                "sequence_number": index,
            },
        )

    def malformed_event(self) -> bytes:
        return b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": \n\n'

    # --- handler -----------------------------------------------------------------------

    def responses(self, request: WireRequest) -> JsonReply | StreamReply:
        parsed = _parse(request, self.state.signer, self._store)
        scope = parsed.scope
        body = as_mapping(request.body)
        cached = self._cache.read(
            model=parsed.model,
            model_name=parsed.model_name,
            credential=credential(request),
            body=body,
            head={
                "tools": body.get("tools"),
                "text": body.get("text"),
                "instructions": body.get("instructions"),
            },
            items=parsed.items,
            totals=parsed.prefix_totals,
        )
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest() + "\x1f" + parsed.model_name + "\x1f" + scope
        output = self._output(parsed, reply, seed, scope)
        threshold = parsed.compact_threshold
        if threshold is not None and parsed.rendered_tokens >= threshold:
            # the input crossed the threshold: compacted before the answer, first in the output
            output.insert(0, self._compaction(parsed.conversation.turns, seed, scope))
        usage = reply.usage
        assert usage is not None
        complete = reply.stop != "max_tokens"
        response: dict[str, Any] = {
            "id": hex_id("resp_", seed, "response"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed" if complete else "incomplete",
            "background": False,
            "error": None,
            "incomplete_details": None if complete else {"reason": "max_output_tokens"},
            "instructions": parsed.instructions,
            "max_output_tokens": parsed.max_output_tokens,
            "max_tool_calls": None,
            "metadata": {},
            "model": parsed.model_name,
            "output": output,
            "parallel_tool_calls": parsed.parallel,
            "previous_response_id": None,
            "prompt_cache_key": body.get("prompt_cache_key"),
            "prompt_cache_retention": body.get("prompt_cache_retention"),
            "reasoning": {
                "context": parsed.context,
                "effort": parsed.effort if parsed.model.reasons else None,
                "mode": parsed.mode,
                "summary": parsed.summary,
            },
            "safety_identifier": None,
            "service_tier": "default",
            "store": parsed.store,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": parsed.tool_choice,
            "tools": parsed.tools,
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": {
                "input_tokens": usage.input_tokens,
                "input_tokens_details": {"cached_tokens": cached},
                "output_tokens": usage.output_tokens,
                "output_tokens_details": {"reasoning_tokens": usage.thinking_tokens},
                "total_tokens": usage.input_tokens + usage.output_tokens,
            },
            "user": None,
        }
        headers = {"x-request-id": hex_id("req_", str(request.seq), seed, length=32)}
        if parsed.stream:
            return self._stream(response, headers, lmstudio=parsed.model.family == "lmstudio")
        return JsonReply(response, 200, headers)

    def compact(self, request: WireRequest) -> JsonReply:
        """``POST /v1/responses/compact``: the input's user messages, then one compaction item
        carrying the whole conversation (openai-python ``CompactedResponse``: "a list of all
        user messages, followed by a single compaction item")."""
        parsed = _parse(request, self.state.signer, self._store)
        seed = parsed.conversation.digest() + "\x1f" + parsed.model_name + "\x1f" + "compact"
        output: list[dict[str, Any]] = [
            {
                "id": hex_id("msg_", seed, "user", str(index)),
                "type": "message",
                "role": "user",
                "status": "completed",
                "content": [{"type": "input_text", "text": turn.text}],
            }
            for index, turn in enumerate(parsed.conversation.turns)
            if turn.role == "user" and turn.text
        ]
        output.append(self._compaction(parsed.conversation.turns, seed, parsed.scope))
        tokens = sum(prefix_tokens(parsed.conversation))
        answer = {
            "id": hex_id("resp_", seed, "compaction"),
            "object": "response.compaction",
            "created_at": int(time.time()),
            "output": output,
            "usage": {
                "input_tokens": tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 64,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": tokens + 64,
            },
        }
        headers = {"x-request-id": hex_id("req_", str(request.seq), seed, length=32)}
        return JsonReply(answer, 200, headers)

    def _compaction(self, turns: Sequence[Turn], seed: str, scope: str) -> dict[str, Any]:
        """A compaction item carrying ``turns``, sealed for ``scope``."""
        item_id = hex_id("cmp_", seed, "compaction")
        token = seal_reasoning(self.state.signer, scope, item_id, _dump_turns(turns))
        return {"id": item_id, "type": "compaction", "encrypted_content": token}

    def _output(
        self, parsed: _ResponsesRequest, reply: Reply, seed: str, scope: str
    ) -> list[dict[str, Any]]:
        output: list[dict[str, Any]] = []
        if reply.thinking is not None and parsed.model.reasons:
            output.append(self._reasoning_item(parsed, reply, seed, scope))
        complete = reply.stop != "max_tokens"
        version = _gpt_version(parsed.model_name)
        phased = parsed.model.family == "openai" and version is not None and version >= (5, 3)
        preamble = parsed.model.family == "lmstudio" or phased
        output += server_tools.output_items(reply, seed, parsed.include, set(parsed.listed))
        if reply.server_uses and reply.server_uses[-1].approval == "pending":
            return output  # the response waits for the approval
        if reply.tool_calls and reply.text and preamble:
            # a preamble before the calls (LM Studio's models; `commentary` on gpt-5.3 and later)
            output.append(self._message(reply.text, seed, "preamble", phased and "commentary"))
        if reply.tool_calls:
            for index, call in enumerate(reply.tool_calls):
                output.append(
                    {
                        "arguments": arguments_json(call.arguments),
                        "call_id": call.id or stable_id("call_", seed, str(index), length=24),
                        "id": hex_id("fc_", seed, str(index)),
                        "name": call.name,
                        "status": "completed",
                        "type": "function_call",
                    }
                )
        else:
            message = self._message(reply.text, seed, "message", phased and "final_answer")
            message["status"] = "completed" if complete else "incomplete"
            message["content"][0]["annotations"] = server_tools.url_citations(
                reply.text,
                [
                    *reply.server_uses,
                    *(u for t in parsed.conversation.turns for u in t.server_uses),
                ],
            )
            output.append(message)
        return output

    @staticmethod
    def _message(text: str, seed: str, name: str, phase: str | bool) -> dict[str, Any]:
        """An assistant message item (with its ``phase`` where the model sets one)."""
        message: dict[str, Any] = {
            "content": [{"annotations": [], "logprobs": [], "text": text, "type": "output_text"}],
            "id": hex_id("msg_", seed, name),
            "role": "assistant",
            "status": "completed",
            "type": "message",
        }
        if isinstance(phase, str):
            message["phase"] = phase
        return message

    def _reasoning_item(
        self, parsed: _ResponsesRequest, reply: Reply, seed: str, scope: str
    ) -> dict[str, Any]:
        """The reasoning item: OpenAI's (summary, sealed encrypted content, kept when stored),
        DeepSeek's (its text as ``reasoning_text`` content, ``encrypted_content`` null) or
        xAI's (no id, always sealed)."""
        thinking = reply.thinking or ""
        family = parsed.model.family
        item_id = "" if family == "xai" else hex_id("rs_", seed, "reasoning")
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if family == "xai":
            del item["id"]
        if family == "deepseek":
            item["content"] = [{"type": "reasoning_text", "text": thinking}]
            item["encrypted_content"] = None
            return item
        if family == "lmstudio":  # no encrypted_content at all (its fixtures)
            return {
                "id": item_id,
                "type": "reasoning",
                "status": "completed",
                "summary": [],
                "content": [{"type": "reasoning_text", "text": thinking}],
            }
        if parsed.summary is not None and not reply.redacted:
            item["summary"] = [{"type": "summary_text", "text": _summary_text(reply, thinking)}]
        if parsed.include_encrypted or family == "xai":
            item["encrypted_content"] = seal_reasoning(self.state.signer, scope, item_id, thinking)
        if parsed.store and family in ("openai", "mantle"):
            self._store.put(scope, item_id, thinking)
        return item

    def _stream(
        self, response: Mapping[str, Any], headers: Mapping[str, str], *, lmstudio: bool = False
    ) -> StreamReply:
        """The typed events of a response; LM Studio's server sends a function call's
        arguments only in ``response.function_call_arguments.done`` and ``output_item.done``."""
        events: list[bytes] = []
        cut_at: int | None = None

        def emit(kind: str, **fields: Any) -> None:
            events.append(sse_event(kind, {"type": kind, **fields, "sequence_number": len(events)}))

        def reasoning_parts(
            kind: str, index_key: str, parts: list[dict[str, Any]], at: Mapping[str, Any]
        ) -> None:
            """A reasoning item's text parts (DeepSeek's ``reasoning_text`` content) or summary
            parts: each opened, streamed piece by piece, then done."""
            nonlocal cut_at
            holder = "content_part" if kind == "reasoning_text" else "reasoning_summary_part"
            for number, part in enumerate(parts):
                where = {**at, index_key: number}
                emit(f"response.{holder}.added", **where, part={**part, "text": ""})
                pieces = chunk_text(part["text"])
                first = len(events)
                for piece in pieces:
                    emit(f"response.{kind}.delta", **where, delta=piece)
                if cut_at is None:
                    cut_at = first + max(1, len(pieces) // 2)
                emit(f"response.{kind}.done", **where, text=part["text"])
                emit(f"response.{holder}.done", **where, part=part)

        started: dict[str, Any] = {
            **response,
            "status": "in_progress",
            "output": [],
            "usage": None,
            "incomplete_details": None,
        }
        emit("response.created", response=started)
        emit("response.in_progress", response=started)
        for index, item in enumerate(cast("list[dict[str, Any]]", response["output"])):
            at = {"item_id": item.get("id", ""), "output_index": index}
            kind = item["type"]
            if kind == "reasoning":
                opened = {k: item[k] for k in ("id",) if k in item}
                emit(
                    "response.output_item.added",
                    item={**opened, "type": "reasoning", "summary": []},
                    output_index=index,
                )
                parts = cast("list[dict[str, Any]]", item.get("content") or [])
                reasoning_parts("reasoning_text", "content_index", parts, at)
                summary = cast("list[dict[str, Any]]", item["summary"])
                reasoning_parts("reasoning_summary_text", "summary_index", summary, at)
                if cut_at is None:
                    cut_at = len(events)  # before the item (and its encrypted content) is done
                emit("response.output_item.done", item=item, output_index=index)
            elif kind in server_tools.HOSTED_ITEMS:
                server_tools.stream_item(item, index, emit)
            elif kind == "compaction":
                emit(
                    "response.output_item.added",
                    item={"id": item["id"], "type": "compaction"},
                    output_index=index,
                )
                emit("response.compaction.compacting", **at)
                emit("response.output_item.done", item=item, output_index=index)
            elif kind == "function_call":
                emit(
                    "response.output_item.added",
                    item={**item, "arguments": "", "status": "in_progress"},
                    output_index=index,
                )
                if lmstudio:
                    emit("response.function_call_arguments.done", **at, arguments=item["arguments"])
                else:
                    for piece in split_json(item["arguments"]):
                        emit("response.function_call_arguments.delta", **at, delta=piece)
                    emit(
                        "response.function_call_arguments.done",
                        **at,
                        name=item["name"],
                        arguments=item["arguments"],
                    )
                emit("response.output_item.done", item=item, output_index=index)
            else:
                emit(
                    "response.output_item.added",
                    item={**item, "content": [], "status": "in_progress"},
                    output_index=index,
                )
                part = cast("list[dict[str, Any]]", item["content"])[0]
                content = {**at, "content_index": 0}
                emit("response.content_part.added", **content, part={**part, "text": ""})
                for piece in chunk_text(part["text"]):
                    emit("response.output_text.delta", **content, delta=piece, logprobs=[])
                emit("response.output_text.done", **content, text=part["text"], logprobs=[])
                emit("response.content_part.done", **content, part=part)
                emit("response.output_item.done", item=item, output_index=index)
        final = "response.completed" if response["status"] == "completed" else "response.incomplete"
        emit(final, response=response)
        stream_headers = {**headers, "cache-control": "no-cache"}
        return StreamReply(events, "text/event-stream; charset=utf-8", stream_headers, cut_at)
