"""The Gemini family's configuration and rules (Gemini API and Vertex AI): the thinking config,
the replay policies, which signatures a model accepts, signature encoding, generated call ids and
finish reasons.

Pure Python: no vendor SDK is imported here, so every rule can be tested on its own.
`generate.py` turns these into `google.genai` types.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import mimetypes
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, get_args

from ...errors import ConfigurationError
from ...messages import Document, FinishReason, Image
from ...stream import WarningEvent
from .. import base
from ..base import MediaSupport, ModelProfile, Thinking, clamp_thinking

__all__ = [
    "GENERATED_ID",
    "MINIMAL_REFUSED",
    "SIGNATURE_ERROR",
    "SIGNATURE_REFUSALS",
    "SKIP_SIGNATURE",
    "GeminiThinking",
    "MissingSignature",
    "ReplayThoughts",
    "ThinkingLevel",
    "check_missing_signature",
    "check_replay_thoughts",
    "decode_signature",
    "encode_signature",
    "error_type",
    "finish_reason",
    "gemini_version",
    "generated_call_id",
    "interaction_finish_reason",
    "interactions_fields",
    "interactions_thinking_for_setting",
    "media_problem",
    "media_type",
    "model_profile",
    "signature_generation",
    "signatures_carry_over",
    "thinking_for_model",
    "thinking_for_setting",
]

ThinkingLevel = Literal["MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH"]
"""Gemini 3 thinking levels (case-insensitive when given to `GeminiThinking`)."""

MissingSignature = Literal["skip_validator", "send"]
"""What replay does with a current-turn function call that has no signature of this scope:
`"skip_validator"` puts the documented dummy signature on the first call of the model turn,
`"send"` sends the call unsigned (Gemini 3 then refuses the request)."""

ReplayThoughts = Literal["signed", "all"]
"""Which thought parts go back: `"signed"` (those carrying a signature, the default) or `"all"`
(unsigned thought summaries too, which the service does not need)."""

SKIP_SIGNATURE = b"skip_thought_signature_validator"
"""The documented dummy thought signature for a function call Gemini did not produce (history
from another provider or scope, or hand-written): accepted by the Gemini API and Vertex AI."""

GENERATED_ID = "generated_id"
"""`ToolCall.provider_details` key marking an id thinkagent generated because the service sent
none: such an id is never sent back to the service."""

_LEVELS: tuple[str, ...] = get_args(ThinkingLevel)
_MISSING: tuple[str, ...] = get_args(MissingSignature)
_REPLAY: tuple[str, ...] = get_args(ReplayThoughts)

_VERSION = re.compile(r"^gemini-(?P<major>\d+)(?:\.(?P<minor>\d+))?-(?P<rest>.*)$")


def gemini_version(model: str) -> tuple[int, int, str] | None:
    """`(major, minor, rest)` of a Gemini model name (`gemini-2.5-pro` -> `(2, 5, "pro")`),
    resource prefixes removed (`models/`, `publishers/google/models/`, `projects/...`); None
    for a name that is not versioned that way (aliases, tuned models, other families)."""
    name = model.rsplit("/", 1)[-1]
    match = _VERSION.match(name)
    if match is None:
        return None
    return int(match.group("major")), int(match.group("minor") or 0), match.group("rest")


@functools.lru_cache(maxsize=64)
def signature_generation(model: str | None) -> str | None:
    """The generation whose thought signatures a model accepts: `"3"` for Gemini 3 and later,
    `"2.5"` for Gemini 2.5; None when the name does not tell (then signatures are assumed to
    carry over). Signatures are replayed only to a model of the same generation."""
    version = gemini_version(model) if model else None
    if version is None:
        return None
    return "3" if version[0] >= 3 else f"{version[0]}.{version[1]}"


def signatures_carry_over(signed_by: str | None, model: str) -> bool:
    """Whether the thought signatures of a message written by the model named `signed_by` are
    valid for `model`: only within one generation (ADR 16), so a turn of Gemini 3 is foreign
    to Gemini 2.5 and back. A name that does not tell its generation carries over."""
    theirs = signature_generation(signed_by)
    ours = signature_generation(model)
    return theirs is None or ours is None or theirs == ours


def _thinks(version: tuple[int, int, str] | None) -> bool:
    """Whether a model thinks at all: Gemini 2.5 and newer (and names we cannot place)."""
    return version is None or version[:2] >= (2, 5)


def _always_thinks(version: tuple[int, int, str] | None) -> bool:
    """Pro models of Gemini 2.5 and newer cannot turn thinking off."""
    return version is not None and version[:2] >= (2, 5) and version[2].startswith("pro")


@dataclass(frozen=True, slots=True)
class GeminiThinking:
    """How a Gemini model thinks: `thinkingConfig` on the wire.

    ```python
    GeminiThinking(level="high")            # Gemini 3: a thinking level
    GeminiThinking(budget=1024)             # Gemini 2.5: thinking tokens (0 off, -1 automatic)
    GeminiThinking(include_thoughts=False)  # the model's own thinking, without thought summaries
    ```

    - `include_thoughts`: return thought summaries (`thought: true` parts). `None` means on
      wherever the model thinks, off when thinking is turned off with `budget=0`.
    - `budget`: thinking tokens (Gemini 2.5; Gemini 3 accepts it for compatibility): `0`
      turns thinking off, `-1` lets the model decide.
    - `level`: `MINIMAL`, `LOW`, `MEDIUM`, `HIGH` or `XHIGH` (Gemini 3), any case (the SDK's
      `types.ThinkingLevel` too); kept in capitals, as the wire takes it.

    Settings that conflict whatever the model raise `ConfigurationError` here; `GeminiModel`
    checks the rest against its model (a level on Gemini 2.5, `budget=0` on a Pro model).
    """

    include_thoughts: bool | None = None
    budget: int | None = None
    level: ThinkingLevel | str | None = None

    def __post_init__(self) -> None:
        include_thoughts, budget, level = self.include_thoughts, self.budget, self.level
        if include_thoughts is not None and not isinstance(include_thoughts, bool):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ConfigurationError(
                f"include_thoughts must be True or False, got {include_thoughts!r}"
            )
        if budget is not None and (
            not isinstance(budget, int) or isinstance(budget, bool) or budget < -1  # pyright: ignore[reportUnnecessaryIsInstance]
        ):
            raise ConfigurationError(
                f"budget must be a number of thinking tokens, 0 (off) or -1 (automatic), "
                f"got {budget!r}"
            )
        if level is not None:
            upper = str(getattr(level, "value", level)).upper()
            if upper not in _LEVELS:
                raise ConfigurationError(
                    f"level must be one of {', '.join(_LEVELS)} (any case), got {level!r}"
                )
            object.__setattr__(self, "level", upper)  # frozen: normalised once, here
            if budget is not None:
                raise ConfigurationError(
                    "give either budget or level, not both: Gemini 3 models take a thinking "
                    "level, Gemini 2.5 models a thinking budget"
                )
        if budget == 0 and include_thoughts:
            raise ConfigurationError(
                "include_thoughts=True asks for thought summaries but budget=0 turns "
                "thinking off: drop one of them"
            )

    @property
    def thinks(self) -> bool:
        """Whether thinking is on (it is unless `budget=0`)."""
        return self.budget != 0

    def to_param(self) -> dict[str, Any] | None:
        """The wire form: the `ThinkingConfig` fields to send (None: send no thinking config).
        `include_thoughts=None` sends nothing for it; `GeminiModel` resolves it first."""
        config: dict[str, Any] = {}
        if self.include_thoughts:
            config["include_thoughts"] = True
        if self.budget is not None:
            config["thinking_budget"] = self.budget
        if self.level is not None:
            config["thinking_level"] = self.level
        return config or None


MINIMAL_REFUSED = (
    "Thinking level MINIMAL is not supported for this model. Please retry with other thinking "
    "level."
)
"""Gemini's refusal of `MINIMAL` on a model without it (Gemini 3 Pro, 3.1 Pro, Flash from 3.7:
pydantic/pydantic-ai#7466, vercel/ai#18986)."""


