"""The Gemini rules: model profiles, request validation, replay rules and thought
signatures, for the Gemini API and Vertex AI wires (:mod:`.generate`).

Both wires take the same ``GenerateContentRequest`` and differ in their signing scope
(``gemini`` or ``vertex``: a signature issued by one never verifies in the other) and in
the wording of some errors (a :class:`GeminiPlatform` each). A refused request raises
:class:`~thinkagent.emulator.framework.WireError` with Google's status and message.

Models (by name):

* ``gemini-3-*`` (and later: ``gemini-3.1-*``...) always think (``thinkingLevel``
  ``MINIMAL`` to ``XHIGH``, default ``HIGH``; a ``thinkingBudget`` is accepted too) and
  always return thought signatures, with or without ``includeThoughts``. A function call
  of the current turn without its signature is refused.
* ``gemini-2.5-pro`` / ``-flash`` / ``-flash-lite`` take budgets (``0`` turns thinking off
  where the model allows it, ``-1`` is dynamic); they sign function calls when they
  think, and do not require the signatures back.

A thought signature seals the exact part it was issued on, under the model family:
a function call's name and arguments (and its rank among the calls of its turn), or the
answer text of the turn up to the signed part. Moving a signature to another part, or
changing the part, makes it fail. The documented dummy signature
``skip_thought_signature_validator`` passes everywhere (the Gemini API also takes
``context_engineering_is_the_way_to_go``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..encoding import as_list, as_mapping, list_or_none, mapping_or_none
from ..framework import WireError
from ..model import Call, CallResult, Conversation, Settings, ToolSpec, Turn
from ..signing import Signer

__all__ = [
    "GEMINI_API",
    "THOUGHT_SIGNATURE_DOCS",
    "VERTEX_AI",
    "GeminiPlatform",
    "GeminiProfile",
    "GeminiRequest",
    "call_content",
    "decode_signature",
    "gemini_profile",
    "parse_request",
    "signature_kind",
    "text_content",
]

THOUGHT_SIGNATURE_DOCS = "https://ai.google.dev/gemini-api/docs/thought-signatures"
VERTEX_THOUGHT_SIGNATURE_DOCS = (
    "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures"
)
VERTEX_MODEL_DOCS = "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"

LEVELS = ("MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH")
_EFFORT = {"MINIMAL": "low", "LOW": "low", "MEDIUM": "medium", "HIGH": "high", "XHIGH": "xhigh"}
_MODEL_RE = re.compile(r"^gemini-(?P<major>\d+)(?:\.(?P<minor>\d+))?-(?P<rest>[a-z0-9.-]+)$")
_B64_RE = re.compile(r"^[A-Za-z0-9+/_-]*={0,2}$")
_SNAKE_RE = re.compile(r"([A-Z])")


def _invalid(message: str) -> WireError:
    return WireError(400, message)


@dataclass(frozen=True)
class GeminiPlatform:
    """What differs between the Gemini API and Vertex AI: the signing scope, the dummy
    signatures that skip validation, and the wording of some errors."""

    scope: str
    skip_signatures: frozenset[bytes]
    corrupted: str
    vertex: bool

    def missing_signature(self, name: str, position: int) -> str:
        """The message for a current-turn function call without its signature
        (``position``: the 1-based index of its content in ``contents``)."""
        if self.vertex:
            return (
                f"Unable to submit request because function call `default_api:{name}` in the "
                f"{position}. content block is missing a `thought_signature`. Learn more: "
                f"{VERTEX_THOUGHT_SIGNATURE_DOCS}"
            )
        return (
            "Function call is missing a thought_signature in functionCall parts. This is "
            "required for tools to work correctly, and missing thought_signature may lead to "
            f"degraded model performance. Additional data, function call `default_api:{name}` "
            f", position {position}. Please refer to {THOUGHT_SIGNATURE_DOCS} for more details."
        )

    def thinking(self, message: str) -> str:
        """A thinking-configuration error (Vertex prefixes its request errors)."""
        return f"Unable to submit request because {message}" if self.vertex else message


SKIP_SIGNATURE = b"skip_thought_signature_validator"

GEMINI_API = GeminiPlatform(
    scope="gemini",
    skip_signatures=frozenset({SKIP_SIGNATURE, b"context_engineering_is_the_way_to_go"}),
    corrupted="Corrupted thought signature.",
    vertex=False,
)
VERTEX_AI = GeminiPlatform(
    scope="vertex",
    skip_signatures=frozenset({SKIP_SIGNATURE}),
    corrupted="Unable to submit request because Thought signature is not valid.",
    vertex=True,
)


@dataclass(frozen=True)
class GeminiProfile:
    """What the emulator knows about a Gemini model name."""

    name: str
    family: Literal["3", "2.5"]
    variant: Literal["pro", "flash", "flash-lite", "other"]

    @property
    def always_thinks(self) -> bool:
        return self.family == "3" or self.variant == "pro"


def gemini_profile(name: str) -> GeminiProfile | None:
    """The model's family, or ``None`` if the emulator does not serve ``name``."""
    match = _MODEL_RE.match(name)
    if match is None:
        return None
    version = (int(match.group("major")), int(match.group("minor") or 0))
    if version >= (3, 0):
        family: Literal["3", "2.5"] = "3"
    elif version == (2, 5):
        family = "2.5"
    else:
        return None
    rest = match.group("rest")
    variant: Literal["pro", "flash", "flash-lite", "other"] = (
        "flash-lite"
        if rest.startswith("flash-lite")
        else "flash"
        if rest.startswith("flash")
        else "pro"
        if rest.startswith("pro")
        else "other"
    )
    return GeminiProfile(name, family, variant)


