"""The Gemini rules: model profiles, request validation, replay rules and thought
signatures, for the Gemini API and Vertex AI wires (:mod:`.generate`).

Both wires take the same ``GenerateContentRequest`` and differ in their signing scope
(``gemini`` or ``vertex``: a signature issued by one never verifies in the other) and in
the wording of some errors (a :class:`GeminiPlatform` each). A refused request raises
:class:`~thinkagent.emulator.framework.WireError` with Google's status and message.

Models (by name):

* ``gemini-3-*`` (and later: ``gemini-3.1-*``...) always think (``thinkingLevel``, the
  levels each model takes: :attr:`GeminiProfile.levels`; a ``thinkingBudget`` is accepted too) and
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
import mimetypes
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..encoding import as_list, as_mapping, list_or_none, mapping_or_none
from ..framework import WireError
from ..model import Call, CallResult, Conversation, Media, Settings, ToolSpec, Turn
from ..signing import Signer
from . import server_tools

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
    document_types: frozenset[str]
    image_bytes: int
    document_bytes: int
    payload_bytes: int | None

    def invalid_signature(self, model: GeminiProfile) -> str:
        """The refusal of a signature that does not verify. The Gemini API words it
        ``Invalid thought signature.`` from Gemini 3.7 on (reported for gemini-3.7-flash:
        lbjlaq/Antigravity-Manager#3342) and ``Corrupted thought signature.`` before (the
        models before 3.7 is a guess of where the wording changed); Vertex AI has one text."""
        if not self.vertex and model.version >= (3, 7):
            return "Invalid thought signature."
        return self.corrupted

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

    def refused(self, message: str, docs: str | None = None) -> str:
        """A request error as this platform words it: Vertex prefixes its request errors
        (and points to its docs)."""
        if not self.vertex:
            return message
        tail = f" Learn more: {docs}" if docs else ""
        return f"Unable to submit request because {message}{tail}"

    def unsupported_mime(self, mime_type: str) -> str:
        """The refusal of a media type the model does not take (inline data, file data, a
        response MIME type)."""
        if self.vertex:
            return (
                f"Unable to submit request because it has a mimeType parameter with value "
                f"{mime_type}, which is not supported. Update the mimeType and try again. "
                f"Learn more: {VERTEX_MODEL_DOCS}"
            )
        return f"Unsupported MIME type: {mime_type}"

    def inline_limit(self, kind: str) -> int | None:
        """The most bytes one inline part of ``kind`` (``image``/``document``) may have."""
        return (self.image_bytes if kind == "image" else self.document_bytes) or None


SKIP_SIGNATURE = b"skip_thought_signature_validator"

_MIB = 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
"""Image types both platforms take (ai.google.dev/gemini-api/docs/image-understanding;
the Vertex model pages)."""
TEXT_DOCUMENT_TYPES = frozenset(
    {
        "application/pdf",
        "text/plain",
        "text/csv",
        "text/html",
        "text/css",
        "text/javascript",
        "application/x-javascript",
        "text/md",
        "text/markdown",
        "text/x-python",
        "application/x-python",
        "text/rtf",
        "text/xml",
    }
)
"""Document types the Gemini API takes (its document understanding guide; text files are
read as text)."""
FUNCTION_RESPONSE_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}
)
"""Media types a Gemini 3 function response may carry (the function calling guide,
"Multimodal function responses")."""
_AUDIO_VIDEO = ("audio/", "video/")
FUNCTION_CALLING_DOCS = (
    "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"
)

GEMINI_API = GeminiPlatform(
    scope="gemini",
    skip_signatures=frozenset({SKIP_SIGNATURE, b"context_engineering_is_the_way_to_go"}),
    corrupted="Corrupted thought signature.",
    vertex=False,
    document_types=TEXT_DOCUMENT_TYPES,
    image_bytes=0,  # bounded by the request payload only
    document_bytes=50 * _MIB,  # PDFs (file input methods guide)
    payload_bytes=100 * _MIB,  # inline data, base64 (January 2026: up from 20 MB)
)
VERTEX_AI = GeminiPlatform(
    scope="vertex",
    skip_signatures=frozenset({SKIP_SIGNATURE}),
    corrupted="Unable to submit request because Thought signature is not valid.",
    vertex=True,
    document_types=frozenset({"application/pdf", "text/plain"}),
    image_bytes=7 * _MIB,  # inline images (Gemini 3 model pages)
    document_bytes=50 * _MIB,  # documents through the API
    payload_bytes=None,
)


@dataclass(frozen=True)
class GeminiProfile:
    """What the emulator knows about a Gemini model name."""

    name: str
    family: Literal["3", "2.5"]
    variant: Literal["pro", "flash", "flash-lite", "other"]
    version: tuple[int, int] = (3, 0)

    @property
    def always_thinks(self) -> bool:
        return self.family == "3" or self.variant == "pro"

    @property
    def levels(self) -> tuple[str, ...]:
        """The thinking levels a Gemini 3 model takes (Vertex AI's thinking guide, per
        model): Gemini 3 Pro ``LOW`` and ``HIGH``; the Flash and Flash-Lite models up to
        3.6 ``MINIMAL`` to ``HIGH``; the others ``LOW``, ``MEDIUM`` and ``HIGH``. None takes
        ``XHIGH``."""
        if self.variant == "pro" and self.version == (3, 0):
            return ("LOW", "HIGH")
        if self.variant in ("flash", "flash-lite") and self.version <= (3, 6):
            return ("MINIMAL", "LOW", "MEDIUM", "HIGH")
        return ("LOW", "MEDIUM", "HIGH")

    @property
    def cache_minimum(self) -> int:
        """The shortest prompt (tokens) implicit caching caches: 4,096 for Gemini 3 and
        later, 2,048 for Gemini 2.5 (ai.google.dev/gemini-api/docs/caching)."""
        return 4096 if self.family == "3" else 2048


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
    return GeminiProfile(name, family, variant, version)


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
    raw: Mapping[str, Any]  # as sent: what prompt caching compares
    text: str | None
    thought: bool
    signature: str | None
    call: Mapping[str, Any] | None
    response: Mapping[str, Any] | None
    media: Media | None  # inline or file data
    response_media: tuple[Media, ...]  # the media of a function response (Gemini 3)
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
    needs (the model, whether thoughts are shown, whether the model thinks, and the
    request's pieces in reading order for prompt caching: the system instruction with the
    tools, then each turn, as sent)."""

    model: GeminiProfile
    conversation: Conversation
    settings: Settings
    include_thoughts: bool
    pieces: tuple[Any, ...] = ()
    server_invocations: bool = False  # built-in tools' calls shown in the content
    stream_arguments: bool = False  # function call arguments streamed as `partialArgs`


