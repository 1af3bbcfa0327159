"""The Gemini Interactions API (``POST /{version}/interactions``, beta), scope
``gemini-interactions``: a conversation as a timeline of typed *steps*, served statelessly
(the whole history in ``input``) or statefully (``previous_interaction_id``).

Learned from the API's documentation (ai.google.dev/gemini-api/docs/interactions, its
thinking page and the May 2026 migration guide) and the types of the official SDK
(``google.genai.interactions``); texts no source publishes are marked *guess* below.

* Routes: ``POST /{version}/interactions`` creates an interaction (JSON, or SSE with
  ``"stream": true``); ``GET`` and ``DELETE /{version}/interactions/{id}`` read and remove
  a stored one (``v1beta``, ``v1alpha``, ``v1``). Credentials as on the Gemini API.
* ``input`` is a string, a content block, a list of content blocks (one ``user_input``
  step) or a list of steps: ``user_input`` and ``model_output`` (``content`` blocks: text,
  image, document), ``thought`` (``signature``, ``summary``), ``function_call`` (``id``,
  ``name``, ``arguments``) and ``function_result`` (``call_id``, ``result``, ``name``,
  ``is_error``). Server-side tool steps are taken as they are and not read.
* A thought step's signature (base64) seals, under the emulator key, the steps the thought
  led to in its model turn (the calls' names and arguments, the text): moved, edited,
  issued by the ``generateContent`` wires (another scope) or by another model family, it is
  refused with the Gemini API's text (``Corrupted thought signature.``, from Gemini 3.7 on
  ``Invalid thought signature.``). The documented dummy ``skip_thought_signature_validator``
  (verbatim or base64) passes. On Gemini 3 every model turn of the current turn that calls
  functions must start with a signed thought step, else the request is refused with the
  ``generateContent`` text for a missing signature (*guess*: that the Interactions API
  shares it; the position is the step's, 1-based).
* ``generation_config``: ``thinking_level`` (``minimal`` ... ``xhigh``, the levels each
  Gemini 3 model takes, refused with the real text otherwise; Gemini 2.5 takes none, as on
  ``generateContent``), ``thinking_summaries`` (``auto`` returns the thought summary,
  ``none`` or unset only the signature: *guess* that no summaries is the default, as the
  recorded responses without a thinking config show), ``max_output_tokens``,
  ``tool_choice``; ``tools`` of ``type: "function"``; ``response_format`` with a JSON
  schema; ``system_instruction``.
* The response holds the output steps only (``POST`` does not echo the input): a
  ``thought`` step (Gemini 3 always; its signature always present), the text as a
  ``model_output`` step, the calls as ``function_call`` steps; ``status`` is
  ``requires_action`` with calls, ``completed`` without, ``incomplete`` when
  ``max_output_tokens`` cut it; ``usage`` counts ``total_thought_tokens`` apart from
  ``total_output_tokens``. With ``store`` (the default) the interaction is kept (in memory,
  the newest 10,000) under its ``id``, and ``previous_interaction_id`` continues it; with
  ``store: false`` the response has no ``id`` and nothing is kept.
* Streamed: ``interaction.created``, ``interaction.status_update``, then per step
  ``step.start`` / ``step.delta`` (``thought_summary``, ``thought_signature``, ``text``,
  ``arguments_delta`` with the arguments' JSON in pieces) / ``step.stop``, then
  ``interaction.completed`` with the status and usage; an error in the stream is an
  ``error`` event.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, cast

from ..encoding import (
    arguments_json,
    as_list,
    as_mapping,
    chunk_text,
    list_or_none,
    mapping_or_none,
    split_json,
    sse_event,
    stable_id,
)
from ..framework import (
    EmulatorState,
    JsonReply,
    StreamReply,
    WireError,
    WireRequest,
    WireRoute,
)
from ..model import Call, CallResult, Conversation, Media, Reply, Settings, ToolSpec, Turn
from ..signing import Signer
from .generate import GeminiAPI
from .rules import (
    GEMINI_API,
    IMAGE_TYPES,
    SKIP_SIGNATURE,
    TEXT_DOCUMENT_TYPES,
    GeminiProfile,
    call_content,
    decode_signature,
    gemini_profile,
    signature_kind,
    text_content,
)

__all__ = ["SCOPE", "GeminiInteractionsAPI"]

SCOPE = "gemini-interactions"
"""The signing scope: signatures of the ``generateContent`` wires never open here, nor back."""

_LEVELS = ("minimal", "low", "medium", "high", "xhigh")
_EFFORT = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh"}
_CONTENT_TYPES = frozenset({"text", "image", "document", "audio", "video"})
_MODEL_STEPS = frozenset({"thought", "model_output", "function_call"})
_USER_STEPS = frozenset({"user_input", "function_result"})
_SERVER_TOOL_STEPS = frozenset(
    f"{tool}_{kind}"
    for tool in (
        "google_search",
        "code_execution",
        "url_context",
        "file_search",
        "google_maps",
        "mcp_server_tool",
        "retrieval",
        "tool_search",
        "processing",
    )
    for kind in ("call", "result")
)
_STATUS_NAMES = {
    400: "invalid_argument",
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    429: "resource_exhausted",
    500: "internal",
    503: "unavailable",
    504: "deadline_exceeded",
}
_STORE_LIMIT = 10_000
_SKIP_B64 = "c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I="


def _invalid(message: str) -> WireError:
    return WireError(400, message)


# --- parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """One step of the conversation as sent (``raw``), with its position in the combined
    timeline (stored steps first, then ``input``)."""

    index: int
    raw: Mapping[str, Any]

    @property
    def type(self) -> str:
        return cast("str", self.raw["type"])


@dataclass(frozen=True)
class _Turn:
    """Consecutive steps of one side: the user's (``user_input``, ``function_result``) or
    the model's (``thought``, ``model_output``, ``function_call``, server tool steps)."""

    role: Literal["user", "model"]
    steps: tuple[_Step, ...]

    def of(self, kind: str) -> list[_Step]:
        return [s for s in self.steps if s.type == kind]