def thinking_for_model(model: str, thinking: GeminiThinking | None) -> GeminiThinking:
    """`thinking` checked against `model` (`ConfigurationError`: a level on a model older than
    Gemini 3, `MINIMAL` on a Gemini 3 model that refuses it, thinking turned off on a model
    that always thinks), with `include_thoughts` resolved: on wherever the model thinks. None
    is the model's default thinking."""
    if thinking is None:
        thinking = GeminiThinking()
    version = gemini_version(model)
    if thinking.level is not None and version is not None and version[0] < 3:
        raise ConfigurationError(
            f"{model} takes a thinking budget, not a level (levels are for Gemini 3 models): "
            "use budget=N, budget=0 (off) or budget=-1 (automatic)"
        )
    if thinking.budget == 0 and _always_thinks(version):
        raise ConfigurationError(
            f"{model} cannot turn thinking off: give a budget above 0, -1 (automatic) "
            "or leave it unset"
        )
    if thinking.level == "MINIMAL" and version is not None and not _has_minimal(version):
        raise ConfigurationError(
            f"{model} does not take the thinking level MINIMAL (Gemini refuses it: "
            f"{MINIMAL_REFUSED!r}): its lowest level is LOW"
        )
    if thinking.include_thoughts is not None:
        return thinking
    return replace(thinking, include_thoughts=thinking.thinks and _thinks(version))