def _type_error(path: str, kind: str, value: Any) -> WireError:
    """The proto JSON parser's refusal of a value of the wrong type."""
    return _invalid(f"Invalid value at '{path}' ({kind}), {_canonical(value)}")


class _MediaReader:
    """Reads the media of one request, for one model on one platform: inline and file data
    in contents and (Gemini 3) in function responses, checked against the platform's types
    and sizes; the inline bytes are counted against the request payload limit."""

    def __init__(self, model: GeminiProfile, platform: GeminiPlatform) -> None:
        self.model = model
        self.platform = platform
        self.payload = 0  # base64 characters of inline data so far

    def part(self, part: Mapping[str, Any], path: str) -> Media | None:
        """The media of a content part, or None when it carries none."""
        inline = mapping_or_none(_get(part, "inlineData"))
        if inline is not None:
            return self._inline(inline, f"{path}.inline_data", self.platform.document_types)
        file = mapping_or_none(_get(part, "fileData"))
        if file is not None:
            return self._file(file, f"{path}.file_data", self.platform.document_types)
        return None

    def response(self, response: Mapping[str, Any], path: str) -> tuple[Media, ...]:
        """The media of a function response (its ``parts``), checked like the service does:
        only Gemini 3 takes them, only some types, file data only on Vertex, and every
        ``{"$ref": name}`` in the response must name one of them."""
        items = list_or_none(response.get("parts"))
        if not items:
            _check_refs(response.get("response"), set())
            return ()
        if self.model.family != "3":
            raise _invalid(
                self.platform.refused(
                    "`function_response.parts` is not supported for this model.",
                    FUNCTION_CALLING_DOCS,
                )
            )
        media: list[Media] = []
        names: set[str] = set()
        for k, raw in enumerate(items):
            item = as_mapping(raw)
            where = f"{path}.parts[{k}]"
            inline = mapping_or_none(_get(item, "inlineData"))
            file = mapping_or_none(_get(item, "fileData"))
            if file is not None and not self.platform.vertex:
                raise _invalid(
                    f'Invalid JSON payload received. Unknown name "fileData" at '
                    f"'{where}': Cannot find field."
                )
            body = inline if inline is not None else file
            if body is None:
                continue
            name = _get(body, "displayName")
            if isinstance(name, str) and name:
                names.add(name)
            if inline is not None:
                media.append(self._inline(inline, f"{where}.inline_data", FUNCTION_RESPONSE_TYPES))
            else:
                media.append(self._file(body, f"{where}.file_data", FUNCTION_RESPONSE_TYPES))
        _check_refs(response.get("response"), names)
        return tuple(media)

    def _mime(
        self, body: Mapping[str, Any], documents: frozenset[str]
    ) -> tuple[Literal["image", "document"], str]:
        raw = _get(body, "mimeType")
        mime_type = raw.split(";", 1)[0].strip().lower() if isinstance(raw, str) else ""
        if mime_type in IMAGE_TYPES:
            return "image", mime_type
        if mime_type in documents or (
            documents is self.platform.document_types and mime_type.startswith(_AUDIO_VIDEO)
        ):  # prompts take audio and video too; the neutral vocabulary calls them documents
            return "document", mime_type
        raise _invalid(self.platform.unsupported_mime(raw if isinstance(raw, str) else ""))

    def _inline(self, body: Mapping[str, Any], path: str, documents: frozenset[str]) -> Media:
        data = body.get("data")
        if not isinstance(data, str):
            raise _type_error(f"{path}.data", "TYPE_BYTES", data)
        blob = decode_signature(data)
        if blob is None:
            shown = data if len(data) <= 64 else data[:64] + "..."
            raise _invalid(
                f"Invalid value at '{path}.data' (TYPE_BYTES), Base64 decoding failed for "
                f'"{shown}"'
            )
        kind, mime_type = self._mime(body, documents)
        limit = self.platform.inline_limit(kind)
        if limit is not None and len(blob) > limit:
            raise _invalid(
                f"The file size of `{path}` is {len(blob)}, which exceeds max allowed file "
                f"size of {limit} for `{mime_type}` files. Reduce the file size by lowering "
                "the image resolution, splitting the PDF into multiple files, and so on."
            )
        self.payload += len(data)
        limit = self.platform.payload_bytes
        if limit is not None and self.payload > limit:
            raise _invalid(f"Request payload size exceeds the limit: {limit} bytes.")
        return Media(kind, mime_type, size=len(blob))

    def _file(self, body: Mapping[str, Any], path: str, documents: frozenset[str]) -> Media:
        uri = _get(body, "fileUri")
        if not isinstance(uri, str) or not uri:
            raise _invalid(f"* GenerateContentRequest.{path}.file_uri: file_uri must be set.")
        if _get(body, "mimeType") is None:  # the service reads it from the file itself
            guessed = mimetypes.guess_type(uri)[0] or "application/octet-stream"
            return Media("image" if guessed in IMAGE_TYPES else "document", guessed, url=uri)
        kind, mime_type = self._mime(body, documents)
        return Media(kind, mime_type, url=uri)


