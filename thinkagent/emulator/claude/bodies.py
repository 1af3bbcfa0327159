"""The Anthropic Messages and Bedrock Converse request bodies, checked as the services check
them before reading the conversation (see :mod:`thinkagent.emulator.bodies`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..bodies import Field, field, fits, number_text
from ..framework import WireError
from .profiles import ClaudeProfile, claude_profile

__all__ = ["check_anthropic", "check_bedrock"]


# The fields of `MessageCreateParams` (anthropic SDK) the emulator reads; a field not listed is
# left to the rules that read it. The ranges are the documented ones
# (https://docs.claude.com/en/api/messages): temperature and top_p 0 to 1, top_k from 0.
_ANTHROPIC: Mapping[str, Field] = {
    "model": field("string"),
    "max_tokens": field("integer", minimum=1),
    "messages": field("array"),
    "stream": field("boolean"),
    "system": field("string", "array"),
    "temperature": field("number", minimum=0, maximum=1),
    "top_p": field("number", minimum=0, maximum=1),
    "top_k": field("integer", minimum=0),
    "stop_sequences": field("array"),
    "tools": field("array"),
    "tool_choice": field("object"),
    "thinking": field("object"),
    "metadata": field("object"),
    "output_config": field("object"),
}

# The Anthropic API's words are pydantic's (`max_tokens: Field required`, `messages: Input
# should be a valid list`): the same words for the other types and bounds.
_PYDANTIC_KIND = {
    "boolean": "a valid boolean",
    "integer": "a valid integer",
    "number": "a valid number",
    "string": "a valid string",
    "array": "a valid list",
    "object": "a valid dictionary",
}


def check_anthropic(body: Mapping[str, Any]) -> None:
    """Refuse what the Messages API refuses of ``body``'s top-level fields (400
    ``invalid_request_error``), including a ``max_tokens`` above the model's output limit, in
    the API's words: ``max_tokens: 1000000 > 64000, which is the maximum allowed number of
    output tokens for claude-sonnet-4-20250514``
    (https://github.com/OpenHands/OpenHands/issues/11090)."""
    for name, spec in _ANTHROPIC.items():
        if name not in body:
            continue
        value = body[name]
        if value is None or not fits(value, spec.kinds):
            if name in ("messages", "model", "max_tokens") and value is None:
                continue  # "Field required": the rules say it, with the others
            # pydantic names the first type it tries; a list for `system` is the second
            raise _anthropic(f"{name}: Input should be {_PYDANTIC_KIND[spec.kinds[0]]}")
        if spec.minimum is not None and value < spec.minimum:
            bound = number_text(spec.minimum)
            raise _anthropic(f"{name}: Input should be greater than or equal to {bound}")
        if spec.maximum is not None and value > spec.maximum:
            bound = number_text(spec.maximum)
            raise _anthropic(f"{name}: Input should be less than or equal to {bound}")
    model, max_tokens = body.get("model"), body.get("max_tokens")
    if isinstance(model, str) and isinstance(max_tokens, int):
        profile = claude_profile(model)
        limit = None if profile is None else _claude_output_limit(profile)
        if limit is not None and max_tokens > limit:
            raise _anthropic(
                f"max_tokens: {max_tokens} > {limit}, which is the maximum allowed number of "
                f"output tokens for {model}"
            )


def _anthropic(message: str) -> WireError:
    return WireError(400, message, type="invalid_request_error")


def _claude_output_limit(model: ClaudeProfile) -> int:
    """The most output tokens ``model`` takes, from each model's page
    (https://platform.claude.com/docs/en/about-claude/models/overview): 128K on Opus and Sonnet
    4.6 and later and on every model this table does not name; 64K on Haiku 4.5, Sonnet 3.7 to
    4.5 and Opus 4.5; 32K on Opus 4 and 4.1; 8K on Sonnet 3.5 and Haiku 3.5; 4K on the
    Claude 3 Opus and Haiku."""
    family, version = model.family, model.version
    if family == "haiku":
        if version < (3, 5):
            return 4096
        return 8192 if version < (4, 0) else 64000 if version < (5, 0) else 128000
    if family == "sonnet":
        if version < (3, 7):
            return 8192
        return 64000 if version < (4, 6) else 128000
    if family == "opus":
        if version < (4, 0):
            return 4096
        if version < (4, 5):
            return 32000
        return 64000 if version < (4, 6) else 128000
    return 128000


# `ConverseRequest` and `ConverseStreamRequest`
# (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html);
# `modelId` travels in the path.
_BEDROCK_FIELDS = frozenset(
    {
        "messages",
        "system",
        "inferenceConfig",
        "toolConfig",
        "guardrailConfig",
        "projectIdentifier",
        "additionalModelRequestFields",
        "promptVariables",
        "additionalModelResponseFieldPaths",
        "requestMetadata",
        "performanceConfig",
        "serviceTier",
        "outputConfig",
    }
)


def check_bedrock(body: Mapping[str, Any]) -> None:
    """Refuse a top-level field Converse does not have: 400 ``ValidationException``."""
    for key in body:
        if key not in _BEDROCK_FIELDS:
            # guess: AWS documents no text for an unknown member
            raise WireError(400, f"The request body has an unknown field: {key}.")