@dataclass(frozen=True)
class _Request:
    model: GeminiProfile
    model_name: str
    conversation: Conversation
    settings: Settings
    summaries: bool
    store: bool
    stream: bool
    steps: tuple[Mapping[str, Any], ...]  # the whole timeline: stored, then this input
    previous_id: str | None


def _as_steps(raw: Any) -> list[Mapping[str, Any]]:
    """``input`` as steps: a string or content block(s) is one ``user_input`` step."""
    if isinstance(raw, str):
        return [{"type": "user_input", "content": [{"type": "text", "text": raw}]}]
    single = mapping_or_none(raw)
    if single is not None:
        return [{"type": "user_input", "content": [single]}]
    items = list_or_none(raw)
    if items is None:
        raise _invalid(
            "Invalid value at 'input': expected a string, a content object or a list of steps "
            "or content objects."  # guess
        )
    kinds = [as_mapping(item).get("type") for item in items]
    if items and all(kind in _CONTENT_TYPES for kind in kinds):
        return [{"type": "user_input", "content": items}]
    steps: list[Mapping[str, Any]] = []
    for i, item in enumerate(items):
        step = mapping_or_none(item)
        kind = kinds[i]
        if step is None or not isinstance(kind, str):
            raise _invalid(f"Invalid value at 'input[{i}]': a step needs a type.")  # guess
        if kind in _CONTENT_TYPES:
            raise _invalid(  # guess
                f"Invalid value at 'input[{i}]': content and steps cannot be mixed in input; "
                "wrap content in a user_input step."
            )
        if kind not in _USER_STEPS and kind not in _MODEL_STEPS and kind not in _SERVER_TOOL_STEPS:
            raise _invalid(f"Invalid value at 'input[{i}].type', \"{kind}\"")  # guess
        steps.append(step)
    return steps


def _text_of(blocks: Sequence[Any], path: str, media: list[Media] | None) -> str:
    """The text of content blocks, checked; images and documents go to ``media`` (a user
    turn's) or are skipped (a model turn's)."""
    texts: list[str] = []
    for j, raw in enumerate(blocks):
        block = as_mapping(raw)
        kind = block.get("type")
        where = f"{path}[{j}]"
        if kind == "text":
            text = block.get("text")
            if not isinstance(text, str):
                raise _invalid(f"Invalid value at '{where}.text' (TYPE_STRING)")  # guess
            texts.append(text)
        elif kind in ("image", "document", "audio", "video"):
            found = _media(block, where, cast("str", kind))
            if media is not None:
                media.append(found)
        else:
            raise _invalid(f"Invalid value at '{where}.type', {json.dumps(kind)}")  # guess
    return "\n".join(texts)