def _levels(version: tuple[int, int, str]) -> tuple[base.ThinkingLevel, ...]:
    """The shared levels a Gemini 3 model takes (Vertex AI's thinking guide, per model):
    Gemini 3 Pro `LOW` and `HIGH`; every later one `LOW`, `MEDIUM` and `HIGH` (the Flash
    models up to 3.6 also `MINIMAL`, which has no shared level). None takes more than
    `HIGH`."""
    if version[:2] == (3, 0) and version[2].startswith("pro"):
        return ("low", "high")
    return ("low", "medium", "high")


def _has_minimal(version: tuple[int, int, str]) -> bool:
    """Whether a Gemini 3 model takes `MINIMAL`: the Flash and Flash-Lite models up to 3.6."""
    return version[2].startswith("flash") and version[:2] <= (3, 6)


_BUDGETS: Mapping[str, int] = {"low": 1024, "medium": 8192, "high": 24576}
"""Gemini 2.5 thinking budgets for the shared levels; `max` is the model's most."""


def _max_budget(version: tuple[int, int, str] | None) -> int:
    """The largest budget a Gemini 2.5 model takes: 32,768 on Pro, 24,576 on Flash and
    Flash-Lite (ai.google.dev/gemini-api/docs/thinking)."""
    return 32768 if version is not None and version[2].startswith("pro") else 24576


def thinking_for_setting(
    model: str, value: Thinking, include_thoughts: bool | None, *, scope: str
) -> tuple[GeminiThinking, tuple[WarningEvent, ...]]:
    """The thinking configuration for the shared knob `ModelSettings(thinking=value)`, with
    the warnings of what had to change.

    Gemini 3 takes a level: `True` is the model's default level, a shared level the level of
    that name, clamped to those the model takes (`max` to `HIGH`, `medium` on Gemini 3 Pro
    to `HIGH`: `clamp_thinking`); `False` is the lowest level (`MINIMAL` where the model has
    it, else `LOW`, without thought summaries) with `thinking_not_disabled`: Gemini 3 always
    thinks. Gemini 2.5, and model names that do not tell their generation (Gemini 3 takes
    budgets too), take a budget: `True` is dynamic (-1), a level 1,024 / 8,192 / 24,576
    tokens, `max` the model's most; `False` is 0, except on Pro, which cannot turn thinking
    off: its least (128) with `thinking_not_disabled`.

    `include_thoughts` is the model's own choice when it made one, else on while thinking.
    """
    version = gemini_version(model)
    warnings: list[WarningEvent] = []
    budget: int | None = None
    level: str | None = None
    thinks = value is not False
    if version is not None and version[0] >= 3:
        if value is False:
            level = "MINIMAL" if _has_minimal(version) else "LOW"
        elif value is not True:
            chosen, warning = clamp_thinking(value, _levels(version), scope=scope, model=model)
            level = chosen.upper()
            warnings.extend(filter(None, [warning]))
        if value is False:
            warnings.append(_not_disabled(model, level, scope))
    elif value is False:
        budget = 128 if _always_thinks(version) else 0
        if budget:
            warnings.append(_not_disabled(model, f"a budget of {budget} tokens", scope))
    else:
        budget = -1 if value is True else _BUDGETS.get(value, _max_budget(version))
    if not thinks or budget == 0:
        include_thoughts = False
    elif include_thoughts is None:
        include_thoughts = True
    thinking = GeminiThinking(include_thoughts=include_thoughts, budget=budget, level=level)
    return thinking, tuple(warnings)


def _not_disabled(model: str, used: str | None, scope: str) -> WarningEvent:
    return WarningEvent(
        code="thinking_not_disabled",
        message=f"{model} cannot turn thinking off; it thinks at {used} instead",
        scope=scope,
    )


def interactions_fields(thinking: GeminiThinking) -> dict[str, str]:
    """The Interactions API's `generation_config` fields for `thinking` (resolved by
    `thinking_for_model`): `thinking_level` in lower case, and `thinking_summaries`: `auto`
    when thought summaries are asked for, `none` when they are turned off. The Interactions
    API takes no thinking budget: `GeminiInteractionsModel` refuses one."""
    fields: dict[str, str] = {}
    if thinking.level is not None:
        fields["thinking_level"] = thinking.level.lower()
    if thinking.include_thoughts is not None:
        fields["thinking_summaries"] = "auto" if thinking.include_thoughts else "none"
    return fields