def signature_kind(model: GeminiProfile) -> str:
    """The signing kind of thought signatures for the model's family."""
    return "gemini.thought.3" if model.family == "3" else "gemini.thought.2.5"


def call_content(rank: int, name: str, args: Mapping[str, Any]) -> str:
    """What a function-call signature seals: the call's rank in its turn, name and args
    (numbers by value: ``3.0`` and ``3`` are the same argument, as they are to the
    service, which keeps them as protobuf ``Value`` doubles)."""
    return "call\x00" + str(rank) + "\x00" + name + "\x00" + _canonical(_integral(args))


def _integral(value: Any) -> Any:
    """``value`` with every integral float as an int, recursively."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in cast("Mapping[str, Any]", value).items()}
    if isinstance(value, list):
        return [_integral(v) for v in cast("list[Any]", value)]
    return value


def text_content(answer: str) -> str:
    """What a text signature seals: the turn's answer text up to the signed part."""
    return "text\x00" + answer


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def decode_signature(text: str) -> bytes | None:
    """The bytes of a base64 signature (standard or URL-safe alphabet, padded or not);
    ``None`` if it is not base64."""
    if not _B64_RE.match(text):
        return None
    core = text.rstrip("=")
    if len(core) % 4 == 1:
        return None
    std = core.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(std + "=" * (-len(std) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


# --- request parsing ---------------------------------------------------------------------


def _snake(camel: str) -> str:
    return _SNAKE_RE.sub(r"_\1", camel).lower()


def _get(obj: Mapping[str, Any], camel: str) -> Any:
    """``obj[camel]``, or its snake_case spelling (the SDK mixes both)."""
    value = obj.get(camel)
    if value is None:
        value = obj.get(_snake(camel))
    return value


@dataclass(frozen=True)
class _Part:
    content: int  # the index of its content in ``contents``, for error messages
    index: int
    text: str | None
    thought: bool
    signature: str | None
    call: Mapping[str, Any] | None
    response: Mapping[str, Any] | None
    other: str | None


@dataclass(frozen=True)
class _Content:
    """One turn: a content of the request, or several consecutive contents of one role
    merged (``index`` is the first one's)."""

    index: int
    role: Literal["user", "model"]
    parts: tuple[_Part, ...]

    @property
    def calls(self) -> list[_Part]:
        return [p for p in self.parts if p.call is not None]

    @property
    def responses(self) -> list[_Part]:
        return [p for p in self.parts if p.response is not None]

    @property
    def has_user_input(self) -> bool:
        """A user turn with something else than function responses (it starts a turn)."""
        return self.role == "user" and any(p.response is None for p in self.parts)


@dataclass(frozen=True)
class GeminiRequest:
    """A validated request: its neutral conversation and settings, and what the renderer
    needs (the model, whether thoughts are shown, whether the model thinks)."""

    model: GeminiProfile
    conversation: Conversation
    settings: Settings
    include_thoughts: bool


def _parse_part(raw: Any, i: int, j: int) -> _Part:
    part = mapping_or_none(raw)
    if part is None:
        raise _invalid(
            f"Invalid value at 'contents[{i}].parts[{j}]' (type.googleapis.com/google.ai."
            "generativelanguage.v1beta.Part), not an object"
        )
    text = part.get("text")
    signature = _get(part, "thoughtSignature")
    if signature is not None and not isinstance(signature, str):
        raise _invalid(
            f"Invalid value at 'contents[{i}].parts[{j}].thought_signature' (TYPE_BYTES), "
            f"{_canonical(signature)}"
        )
    call = mapping_or_none(_get(part, "functionCall"))
    response = mapping_or_none(_get(part, "functionResponse"))
    if call is not None and not isinstance(call.get("name"), str):
        raise _invalid(
            f"* GenerateContentRequest.contents[{i}].parts[{j}].function_call.name: Name cannot be empty."
        )
    if response is not None and not isinstance(response.get("name"), str):
        raise _invalid(
            f"* GenerateContentRequest.contents[{i}].parts[{j}].function_response.name: Name cannot be empty."
        )
    other = None
    if text is None and call is None and response is None:
        kinds = [k for k in part if k not in ("thought", "thoughtSignature", "thought_signature")]
        other = f"[{kinds[0]}]" if kinds else ""
    return _Part(
        content=i,
        index=j,
        text=text if isinstance(text, str) else None,
        thought=part.get("thought") is True,
        signature=signature,
        call=call,
        response=response,
        other=other,
    )


def _parse_contents(raw: Any) -> list[_Content]:
    items = list_or_none(raw)
    if not items:
        raise _invalid("* GenerateContentRequest.contents: contents is not specified")
    contents: list[_Content] = []
    for i, item in enumerate(items):
        content = mapping_or_none(item)
        if content is None:
            raise _invalid(
                f"Invalid value at 'contents[{i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), not an object"
            )
        role = content.get("role") or "user"
        if role not in ("user", "model"):
            raise _invalid("Please use a valid role: user, model.")
        parts = list_or_none(content.get("parts"))
        if not parts:
            raise _invalid(
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            )
        contents.append(
            _Content(
                i,
                role,
                tuple(_parse_part(p, i, j) for j, p in enumerate(parts)),
            )
        )
    return contents


def _merge_turns(contents: Sequence[_Content]) -> list[_Content]:
    """Consecutive contents of one role as one turn. google-genai's own streamed chat
    (and its automatic function calling over a stream) keeps each streamed chunk as a
    model content of its own, and the service accepts that history as the turn it was:
    turn order, signatures and the running answer text are checked on the merged turn."""
    turns: list[_Content] = []
    for content in contents:
        if turns and turns[-1].role == content.role:
            last = turns[-1]
            turns[-1] = _Content(last.index, last.role, last.parts + content.parts)
        else:
            turns.append(content)
    return turns


def _normalize_schema(schema: Any) -> Any:
    """An OpenAPI-style ``parameters`` schema (``"type": "OBJECT"``) as JSON schema."""
    if isinstance(schema, Mapping):
        out: dict[str, Any] = {}
        for key, value in cast("Mapping[str, Any]", schema).items():
            if key == "type" and isinstance(value, str):
                out[key] = value.lower()
            else:
                out[key] = _normalize_schema(value)
        return out
    if isinstance(schema, list):
        return [_normalize_schema(v) for v in cast("list[Any]", schema)]
    return schema


def _tools(raw: Any) -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = []
    for t, item in enumerate(as_list(raw)):
        tool = as_mapping(item)
        for d, decl_raw in enumerate(as_list(_get(tool, "functionDeclarations"))):
            decl = as_mapping(decl_raw)
            name = decl.get("name")
            if not isinstance(name, str) or not name:
                raise _invalid(
                    f"* GenerateContentRequest.tools[{t}].function_declarations[{d}].name: "
                    "Name cannot be empty."
                )
            schema = mapping_or_none(_get(decl, "parametersJsonSchema"))
            if schema is None:
                schema = cast(
                    "Mapping[str, Any]", _normalize_schema(as_mapping(decl.get("parameters")))
                )
            description = decl.get("description")
            specs.append(
                ToolSpec(name, description if isinstance(description, str) else "", schema)
            )
    return tuple(specs)


def _system(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    texts = [as_mapping(p).get("text") for p in as_list(as_mapping(raw).get("parts"))]
    return "\n".join(t for t in texts if isinstance(t, str) and t)


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    return None


def _thinking(
    config: Mapping[str, Any], model: GeminiProfile, platform: GeminiPlatform
) -> tuple[bool, bool, int | None, str | None]:
    """(thinking, include_thoughts, budget, effort)."""
    include = _get(config, "includeThoughts") is True
    raw_budget = _get(config, "thinkingBudget")
    raw_level = _get(config, "thinkingLevel")
    level = raw_level.upper() if isinstance(raw_level, str) else raw_level
    if level == "THINKING_LEVEL_UNSPECIFIED":
        level = None
    if raw_budget is not None and level is not None:
        raise _invalid(
            platform.thinking("You can only set only one of thinking budget and thinking level.")
        )
    if level is not None:
        if level not in LEVELS:
            raise _invalid(
                "Invalid value at 'generation_config.thinking_config.thinking_level' "
                "(type.googleapis.com/google.ai.generativelanguage.v1beta.GenerationConfig."
                f"ThinkingConfig.ThinkingLevel), {_canonical(raw_level)}"
            )
        if model.family != "3":
            raise _invalid(
                f"Unable to submit request because thinking_level is not supported by this "
                f"model. Learn more: {VERTEX_MODEL_DOCS}"
                if platform.vertex
                else "Thinking level is not supported for this model."
            )
        return True, include, None, _EFFORT[cast("str", level)]
    if raw_budget is None:
        thinks = model.family == "3" or model.variant != "flash-lite"
        return thinks, include and thinks, None, "high" if model.family == "3" else None
    budget = _int(raw_budget)
    if budget is None:
        raise _invalid(
            "Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32), "
            f"{_canonical(raw_budget)}"
        )
    if budget == 0 and model.always_thinks and model.family == "2.5":
        raise _invalid(
            platform.thinking("The model does not support setting thinking_budget to 0.")
        )
    low, high = {"pro": (128, 32768), "flash-lite": (512, 24576)}.get(model.variant, (1, 24576))
    if model.family == "3":
        low, high = 0, 65536
    if budget not in (-1, 0) and not low <= budget <= high:
        raise _invalid(platform.thinking(f"The thinking budget ({budget}) is invalid."))
    thinks = model.family == "3" or budget != 0
    effort = "low" if 0 <= budget <= 1024 and model.family == "3" else None
    return thinks, include and thinks, budget if budget > 0 else None, effort


def _tool_choice(
    raw: Any, tools: tuple[ToolSpec, ...]
) -> tuple[Literal["auto", "any", "tool", "none"], str | None, tuple[ToolSpec, ...]]:
    config = as_mapping(_get(as_mapping(raw), "functionCallingConfig"))
    mode = config.get("mode") or "AUTO"
    mode = mode.upper() if isinstance(mode, str) else mode
    if mode not in ("AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"):
        raise _invalid(
            "Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/"
            f"google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), {_canonical(mode)}"
        )
    allowed = [n for n in as_list(_get(config, "allowedFunctionNames")) if isinstance(n, str)]
    if mode == "NONE":
        return "none", None, tools
    if mode == "ANY":
        offered = tuple(t for t in tools if t.name in allowed) if allowed else tools
        if len(allowed) == 1 and offered:
            return "tool", allowed[0], tools
        return "any", None, offered or tools
    return "auto", None, tools


def _result_text(response: Mapping[str, Any]) -> tuple[str, bool]:
    body = as_mapping(response.get("response"))
    if len(body) == 1:
        value = next(iter(body.values()))
        if isinstance(value, str):
            return value, "error" in body
    return _canonical(body) if body else "", "error" in body and "output" not in body


def _check_turns(contents: Sequence[_Content]) -> None:
    """Function responses answer the function call turn just before them."""
    for position, content in enumerate(contents):
        previous = contents[position - 1] if position > 0 else None
        if (
            content.role == "model"
            and content.calls
            and (previous is None or previous.role != "user")
        ):
            raise _invalid(
                "Please ensure that function call turn comes immediately after a user turn "
                "or after a function response turn."
            )
        responses = content.responses
        if content.role != "user" or not responses:
            continue
        if previous is None or previous.role != "model" or not previous.calls:
            raise _invalid(
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
        calls = previous.calls
        if len(responses) != len(calls):
            raise _invalid(
                "Please ensure that the number of function response parts is equal to the "
                "number of function call parts of the function call turn."
            )
        names = {cast("Mapping[str, Any]", c.call)["name"] for c in calls}
        for part in responses:
            name = cast("Mapping[str, Any]", part.response)["name"]
            if name not in names:
                raise _invalid(
                    f"Function response `{name}` in contents[{part.content}].parts[{part.index}] "
                    "does not answer any function call of the function call turn."
                )


def _check_signatures(
    contents: Sequence[_Content],
    model: GeminiProfile,
    platform: GeminiPlatform,
    signer: Signer,
) -> None:
    """Every signature present verifies against its part (in every turn); on Gemini 3 the
    first function call of each model turn of the current turn carries one."""
    start = -1
    for content in contents:
        if content.has_user_input:
            start = content.index
    kind = signature_kind(model)
    for content in contents:
        if content.role != "model":
            continue
        answer = ""
        rank = 0
        for part in content.parts:
            content_bytes: str | None = None
            if part.call is not None:
                content_bytes = call_content(
                    rank, cast("str", part.call["name"]), as_mapping(part.call.get("args"))
                )
                rank += 1
            elif part.text is not None and not part.thought:
                answer += part.text
                content_bytes = text_content(answer)
            if part.signature is None:
                continue
            blob = decode_signature(part.signature)
            if blob is None:
                raise _invalid(
                    f"Invalid value at 'contents[{part.content}].parts[{part.index}]."
                    f"thought_signature' (TYPE_BYTES), Base64 decoding failed for "
                    f'"{part.signature}"'
                )
            if part.signature.encode() in platform.skip_signatures:
                continue  # the dummy sent verbatim rather than base64-encoded
            if blob in platform.skip_signatures:
                continue
            if content_bytes is None or not signer.verify(
                platform.scope, kind, blob, content_bytes
            ):
                raise _invalid(platform.corrupted)
        if model.family == "3" and content.index > start:
            calls = content.calls
            if calls and calls[0].signature is None:
                name = cast("str", cast("Mapping[str, Any]", calls[0].call)["name"])
                raise _invalid(platform.missing_signature(name, calls[0].content + 1))


def _neutral(contents: Sequence[_Content]) -> tuple[Turn, ...]:
    turns: list[Turn] = []
    previous_calls: list[tuple[str, str]] = []  # (id, name) of the last function call turn
    for content in contents:
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[Call] = []
        results: list[CallResult] = []
        unanswered = list(previous_calls)
        for part in content.parts:
            if part.call is not None:
                call_id = part.call.get("id")
                if not isinstance(call_id, str) or not call_id:
                    call_id = f"gemini-call-{content.index}-{len(calls)}"
                calls.append(
                    Call(call_id, cast("str", part.call["name"]), as_mapping(part.call.get("args")))
                )
            elif part.response is not None:
                name = part.response["name"]
                wanted = part.response.get("id")
                match = next((c for c in unanswered if c[0] == wanted), None) or next(
                    (c for c in unanswered if c[1] == name), None
                )
                if match is not None:
                    unanswered.remove(match)
                text, is_error = _result_text(part.response)
                results.append(
                    CallResult(match[0] if match else f"gemini-response-{name}", text, is_error)
                )
            elif part.text is not None:
                (thoughts if part.thought else texts).append(part.text)
            elif part.other:
                texts.append(part.other)
        if content.role == "model":
            previous_calls = [(c.id, c.name) for c in calls]
        turns.append(
            Turn(
                role="assistant" if content.role == "model" else "user",
                text="".join(texts) if content.role == "model" else "\n".join(texts),
                thinking="".join(thoughts),
                calls=tuple(calls),
                results=tuple(results),
            )
        )
    return tuple(turns)


def parse_request(
    body: Mapping[str, Any], model: GeminiProfile, *, platform: GeminiPlatform, signer: Signer
) -> GeminiRequest:
    """Validate a ``GenerateContentRequest`` for ``model`` (see :func:`gemini_profile`) and
    build its neutral view. Raises :class:`~thinkagent.emulator.framework.WireError` with
    the real status and message."""
    contents = _merge_turns(_parse_contents(body.get("contents")))
    generation = as_mapping(_get(body, "generationConfig"))
    thinking, include, budget, effort = _thinking(
        as_mapping(_get(generation, "thinkingConfig")), model, platform
    )
    max_tokens = _int(_get(generation, "maxOutputTokens"))
    if max_tokens is not None and max_tokens < 1:
        raise _invalid(
            "* GenerateContentRequest.generation_config.max_output_tokens: "
            "max_output_tokens must be positive."
        )
    tools = _tools(body.get("tools"))
    choice, tool_name, offered = _tool_choice(_get(body, "toolConfig"), tools)
    _check_turns(contents)
    _check_signatures(contents, model, platform, signer)
    conversation = Conversation(
        system=_system(_get(body, "systemInstruction")),
        turns=_neutral(contents),
        tools=offered,
    )
    settings = Settings(
        thinking=thinking,
        budget_tokens=budget,
        effort=effort,
        max_tokens=max_tokens,
        tool_choice=choice,
        tool_name=tool_name,
        parallel_tool_calls=True,
        interleaved=True,
    )
    return GeminiRequest(model, conversation, settings, include)