def _check_refs(value: Any, names: set[str]) -> None:
    """Every ``{"$ref": name}`` in a function response names one of its media parts."""
    if isinstance(value, Mapping):
        mapping = cast("Mapping[str, Any]", value)
        ref = mapping.get("$ref")
        if isinstance(ref, str) and ref not in names:
            raise _invalid(
                f"The referenced name `{ref}` in function_response.response does not match "
                "to a display_name in the function_response.parts."
            )
        for item in mapping.values():
            _check_refs(item, names)
    elif isinstance(value, list):
        for item in cast("list[Any]", value):
            _check_refs(item, names)


def _parse_part(raw: Any, i: int, j: int, media: _MediaReader) -> _Part:
    part = mapping_or_none(raw)
    path = f"contents[{i}].parts[{j}]"
    if part is None:
        raise _invalid(
            f"Invalid value at '{path}' (type.googleapis.com/google.ai."
            "generativelanguage.v1beta.Part), not an object"
        )
    text = part.get("text")
    if text is not None and not isinstance(text, str):
        raise _type_error(f"{path}.text", "TYPE_STRING", text)
    thought = part.get("thought")
    if thought is not None and not isinstance(thought, bool):
        raise _type_error(f"{path}.thought", "TYPE_BOOL", thought)
    signature = _get(part, "thoughtSignature")
    if signature is not None and not isinstance(signature, str):
        raise _type_error(f"{path}.thought_signature", "TYPE_BYTES", signature)
    if signature is not None and decode_signature(signature) is None:
        # The bytes are read with the JSON, whoever's part it is.
        raise _invalid(
            f"Invalid value at '{path}.thought_signature' (TYPE_BYTES), Base64 decoding failed "
            f'for "{signature}"'
        )
    call = mapping_or_none(_get(part, "functionCall"))
    response = mapping_or_none(_get(part, "functionResponse"))
    if call is not None and not isinstance(call.get("name"), str):
        raise _invalid(f"* GenerateContentRequest.{path}.function_call.name: Name cannot be empty.")
    if response is not None and not isinstance(response.get("name"), str):
        raise _invalid(
            f"* GenerateContentRequest.{path}.function_response.name: Name cannot be empty."
        )
    found = media.part(part, path)
    response_media = (
        media.response(response, f"{path}.function_response") if response is not None else ()
    )
    other = None
    if text is None and call is None and response is None and found is None:
        kinds = [k for k in part if k not in ("thought", "thoughtSignature", "thought_signature")]
        other = f"[{kinds[0]}]" if kinds else ""
    return _Part(
        content=i,
        index=j,
        raw=part,
        text=text,
        thought=thought is True,
        signature=signature,
        call=call,
        response=response,
        media=found,
        response_media=response_media,
        other=other,
    )