def _media(block: Mapping[str, Any], where: str, kind: str) -> Media:
    mime = block.get("mime_type")
    mime_type = mime.lower() if isinstance(mime, str) else ""
    data, uri = block.get("data"), block.get("uri")
    if (data is None) == (uri is None):
        raise _invalid(f"Invalid value at '{where}': give exactly one of data or uri.")  # guess
    allowed = IMAGE_TYPES if kind == "image" else TEXT_DOCUMENT_TYPES
    if mime_type and kind in ("image", "document") and mime_type not in allowed:
        raise _invalid(f"Unsupported MIME type: {mime}")  # the generateContent text
    neutral: Literal["image", "document"] = "image" if kind == "image" else "document"
    if uri is not None:
        return Media(neutral, mime_type or "application/octet-stream", url=str(uri))
    blob = decode_signature(data) if isinstance(data, str) else None
    if blob is None:
        raise _invalid(
            f"Invalid value at '{where}.data' (TYPE_BYTES), Base64 decoding failed"  # guess
        )
    if not mime_type:
        raise _invalid(f"Invalid value at '{where}.mime_type': required with data.")  # guess
    return Media(neutral, mime_type, size=len(blob))


def _check_step(step: _Step) -> None:
    """The fields each step type requires (the SDK's types), with their types."""
    raw, i = step.raw, step.index
    kind = step.type
    if kind == "function_call":
        if not isinstance(raw.get("id"), str) or not raw.get("id"):
            raise _invalid(f"Invalid value at 'input[{i}].id': required.")  # guess
        if not isinstance(raw.get("name"), str) or not raw.get("name"):
            raise _invalid(f"Invalid value at 'input[{i}].name': Name cannot be empty.")  # guess
        if mapping_or_none(raw.get("arguments")) is None:
            raise _invalid(f"Invalid value at 'input[{i}].arguments': an object.")  # guess
    elif kind == "function_result":
        if not isinstance(raw.get("call_id"), str) or not raw.get("call_id"):
            raise _invalid(f"Invalid value at 'input[{i}].call_id': required.")  # guess
        if "result" not in raw:
            raise _invalid(f"Invalid value at 'input[{i}].result': required.")  # guess
    elif kind == "thought":
        signature = raw.get("signature")
        if signature is not None and (
            not isinstance(signature, str) or decode_signature(signature) is None
        ):
            raise _invalid(  # the generateContent text, for the step's field (guess)
                f"Invalid value at 'input[{i}].signature' (TYPE_BYTES), Base64 decoding failed "
                f'for "{signature}"'
            )


def _turns(steps: Sequence[_Step]) -> list[_Turn]:
    turns: list[_Turn] = []
    for step in steps:
        role: Literal["user", "model"] = "user" if step.type in _USER_STEPS else "model"
        if turns and turns[-1].role == role:
            turns[-1] = _Turn(role, (*turns[-1].steps, step))
        else:
            turns.append(_Turn(role, (step,)))
    return turns


def _check_results(turns: Sequence[_Turn]) -> None:
    """Each function result answers a call of the model turn just before it, once; a model
    turn's calls are all answered when the conversation goes on (guess: the texts)."""
    for k, turn in enumerate(turns):
        if turn.role != "user":
            continue
        previous = turns[k - 1] if k > 0 else None
        calls: set[str] = set()
        if previous is not None:
            calls = {cast("str", s.raw["id"]) for s in previous.of("function_call")}
        answered: set[str] = set()
        for step in turn.of("function_result"):
            call_id = cast("str", step.raw["call_id"])
            if call_id not in calls or call_id in answered:
                raise _invalid(
                    f"function_result at input[{step.index}] has call_id '{call_id}', which "
                    "matches no unanswered function_call of the model turn before it."
                )
            answered.add(call_id)
        if calls - answered:
            missing = sorted(calls - answered)[0]
            raise _invalid(f"function_call '{missing}' has no function_result after it.")


def _led_to(steps: Sequence[_Step], start: int) -> str:
    """What a thought's signature seals: the steps after it in its model turn, up to the
    next thought (the calls by rank, name and arguments, then the text)."""
    pieces: list[str] = []
    text = ""
    rank = 0
    for step in steps[start + 1 :]:
        if step.type == "thought":
            break
        if step.type == "function_call":
            pieces.append(
                call_content(rank, cast("str", step.raw["name"]), as_mapping(step.raw["arguments"]))
            )
            rank += 1
        elif step.type == "model_output":
            text += _text_of(as_list(step.raw.get("content")), "", None)
    pieces.append(text_content(text))
    return "\x1e".join(pieces)


