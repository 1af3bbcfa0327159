"""The model families Bedrock Converse serves besides Claude, each with its own reasoning shape
and its own refusals (the project's provider rules, Bedrock section, and the reports they cite).

* DeepSeek (``deepseek.r1-v1:0``, ``deepseek.v3-...``): reasoning as ``reasoningText`` without a
  signature; any reasoning sent back is refused ("User messages cannot contain reasoning
  content. Please remove the reasoning content and try again."); R1 takes no tools ("This model
  doesn't support tool use.", or "... in streaming mode." on ConverseStream).
* OpenAI gpt-oss (``openai.gpt-oss-120b-1:0``): ``reasoningText`` without a signature, effort in
  ``additionalModelRequestFields.reasoning_effort``; a replayed signature is refused.
* OpenAI's GPT-5 family and xAI: reasoning only as opaque ``redactedContent``, readable only by
  the family that wrote it (a foreign or damaged payload: an opaque 500); ``reasoningText`` sent
  back is refused.
* Kimi K2 Thinking (``moonshot.kimi-k2-thinking``): the reasoning inline in the text, as
  ``<think>...</think>``; what comes back is not checked (its rule is not documented).
* Kimi K3 (``moonshotai.kimi-k3``): ``redactedContent`` bound to the region that made it.
* Qwen (``qwen.qwen3-...``): ``reasoningText`` without a signature; its level in
  ``additionalModelRequestFields.reasoning_config`` (``low`` or ``high``); replay not checked.
* OpenAI's GPT-5 models take their level nested, ``reasoning: {"effort": ...}``, gpt-oss a flat
  ``reasoning_effort``; Converse refuses the effort ``none``.
* Amazon Nova 2 (``amazon.nova-2-lite-v1:0``): reasons only with ``reasoningConfig: {"type":
  "enabled", "maxReasoningEffort": "low"|"medium"|"high"}``
  (docs.aws.amazon.com/nova/latest/nova2-userguide/extended-thinking.html); its reasoning comes
  back as ``reasoningText`` whose text is ``[REDACTED]``; replay not checked.
* Others (MiniMax, Mistral...): ``reasoningText`` without a signature; replay not checked.

The region is the one the request was signed for (its ``Authorization`` credential scope).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..encoding import as_list, as_mapping, b64decode, mapping_or_none
from ..framework import WireError
from ..model import Call, CallResult, Conversation, Media, Reply, Settings, ToolSpec, Turn
from ..signing import Signer
from .binding import Record, open_proof, seal_proof

__all__ = ["Family", "family_of", "parse_family_request", "render_family"]

_REGION_PREFIX = re.compile(r"^(?:us|eu|apac|ap|jp|au|ca|global|us-gov)\.")
_PROVIDERS = frozenset(
    {
        "deepseek",
        "openai",
        "moonshot",
        "moonshotai",
        "qwen",
        "xai",
        "mistral",
        "minimax",
        "zai",
        "amazon",
    }
)

_NO_REASONING_BACK = (
    "User messages cannot contain reasoning content. Please remove the reasoning content and try "
    "again."
)
_NO_TOOLS = "This model doesn't support tool use."
_NO_TOOLS_STREAMING = "This model doesn't support tool use in streaming mode."
_NO_SIGNATURE = (
    "This model doesn't support the reasoningContent.reasoningText.signature field. Remove "
    "reasoningContent.reasoningText.signature and try again."
)
_NO_TEXT = (
    "This model doesn't support the reasoningContent.reasoningText.text field for assistant "
    "messages. Remove reasoningContent.reasoningText.text and try again."
)
_OTHER_REGION = (
    'The model returned the following errors: {"error":{"code":"validation_error","message":'
    '"Encrypted content cannot be used in a different region from the one that created it.",'
    '"param":null,"type":"invalid_request_error"}}'
)

# guess: the texts of these refusals are not published; they follow Converse's
# ValidationException wording for a bad field value.
_BAD_LEVEL = "The value at additionalModelRequestFields.{field} is invalid: {value!r}."
_NO_NONE = "The reasoning effort 'none' is not supported on Converse for this model."

Shape = Literal["text", "redacted", "inline"]


@dataclass(frozen=True)
class Family:
    """A non-Claude model family: ``name``, the ``shape`` of its reasoning, and its rules."""

    name: str
    shape: Shape
    tools: bool = True
    refuses_reasoning: bool = False
    refuses_signature: bool = False
    region_bound: bool = False
    level: Literal["flat", "nested", "qwen", "nova"] = "flat"

    @property
    def scope(self) -> str:
        return f"bedrock.{self.name}"


def family_of(model_id: str) -> Family | None:
    """The family behind a Converse model id, or None when the id names no model served."""
    model = model_id.rsplit("/", 1)[-1] if model_id.startswith("arn:") else model_id
    model = _REGION_PREFIX.sub("", model.lower())
    provider, _, name = model.partition(".")
    if provider not in _PROVIDERS or not name:
        return None
    if provider == "deepseek":
        return Family("deepseek", "text", tools=not name.startswith("r1"), refuses_reasoning=True)
    if provider == "openai":
        if "gpt-oss" in name:
            return Family("gpt-oss", "text", refuses_signature=True)
        return Family("openai", "redacted", level="nested")
    if provider in ("moonshot", "moonshotai"):
        if "k3" in name:
            return Family("kimi-k3", "redacted", region_bound=True)
        return Family("kimi", "inline")
    if provider == "xai":
        return Family("xai", "redacted")
    if provider == "qwen":
        return Family("qwen", "text", level="qwen")
    if provider == "amazon":  # Nova 2 only: the emulator serves no other Amazon model
        return Family("nova", "text", level="nova") if name.startswith("nova-2") else None
    return Family(provider, "text")


def _text(result: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for item in as_list(result.get("content")):
        part = as_mapping(item)
        if isinstance(part.get("text"), str):
            parts.append(cast("str", part["text"]))
        elif "json" in part:
            parts.append(json.dumps(part["json"], ensure_ascii=False))
    return "\n".join(parts)


def parse_family_request(
    body: Mapping[str, Any], family: Family, *, signer: Signer, region: str, stream: bool = False
) -> tuple[Conversation, Settings]:
    """Check a Converse request (a ConverseStream one with ``stream``) against the family's
    rules and read its conversation."""
    tool_config = as_mapping(body.get("toolConfig"))
    if tool_config and not family.tools:
        raise WireError(400, _NO_TOOLS_STREAMING if stream else _NO_TOOLS)
    turns: list[Turn] = []
    for index, item in enumerate(as_list(body.get("messages"))):
        message = as_mapping(item)
        role = message.get("role")
        texts: list[str] = []
        calls: list[Call] = []
        results: list[CallResult] = []
        media: list[Media] = []
        for block in (as_mapping(b) for b in as_list(message.get("content"))):
            if "reasoningContent" in block:
                _check_reasoning(as_mapping(block["reasoningContent"]), family, signer, region)
            elif isinstance(block.get("text"), str):
                texts.append(cast("str", block["text"]))
            elif "toolUse" in block:
                use = as_mapping(block["toolUse"])
                calls.append(
                    Call(
                        str(use.get("toolUseId")),
                        str(use.get("name")),
                        as_mapping(use.get("input")),
                    )
                )
            elif "toolResult" in block:
                result = as_mapping(block["toolResult"])
                results.append(
                    CallResult(
                        str(result.get("toolUseId")), _text(result), result.get("status") == "error"
                    )
                )
            elif "image" in block:
                image = as_mapping(block["image"])
                data = b64decode(str(as_mapping(image.get("source")).get("bytes", ""))) or b""
                media.append(Media("image", f"image/{image.get('format')}", size=len(data)))
        if role not in ("user", "assistant"):
            raise WireError(400, f"The value at messages.{index}.role is invalid.")
        turns.append(
            Turn(
                role=role,
                text="\n".join(texts),
                calls=tuple(calls),
                results=tuple(results),
                media=tuple(media),
            )
        )
    if not turns or turns[0].role != "user":
        raise WireError(
            400,
            "A conversation must start with a user message. Try again with a conversation that starts with a user message.",
        )
    system = "\n".join(
        str(as_mapping(b).get("text"))
        for b in as_list(body.get("system"))
        if "text" in as_mapping(b)
    )
    tools = tuple(
        ToolSpec(
            str(spec.get("name")),
            str(spec.get("description", "")),
            as_mapping(as_mapping(spec.get("inputSchema")).get("json")),
        )
        for spec in (
            as_mapping(as_mapping(t).get("toolSpec")) for t in as_list(tool_config.get("tools"))
        )
        if spec
    )
    thinking, effort = _reasoning_level(
        family, as_mapping(body.get("additionalModelRequestFields"))
    )
    max_tokens = as_mapping(body.get("inferenceConfig")).get("maxTokens")
    settings = Settings(
        thinking=thinking,
        effort=effort,
        max_tokens=max_tokens if isinstance(max_tokens, int) else None,
    )
    return Conversation(system=system, turns=tuple(turns), tools=tools), settings


def _reasoning_level(family: Family, fields: Mapping[str, Any]) -> tuple[bool, str | None]:
    """(thinking on, the brain's effort) from the family's own field, with its refusals."""
    if family.level == "nova":
        config = mapping_or_none(fields.get("reasoningConfig"))
        if config is None or config.get("type") != "enabled":
            return False, None
        effort = config.get("maxReasoningEffort")
        if effort is not None and effort not in ("low", "medium", "high"):
            raise WireError(
                400,
                _BAD_LEVEL.format(field="reasoningConfig.maxReasoningEffort", value=effort),
            )
        return True, effort
    if family.level == "qwen":
        effort = fields.get("reasoning_config")
        if effort is not None and effort not in ("low", "high"):
            raise WireError(400, _BAD_LEVEL.format(field="reasoning_config", value=effort))
        return True, effort
    if family.level == "nested":
        effort = as_mapping(fields.get("reasoning")).get("effort")
    else:
        effort = fields.get("reasoning_effort")
    if effort == "none":
        raise WireError(400, _NO_NONE)
    return True, effort if isinstance(effort, str) else None


def _check_reasoning(
    reasoning: Mapping[str, Any], family: Family, signer: Signer, region: str
) -> None:
    """The family's refusal of reasoning sent back in a shape it does not take."""
    if family.refuses_reasoning:
        raise WireError(400, _NO_REASONING_BACK)
    text_block = mapping_or_none(reasoning.get("reasoningText"))
    if text_block is not None:
        if family.refuses_signature and "signature" in text_block:
            raise WireError(400, _NO_SIGNATURE)
        if family.shape == "redacted":
            raise WireError(400, _NO_TEXT)
        return
    data = reasoning.get("redactedContent")
    if family.shape != "redacted" or not isinstance(data, str):
        return
    bound = open_proof(
        signer, "redacted", data, None, legacy_scope=family.scope, scope=family.scope
    )
    if bound is None or bound.record is None:
        raise WireError(500, "The model encountered an unexpected error.")
    if family.region_bound and bound.record.platform != region:
        raise WireError(400, _OTHER_REGION)


def render_family(
    reply: Reply, family: Family, *, signer: Signer, region: str
) -> list[dict[str, Any]]:
    """The reply's Converse content blocks in the family's shape (tool uses without ids yet)."""
    blocks: list[dict[str, Any]] = []
    text = reply.text
    if reply.thinking is not None:
        if family.level == "nova":
            blocks.append({"reasoningContent": {"reasoningText": {"text": "[REDACTED]"}}})
        elif family.shape == "inline":
            text = f"<think>\n{reply.thinking}\n</think>\n\n{text}"
        elif family.shape == "redacted":
            record = Record(model=family.name, platform=region)
            data = seal_proof(signer, "redacted", reply.thinking, record, scope=family.scope)
            blocks.append({"reasoningContent": {"redactedContent": data}})
        else:
            blocks.append({"reasoningContent": {"reasoningText": {"text": reply.thinking}}})
    if text or not reply.tool_calls:
        blocks.append({"text": text})
    return blocks