def interactions_thinking_for_setting(
    model: str, value: Thinking, include_thoughts: bool | None, *, scope: str
) -> tuple[GeminiThinking, tuple[WarningEvent, ...]]:
    """The shared knob on the Interactions API, which takes levels only: Gemini 3 as on
    `generateContent` (`thinking_for_setting`); any other model (Gemini 2.5, or a name that
    does not tell its generation) gets no level: `True` and the levels keep the model's
    default thinking (a level with `thinking_clamped`), `False` turns thought summaries off
    with `thinking_not_disabled` (no budget of 0 can be sent)."""
    version = gemini_version(model)
    if version is not None and version[0] >= 3:
        return thinking_for_setting(model, value, include_thoughts, scope=scope)
    warnings: list[WarningEvent] = []
    if value is False:
        include_thoughts = False
        warnings.append(_not_disabled(model, "its default level", scope))
    else:
        if value is not True:
            warnings.append(
                WarningEvent(
                    code="thinking_clamped",
                    message=(
                        f"{model} takes no thinking level on the Interactions API; it thinks "
                        f"at its default instead of {value!r}"
                    ),
                    scope=scope,
                )
            )
        if include_thoughts is None:
            include_thoughts = True
    return GeminiThinking(include_thoughts=include_thoughts), tuple(warnings)


_MIB = 1024 * 1024
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
"""Images both platforms take (Gemini API image understanding guide; Vertex AI model pages)."""
_DOCUMENT_TYPES: Mapping[str, frozenset[str]] = {
    "gemini": frozenset(
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
    ),
    "vertex": frozenset({"application/pdf", "text/plain"}),
}
"""Documents per scope: PDFs and text files on the Gemini API (its document understanding
guide), PDFs and plain text on Vertex AI (the Gemini 3 model pages)."""
_RESULT_TYPES = frozenset(
    {"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}
)
"""What a Gemini 3 function response may carry (function calling guide, "Multimodal function
responses")."""
_DOCUMENT_BYTES = 50 * _MIB
"""Inline documents: 50 MB on both (PDFs; Vertex AI: documents through the API)."""
_IMAGE_BYTES: Mapping[str, int] = {"vertex": 7 * _MIB}
"""Inline images: 7 MB on Vertex AI; the Gemini API bounds only the whole request (100 MB of
base64, so 50 MB of bytes is the profile's bound for any part)."""


def model_profile(model: str, scope: str) -> ModelProfile:
    """What a Gemini model takes besides text, read by the agent before it asks.

    Native structured output (`response_json_schema`) only from Gemini 3, which combines it
    with thinking and function calling (its developer guide); Gemini 2.5 refuses a JSON
    response type together with function declarations, so runs there use an output tool.
    Images and documents by bytes or URL (file data: Files API, Cloud Storage or HTTPS URLs),
    up to 50 MB each (`media_problem` has the finer limits); in tool results on Gemini 3
    only (function response parts), which 2.5 refuses. Thinking from Gemini 2.5 on (and the
    2.0 "thinking" experiments); 2.0 and 1.5 have none.
    """
    version = gemini_version(model)
    gemini_3 = version is not None and version[0] >= 3
    reasoning = version is None or version[:2] >= (2, 5) or "thinking" in version[2]
    media = MediaSupport(
        IMAGE_TYPES | _DOCUMENT_TYPES.get(scope, _DOCUMENT_TYPES["vertex"]),
        urls=True,
        max_bytes=_DOCUMENT_BYTES,
        in_tool_results=gemini_3,
    )
    return ModelProfile(native_output=gemini_3, media=media, reasoning=reasoning)


def media_type(part: Image | Document) -> str | None:
    """A part's media type: given, or guessed from its URL."""
    if part.media_type is not None or part.url is None:
        return part.media_type
    return mimetypes.guess_type(part.url)[0]


def media_problem(part: Image | Document, *, scope: str, in_result: bool) -> str | None:
    """What the profile cannot say about `part`: the inline limit of its kind on this scope,
    the type a URL names, and the narrower rules of a function response (fewer types, a
    known type, no URL on the Gemini API)."""
    kind = media_type(part)
    allowed = (
        _RESULT_TYPES if in_result else IMAGE_TYPES | _DOCUMENT_TYPES.get(scope, _RESULT_TYPES)
    )
    platform = "Vertex AI" if scope == "vertex" else "the Gemini API"
    where = "a Gemini function response" if in_result else platform
    if kind is None and in_result:
        return f"{where} needs the media type of the {part.kind} at {part.url!r}"
    if kind is not None and kind not in allowed:
        return f"{where} takes no {part.kind} of type {kind!r} ({', '.join(sorted(allowed))})"
    if in_result and part.url is not None and scope == "gemini":
        return f"the Gemini API takes no {part.kind} by URL in a function response"
    limit = _IMAGE_BYTES.get(scope) if part.kind == "image" else _DOCUMENT_BYTES
    size = len(part.data) if part.data is not None else 0
    if limit is not None and size > limit:
        return f"the {part.kind} has {size} bytes, over the limit of {limit} on {platform}"
    return None


def check_missing_signature(policy: str) -> None:
    if policy not in _MISSING:
        raise ConfigurationError(
            f"missing_signature must be 'skip_validator' or 'send', got {policy!r}"
        )


def check_replay_thoughts(policy: str) -> None:
    if policy not in _REPLAY:
        raise ConfigurationError(f"replay_thoughts must be 'signed' or 'all', got {policy!r}")


def encode_signature(raw: bytes) -> str:
    """A thought signature as stored in the shared schema: standard base64 of its bytes."""
    return base64.b64encode(raw).decode("ascii")


_URLSAFE = str.maketrans("-_", "+/")


def decode_signature(signature: str) -> bytes:
    """The bytes of a stored thought signature, from standard or URL-safe base64 (padding
    optional). Raises `ValueError` when it is not base64 at all."""
    text = signature.translate(_URLSAFE)
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"a Gemini thought signature must be base64: {exc}") from None