def _check_signatures(turns: Sequence[_Turn], model: GeminiProfile, signer: Signer) -> None:
    """Every thought signature verifies against what the thought led to; on Gemini 3 each
    model turn of the current turn that calls functions starts with a signed thought."""
    start = -1
    for turn in turns:
        if turn.of("user_input"):
            start = turn.steps[0].index
    kind = signature_kind(model)
    for turn in turns:
        if turn.role != "model":
            continue
        steps = turn.steps
        for j, step in enumerate(steps):
            signature = step.raw.get("signature") if step.type == "thought" else None
            if not isinstance(signature, str) or _skips(signature):
                continue
            blob = cast("bytes", decode_signature(signature))
            if not signer.verify(SCOPE, kind, blob, _led_to(steps, j)):
                raise _invalid(GEMINI_API.invalid_signature(model))
        calls = turn.of("function_call")
        if model.family != "3" or not calls or steps[0].index < start:
            continue
        first = steps[: steps.index(calls[0])]
        if not any(s.type == "thought" and isinstance(s.raw.get("signature"), str) for s in first):
            name = cast("str", calls[0].raw["name"])
            raise _invalid(GEMINI_API.missing_signature(name, calls[0].index + 1))


def _skips(signature: str) -> bool:
    return (
        signature == _SKIP_B64
        or signature.encode() == SKIP_SIGNATURE
        or (decode_signature(signature) == SKIP_SIGNATURE)
    )


def _result_text(raw: Mapping[str, Any]) -> str:
    result = raw.get("result")
    if isinstance(result, str):
        return result
    if isinstance(result, list):
        return _text_of(cast("list[Any]", result), "result", None)
    return json.dumps(result, sort_keys=True, ensure_ascii=False)


def _result_media(raw: Mapping[str, Any], index: int) -> tuple[Media, ...]:
    result = raw.get("result")
    if not isinstance(result, list):
        return ()
    media: list[Media] = []
    _text_of(cast("list[Any]", result), f"input[{index}].result", media)
    return tuple(media)


def _neutral(turns: Sequence[_Turn]) -> tuple[Turn, ...]:
    out: list[Turn] = []
    for turn in turns:
        if turn.role == "user":
            media: list[Media] = []
            texts = [
                _text_of(as_list(s.raw.get("content")), f"input[{s.index}].content", media)
                for s in turn.of("user_input")
            ]
            results = tuple(
                CallResult(
                    cast("str", s.raw["call_id"]),
                    _result_text(s.raw),
                    s.raw.get("is_error") is True,
                    _result_media(s.raw, s.index),
                )
                for s in turn.of("function_result")
            )
            out.append(
                Turn("user", "\n".join(t for t in texts if t), results=results, media=tuple(media))
            )
            continue
        thinking = "".join(
            _text_of(as_list(s.raw.get("summary")), f"input[{s.index}].summary", None)
            for s in turn.of("thought")
        )
        text = "".join(
            _text_of(as_list(s.raw.get("content")), f"input[{s.index}].content", None)
            for s in turn.of("model_output")
        )
        calls = tuple(
            Call(
                cast("str", s.raw["id"]), cast("str", s.raw["name"]), as_mapping(s.raw["arguments"])
            )
            for s in turn.of("function_call")
        )
        out.append(Turn("assistant", text, thinking, calls))
    return tuple(out)


def _tools(raw: Any) -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = []
    for t, item in enumerate(as_list(raw)):
        tool = as_mapping(item)
        if tool.get("type") != "function":
            continue  # built-in tools: accepted, never called by the emulator
        name = tool.get("name")
        if not isinstance(name, str) or not name:
            raise _invalid(f"* tools[{t}].name: Name cannot be empty.")  # guess
        description = tool.get("description")
        specs.append(
            ToolSpec(
                name,
                description if isinstance(description, str) else "",
                as_mapping(tool.get("parameters")),
            )
        )
    return tuple(specs)