def _parse_contents(raw: Any, media: _MediaReader) -> list[_Content]:
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
                tuple(_parse_part(p, i, j, media) for j, p in enumerate(parts)),
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
            platform.refused("You can only set only one of thinking budget and thinking level.")
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
        if level not in model.levels:
            raise _invalid(
                f"Unable to submit request because thinking_level {level} is not supported by "
                f"this model. Learn more: {VERTEX_MODEL_DOCS}"
                if platform.vertex
                else f"Thinking level {level} is not supported for this model. Please retry "
                "with other thinking level."
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
        raise _invalid(platform.refused("The model does not support setting thinking_budget to 0."))
    low, high = {"pro": (128, 32768), "flash-lite": (512, 24576)}.get(model.variant, (1, 24576))
    if model.family == "3":
        low, high = 0, 65536
    if budget not in (-1, 0) and not low <= budget <= high:
        raise _invalid(platform.refused(f"The thinking budget ({budget}) is invalid."))
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
            else:
                content_bytes = server_tools.part_content(part.raw)
            if part.signature is None:
                continue
            blob = cast("bytes", decode_signature(part.signature))  # checked when parsed
            if part.signature.encode() in platform.skip_signatures:
                continue  # the dummy sent verbatim rather than base64-encoded
            if blob in platform.skip_signatures:
                continue
            if content_bytes is None or not signer.verify(
                platform.scope, kind, blob, content_bytes
            ):
                raise _invalid(platform.invalid_signature(model))
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
        media: list[Media] = []
        unanswered = list(previous_calls)
        for part in content.parts:
            if part.media is not None:
                media.append(part.media)
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
                    CallResult(
                        match[0] if match else f"gemini-response-{name}",
                        text,
                        is_error,
                        part.response_media,
                    )
                )
            elif part.text is not None:
                (thoughts if part.thought else texts).append(part.text)
            elif part.other and not server_tools.SERVER_PART_KEYS.intersection(part.raw):
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
                media=tuple(media) if content.role == "user" else (),
                server_uses=server_tools.read_parts([p.raw for p in content.parts])
                if content.role == "model"
                else (),
            )
        )
    return tuple(turns)


_RESPONSE_TYPES = ("text/plain", "application/json", "application/xml", "application/yaml")
_SCHEMA_FIELDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
"""The fields of the OpenAPI-style `Schema` that `responseSchema` takes (anything else, such
as a JSON schema's `$schema` or `$defs`, is an unknown field to the service)."""