SIGNATURE_REFUSALS = (
    "Corrupted thought signature.",
    "Invalid thought signature.",
    "Thought signature is not valid.",
)
"""How Gemini refuses a thought signature it cannot read: the Gemini API's two texts
(google-gemini/gemini-cli#13467; from Gemini 3.7, lbjlaq/Antigravity-Manager#3342) and Vertex
AI's (`Unable to submit request because Thought signature is not valid.`,
RooCodeInc/Roo-Code#11716): a signature from another key, project, route or model, or one
changed on the way."""


SIGNATURE_ERROR = "invalid_thought_signature"
"""`ProviderError.error_type` of a refused thought signature, whichever text Gemini used."""


def error_type(message: str, status: str | None) -> str | None:
    """A Gemini error's `ProviderError.error_type`: `SIGNATURE_ERROR` when the message is one
    of `SIGNATURE_REFUSALS`, else the status string (`INVALID_ARGUMENT`...)."""
    if any(text in message for text in SIGNATURE_REFUSALS):
        return SIGNATURE_ERROR
    return status


def generated_call_id(response_id: str | None, index: int) -> str:
    """An id for a function call the service sent without one: derived from the response id
    and the part's position, so the streamed and the non-streamed reading agree."""
    if response_id:
        digest = hashlib.sha256(f"{response_id}:{index}".encode()).hexdigest()[:24]
        return f"gemini_call_{digest}"
    return f"gemini_call_{uuid.uuid4().hex[:24]}"


_FINISH: Mapping[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MODEL_ARMOR": "content_filter",
}


def finish_reason(raw: str | None, *, tool_calls: bool) -> FinishReason | None:
    """The normalised finish reason: `STOP` is `"stop"`, or `"tool_call"` when the message
    calls tools; `MAX_TOKENS` `"length"`; the safety family `"content_filter"`; anything else
    (`MALFORMED_FUNCTION_CALL`, `OTHER`, ...) `"error"`. None when the response has none (and
    for `CONTINUATION`, which the SDK resolves itself)."""
    if raw is None or raw == "CONTINUATION":
        return None
    normalised = _FINISH.get(raw, "error")
    if normalised == "stop" and tool_calls:
        return "tool_call"
    return normalised


_INTERACTION_FINISH: Mapping[str, FinishReason] = {
    "completed": "stop",
    "requires_action": "tool_call",
    "incomplete": "length",
    "budget_exceeded": "length",
    "failed": "error",
    "cancelled": "error",
}


def interaction_finish_reason(status: str | None, *, tool_calls: bool) -> FinishReason | None:
    """An interaction's status as a finish reason: `completed` is `"stop"` (`"tool_call"`
    when the message calls tools), `requires_action` `"tool_call"`, `incomplete` and
    `budget_exceeded` `"length"`, `failed` and `cancelled` `"error"`; None for a status that
    is not final (`in_progress`, `requires_continuation`...)."""
    normalised = _INTERACTION_FINISH.get(status or "")
    if normalised == "stop" and tool_calls:
        return "tool_call"
    return normalised