def _tool_choice(
    raw: Any, tools: tuple[ToolSpec, ...]
) -> tuple[Literal["auto", "any", "tool", "none"], str | None]:
    if raw is None:
        return "auto", None
    if isinstance(raw, str):
        mode, names = raw, []
    else:
        allowed = as_mapping(as_mapping(raw).get("allowed_tools"))
        mode = allowed.get("mode", "auto")
        names = [n for n in as_list(allowed.get("tools")) if isinstance(n, str)]
    if mode not in ("auto", "any", "none", "validated"):
        raise _invalid(f"Invalid value at 'generation_config.tool_choice', {json.dumps(mode)}")
    if mode == "none":
        return "none", None
    if mode == "any":
        offered = [t.name for t in tools]
        if len(names) == 1 and names[0] in offered:
            return "tool", names[0]
        return "any", None
    return "auto", None


def _thinking(generation: Mapping[str, Any], model: GeminiProfile) -> tuple[bool, str | None, bool]:
    """(thinks, effort, thought summaries)."""
    summaries = generation.get("thinking_summaries")
    if summaries is not None and summaries not in ("auto", "none"):
        raise _invalid(  # guess
            f"Invalid value at 'generation_config.thinking_summaries', {json.dumps(summaries)}"
        )
    raw = generation.get("thinking_level")
    if raw is None:
        thinks = model.family == "3" or model.variant != "flash-lite"
        return thinks, "high" if model.family == "3" else None, thinks and summaries == "auto"
    level = raw.lower() if isinstance(raw, str) else raw
    if level not in _LEVELS:
        raise _invalid(  # guess
            f"Invalid value at 'generation_config.thinking_level', {json.dumps(raw)}"
        )
    if model.family != "3":
        raise _invalid("Thinking level is not supported for this model.")
    upper = cast("str", level).upper()
    if upper not in model.levels:
        raise _invalid(
            f"Thinking level {upper} is not supported for this model. Please retry with other "
            "thinking level."
        )
    return True, _EFFORT[cast("str", level)], summaries == "auto"


def _response_schema(raw: Any) -> Mapping[str, Any] | None:
    entries: list[Any] = [raw] if isinstance(raw, Mapping) else as_list(raw)
    for entry in entries:
        fmt = as_mapping(entry)
        if fmt.get("type") == "text" and fmt.get("mime_type") == "application/json":
            return mapping_or_none(fmt.get("schema")) or {"type": "object"}
    return None