def _check_schema(schema: Any, path: str) -> None:
    if isinstance(schema, list):
        for item in cast("list[Any]", schema):
            _check_schema(item, path)
        return
    if not isinstance(schema, Mapping):
        return
    for key, value in cast("Mapping[str, Any]", schema).items():
        if key not in _SCHEMA_FIELDS and _camel(key) not in _SCHEMA_FIELDS:
            raise _invalid(
                f'Invalid JSON payload received. Unknown name "{key}" at '
                f"'{path}': Cannot find field."
            )
        if key == "properties" and isinstance(value, Mapping):
            _check_schema(list(cast("Mapping[str, Any]", value).values()), path)
        elif key in ("items", "anyOf"):
            _check_schema(value, path)


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(word.title() for word in rest)


def _response_schema(
    generation: Mapping[str, Any],
    model: GeminiProfile,
    platform: GeminiPlatform,
    functions: bool,
) -> Mapping[str, Any] | None:
    """The JSON schema the answer must follow (``responseMimeType`` ``application/json``
    with ``responseJsonSchema`` or the OpenAPI-style ``responseSchema``; JSON mode alone
    asks for any object), or None for a free-text answer."""
    raw = _get(generation, "responseMimeType")
    mime_type = raw.lower() if isinstance(raw, str) else "text/plain"
    if mime_type not in _RESPONSE_TYPES and mime_type != "text/x.enum":
        if platform.vertex:
            raise _invalid(platform.unsupported_mime(str(raw)))
        raise _invalid(
            "* GenerateContentRequest.generation_config.response_mime_type: allowed mimetypes "
            "are `text/plain`, `application/json`, `application/xml`, `application/yaml` and "
            "`text/x.enum`."
        )
    if mime_type != "application/json":
        return None
    if functions and model.family == "2.5":  # Gemini 3 combines them (its developer guide)
        raise _invalid(
            "Function calling with a response mime type: 'application/json' is unsupported"
        )
    json_schema = mapping_or_none(_get(generation, "responseJsonSchema"))
    if json_schema is not None:
        return json_schema
    schema = _get(generation, "responseSchema")
    if schema is None:
        return {"type": "object"}
    _check_schema(schema, "generation_config.response_schema")
    return cast("Mapping[str, Any]", _normalize_schema(as_mapping(schema)))


def _pieces(body: Mapping[str, Any], contents: Sequence[_Content]) -> tuple[Any, ...]:
    """What prompt caching compares, in the order the model reads it: the system
    instruction and the tools, then each turn's parts as sent."""
    head = {"system": _get(body, "systemInstruction"), "tools": body.get("tools")}
    return (head, *([c.role, [p.raw for p in c.parts]] for c in contents))


def parse_request(
    body: Mapping[str, Any], model: GeminiProfile, *, platform: GeminiPlatform, signer: Signer
) -> GeminiRequest:
    """Validate a ``GenerateContentRequest`` for ``model`` (see :func:`gemini_profile`) and
    build its neutral view. Raises :class:`~thinkagent.emulator.framework.WireError` with
    the real status and message."""
    contents = _merge_turns(_parse_contents(body.get("contents"), _MediaReader(model, platform)))
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
    server, invocations = server_tools.declared(
        body, model.name, model.family, platform.vertex, tools
    )
    stream_arguments = _stream_arguments(_get(body, "toolConfig"), platform)
    response_schema = _response_schema(generation, model, platform, bool(tools))
    _check_turns(contents)
    _check_signatures(contents, model, platform, signer)
    conversation = Conversation(
        system=_system(_get(body, "systemInstruction")),
        turns=_neutral(contents),
        tools=offered,
        server_tools=server,
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
        response_schema=response_schema,
    )
    return GeminiRequest(
        model,
        conversation,
        settings,
        include,
        _pieces(body, contents),
        server_invocations=invocations,
        stream_arguments=stream_arguments and model.family == "3",
    )


def _stream_arguments(raw: Any, platform: GeminiPlatform) -> bool:
    """Whether ``functionCallingConfig.streamFunctionCallArguments`` asks for the arguments of
    function calls in pieces (Vertex AI only: the Gemini API's parser does not know the field;
    a Gemini 2.5 model ignores it [guess])."""
    config = as_mapping(_get(as_mapping(raw), "functionCallingConfig"))
    value = _get(config, "streamFunctionCallArguments")
    if value is not None and not platform.vertex:
        raise _invalid(
            'Invalid JSON payload received. Unknown name "streamFunctionCallArguments" at '
            "'tool_config.function_calling_config': Cannot find field."
        )
    return value is True