class _Store:
    """Stored interactions by id: the model and the whole timeline of steps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def put(self, interaction_id: str, record: dict[str, Any]) -> None:
        with self._lock:
            self._items[interaction_id] = record
            while len(self._items) > _STORE_LIMIT:
                self._items.popitem(last=False)

    def get(self, interaction_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.get(interaction_id)

    def pop(self, interaction_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._items.pop(interaction_id, None)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _not_found(interaction_id: str) -> WireError:
    return WireError(404, f"Interaction {interaction_id} not found.")  # guess


def _parse(body: Any, signer: Signer, store: _Store) -> _Request:
    request = mapping_or_none(body)
    if request is None:
        raise _invalid("Invalid JSON payload received. Expected an object.")
    model_name = request.get("model")
    if not isinstance(model_name, str) or not model_name:
        raise _invalid("model is required.")  # guess
    model = gemini_profile(model_name.removeprefix("models/"))
    if model is None:
        raise WireError(404, f"models/{model_name} is not found for the Interactions API.")
    previous_id = request.get("previous_interaction_id")
    stored: list[Mapping[str, Any]] = []
    if previous_id is not None:
        record = store.get(previous_id) if isinstance(previous_id, str) else None
        if record is None:
            raise _not_found(str(previous_id))
        stored = list(record["steps"])
    raw_input = request.get("input")
    if raw_input is None and not stored:
        raise _invalid("input is required.")  # guess
    steps = [*stored, *(_as_steps(raw_input) if raw_input is not None else [])]
    if not steps:
        raise _invalid("input must not be empty.")  # guess
    indexed = [_Step(i, s) for i, s in enumerate(steps)]
    for step in indexed:
        _check_step(step)
    turns = _turns(indexed)
    if turns[-1].role != "user":
        raise _invalid("The last step of input must be a user_input or function_result.")
    _check_results(turns)
    _check_signatures(turns, model, signer)
    generation = as_mapping(request.get("generation_config"))
    thinks, effort, summaries = _thinking(generation, model)
    max_tokens = generation.get("max_output_tokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
        raise _invalid("max_output_tokens must be positive.")  # guess
    tools = _tools(request.get("tools"))
    choice, tool_name = _tool_choice(generation.get("tool_choice"), tools)
    system = request.get("system_instruction")
    conversation = Conversation(
        system=system if isinstance(system, str) else "", turns=_neutral(turns), tools=tools
    )
    settings = Settings(
        thinking=thinks,
        effort=effort,
        max_tokens=max_tokens,
        tool_choice=choice,
        tool_name=tool_name,
        parallel_tool_calls=True,
        interleaved=True,
        response_schema=_response_schema(request.get("response_format")),
    )
    return _Request(
        model=model,
        model_name=model_name,
        conversation=conversation,
        settings=settings,
        summaries=summaries,
        store=request.get("store") is not False,
        stream=request.get("stream") is True,
        steps=tuple(steps),
        previous_id=previous_id if isinstance(previous_id, str) else None,
    )


# --- rendering -------------------------------------------------------------------------------


def _call_id(seed: str, rank: int) -> str:
    """An id as the service gives one (eight lower-case letters and digits)."""
    number = int.from_bytes(hashlib.sha256(f"{seed}:{rank}".encode()).digest()[:8], "big")
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
    chars: list[str] = []
    for _ in range(8):
        number, rest = divmod(number, 36)
        chars.append(alphabet[rest])
    return "".join(chars)


def _timestamp() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class GeminiInteractionsAPI(GeminiAPI):
    """The Interactions API of the Gemini API, scope ``gemini-interactions``. Errors are the
    Gemini API's JSON errors; credentials and body limit too."""

    name: ClassVar[str] = "gemini-interactions"
    versions: ClassVar[frozenset[str]] = frozenset({"v1beta", "v1alpha", "v1"})

    def __init__(self, state: EmulatorState) -> None:
        super().__init__(state)
        self._store = _Store()

    def reset(self) -> None:
        super().reset()
        self._store.clear()

    def routes(self) -> Sequence[WireRoute]:
        return (
            WireRoute("/{version}/interactions", self.create),
            WireRoute("/{version}/interactions/{id}", self.stored, ("GET", "DELETE")),
        )

    def stream_error(self, request: WireRequest, error: WireError, *, index: int) -> bytes:
        status = 503 if error.status == 529 else error.status
        code = _STATUS_NAMES.get(status, "internal" if status >= 500 else "invalid_argument")
        message = error.message or self.messages.get(status) or self.messages[500]
        event = {"event_type": "error", "error": {"code": code, "message": message}}
        return sse_event("error", event)

    def malformed_event(self) -> bytes:
        return b'event: step.delta\ndata: {"event_type": "step.delta", "delta": \n\n'

    # --- handlers ----------------------------------------------------------------------------

    def stored(self, request: WireRequest) -> JsonReply:
        self._version(request)
        interaction_id = request.path_params["id"]
        if request.method == "DELETE":
            if self._store.pop(interaction_id) is None:
                raise _not_found(interaction_id)
            return JsonReply({})
        record = self._store.get(interaction_id)
        if record is None:
            raise _not_found(interaction_id)
        return JsonReply({**record["response"], "steps": list(record["steps"])})

    def create(self, request: WireRequest) -> JsonReply | StreamReply:
        self._version(request)
        parsed = _parse(request.body, self.state.signer, self._store)
        reply = self.state.reply(self.name, parsed.conversation, parsed.settings)
        seed = parsed.conversation.digest()
        outputs = self._outputs(reply, parsed, seed)
        usage = reply.usage
        assert usage is not None
        thoughts = min(usage.thinking_tokens, usage.output_tokens)
        status = (
            "incomplete"
            if reply.stop == "max_tokens"
            else "requires_action"
            if reply.tool_calls
            else "completed"
        )
        now = _timestamp()
        response: dict[str, Any] = {}
        if parsed.store:
            response["id"] = stable_id("v1_", seed, str(request.seq), length=43)
        if parsed.previous_id is not None:
            response["previous_interaction_id"] = parsed.previous_id
        response.update(
            {
                "status": status,
                "usage": {
                    "total_tokens": usage.input_tokens + usage.output_tokens,
                    "total_input_tokens": usage.input_tokens,
                    "input_tokens_by_modality": [
                        {"modality": "text", "tokens": usage.input_tokens}
                    ],
                    "total_cached_tokens": 0,
                    "total_output_tokens": usage.output_tokens - thoughts,
                    "total_tool_use_tokens": 0,
                    "total_thought_tokens": thoughts,
                },
                "role": "model",
                "created": now,
                "updated": now,
                "service_tier": "standard",
                "object": "interaction",
                "model": parsed.model_name,
            }
        )
        if parsed.store:
            record = {"response": response, "steps": (*parsed.steps, *outputs)}
            self._store.put(cast("str", response["id"]), record)
        if not parsed.stream:
            return JsonReply({**response, "steps": outputs})
        return self._stream(response, outputs)

    def _version(self, request: WireRequest) -> None:
        if request.path_params.get("version") not in self.versions:
            raise WireError(404)

    def _outputs(self, reply: Reply, parsed: _Request, seed: str) -> list[dict[str, Any]]:
        """The output steps: a signed thought (when the model thinks), the text, the calls."""
        steps: list[dict[str, Any]] = []
        calls = [
            {
                "type": "function_call",
                "id": call.id or _call_id(seed, rank),
                "name": call.name,
                "arguments": dict(call.arguments),
            }
            for rank, call in enumerate(reply.tool_calls)
        ]
        text = reply.text
        thinks = parsed.settings.thinking and (parsed.model.family == "3" or reply.thinking)
        if thinks:
            sealed = [
                call_content(rank, call.name, call.arguments)
                for rank, call in enumerate(reply.tool_calls)
            ]
            content = "\x1e".join([*sealed, text_content(text)])
            size = min(140 + len(reply.thinking or "") // 2, 1100)
            kind = signature_kind(parsed.model)
            thought: dict[str, Any] = {
                "type": "thought",
                "signature": self.state.signer.seal_b64(SCOPE, kind, content, size=size),
            }
            if parsed.summaries and reply.thinking:
                thought["summary"] = [{"type": "text", "text": reply.thinking}]
            steps.append(thought)
        if text or not calls:
            steps.append({"type": "model_output", "content": [{"type": "text", "text": text}]})
        steps.extend(calls)
        return steps

    def _stream(
        self, response: Mapping[str, Any], outputs: Sequence[Mapping[str, Any]]
    ) -> StreamReply:
        head = {k: response[k] for k in ("id", "model", "object") if k in response}
        events = [
            sse_event(
                "interaction.created",
                {
                    "interaction": {**head, "status": "in_progress"},
                    "event_type": "interaction.created",
                },
            )
        ]
        status: dict[str, Any] = {
            "status": "in_progress",
            "event_type": "interaction.status_update",
        }
        if "id" in response:
            status = {"interaction_id": response["id"], **status}
        events.append(sse_event("interaction.status_update", status))
        cut_at: int | None = None

        def emit(kind: str, index: int, **fields: Any) -> None:
            events.append(sse_event(kind, {"index": index, **fields, "event_type": kind}))

        for index, step in enumerate(outputs):
            kind = step["type"]
            if kind == "thought":
                emit("step.start", index, step={"type": "thought"})
                pieces = [
                    piece
                    for block in as_list(step.get("summary"))
                    for piece in chunk_text(as_mapping(block).get("text", ""), 64)
                ]
                for piece in pieces:
                    summary = {"type": "text", "text": piece}
                    emit("step.delta", index, delta={"type": "thought_summary", "content": summary})
                if cut_at is None:  # cut mid-summary: the signature never arrives
                    cut_at = len(events) - (len(pieces) - len(pieces) // 2)
                signature = {"type": "thought_signature", "signature": step["signature"]}
                emit("step.delta", index, delta=signature)
            elif kind == "model_output":
                emit("step.start", index, step={"type": "model_output"})
                text = "".join(as_mapping(b).get("text", "") for b in as_list(step["content"]))
                for piece in chunk_text(text, 64):
                    emit("step.delta", index, delta={"type": "text", "text": piece})
            else:
                start = {"type": "function_call", "id": step["id"], "name": step["name"]}
                emit("step.start", index, step={**start, "arguments": {}})
                for piece in split_json(arguments_json(step["arguments"])):
                    emit("step.delta", index, delta={"type": "arguments_delta", "arguments": piece})
            emit("step.stop", index)
        done = {k: v for k, v in response.items() if k != "role"}
        events.append(
            sse_event(
                "interaction.completed",
                {"interaction": done, "event_type": "interaction.completed"},
            )
        )
        if cut_at is None:
            cut_at = max(1, len(events) // 2)
        return StreamReply(events, "text/event-stream", {"cache-control": "no-cache"}, cut_at)
