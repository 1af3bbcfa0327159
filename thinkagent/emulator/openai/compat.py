"""The reasoning dialects of OpenAI-compatible hosts on Chat Completions: what turns each one's
reasoning on, where it returns it, what it reads back, and what it refuses.

Each rule comes from the host's documentation or, where marked, from public reports of its
error (PROVIDER_RULES.md in the project's shared notes lists them):

* DeepSeek (api-docs.deepseek.com/guides/thinking_mode): thinking on by default
  (``thinking: {"type"}``); every assistant message with ``tool_calls`` must carry its
  ``reasoning_content`` (an empty one is accepted). Older models (``deepseek-reasoner``,
  ``deepseek-chat``) answer "Missing `reasoning_content` field in the assistant message at
  message index N..." (continuedev/continue#12691), the V4 models "The `reasoning_content` in
  the thinking mode must be passed back to the API." (crewAIInc/crewAI#5878).
* Kimi (platform.moonshot.ai): ``thinking`` must be an object, never together with
  ``reasoning_effort``; with thinking on, every assistant tool-call message carries
  ``reasoning_content``, else 400 "thinking is enabled but reasoning_content is missing in
  assistant tool call message at index N" (continuedev/continue#11600).
* Z.AI (docs.z.ai/guides/capabilities/thinking-mode), vLLM 0.16+ (``reasoning``), Mistral
  (``thinking`` content chunks), DashScope, Ollama, Groq, Cerebras, Together, Fireworks, xAI: no
  refusal for missing reasoning is documented, so none is made; their reasoning is read back.
  Mistral validates strictly: a reasoning *field* on an assistant message is a 422
  ``extra_forbidden``. GLM on Cerebras reads earlier reasoning only from the content, between
  ``<think>`` tags (a ``reasoning`` field there is not read); gpt-oss reads its ``reasoning``.
* Z.AI's GLM-5.3 always thinks and refuses ``thinking: {"type": "disabled"}``; GLM-5.2 and 5.3
  take ``reasoning_effort`` low, high, max (pydantic-ai ``models/zai.py``). Together's GLM-5.3
  returns ``reasoning_content`` (the others ``reasoning``) and cannot stop thinking
  (docs.together.ai/docs/glm-5.3-quickstart).
* xAI (docs.x.ai/docs/guides/reasoning): grok-4.3 takes ``reasoning_effort`` none to high,
  grok-4.5 low to high, grok-3-mini low or high; grok-4 refuses the parameter ("Model ... does
  not support parameter reasoningEffort.", chenyme/grok2api#814). Groq's Qwen 3 takes only
  ``none`` or ``default`` ("`reasoning_effort` must be one of `none` or `default`",
  earendil-works/pi#1745). Fireworks' ``reasoning_history`` is ``interleaved`` or ``preserved``
  (docs.fireworks.ai/fine-tuning/thinking-history).
* Gemini's OpenAI-compatible endpoint (``/v1beta/openai/chat/completions``,
  ai.google.dev/gemini-api/docs/openai): the first tool call of each step carries its thought
  signature in ``extra_content.google.thought_signature``, and a tool call of the current turn
  sent back without it is refused like the native API (continuedev/continue#8865); thoughts come
  inline, as ``<thought>...</thought>`` before the answer, only when
  ``extra_body.google.thinking_config.include_thoughts`` asks.
* OpenRouter (openrouter.ai/docs/use-cases/reasoning-tokens): ``reasoning_details`` items by
  the upstream vendor (signed ``reasoning.text`` for Anthropic, ``reasoning.text`` plus a
  ``reasoning.encrypted`` thought signature for Google, a summary plus an encrypted item for
  OpenAI); the upstream's refusal comes back as 400 "Provider returned error" with the
  upstream body in ``metadata.raw`` (massgen/MassGen#665): Claude's for a tool loop whose last
  assistant turn lost its thinking or carries a tampered signature, Gemini's for a function
  call of the current turn without its thought signature, Kimi's and DeepSeek's as above.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..encoding import as_list, as_mapping, mapping_or_none
from ..signing import Signer
from .rules import OpenAIError, OpenAIProfile, invalid_value, text_of

__all__ = [
    "DEEPSEEK_RESPONSES_MISSING",
    "GEMINI_SKIP",
    "assistant_reasoning",
    "check_gemini_calls",
    "check_replay",
    "check_string_content",
    "check_switches",
    "check_system_placement",
    "gemini_signature",
    "groq_effort",
    "router_details",
    "thinking_on",
]

_DEEPSEEK_MISSING_LEGACY = (
    "Missing `reasoning_content` field in the assistant message at message index {index}. "
    "For more information, please refer to "
    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
_DEEPSEEK_MISSING = "The `reasoning_content` in the thinking mode must be passed back to the API."
#: DeepSeek's Responses format, for a function call without its reasoning item
#: (rikkahub/rikkahub#1690).
DEEPSEEK_RESPONSES_MISSING = (
    "The `reasoning_text` in the thinking mode must be passed back to the API."
)
_KIMI_MISSING = (
    "thinking is enabled but reasoning_content is missing in assistant tool call message at "
    "index {index}"
)
# https://github.com/LionSR/TeXRA/issues/1905, https://github.com/HKUDS/nanobot/issues/3939
_KIMI_BOOL = (
    "the thinking field in the request (expected type object) is illegal, and bool is not "
    "acceptable"
)
_KIMI_BOTH = "cannot specify both 'thinking' and 'reasoning_effort'"
# Anthropic's texts (platform.claude.com/docs/en/api/errors)
_CLAUDE_FIRST = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
    "`tool_use`. When `thinking` is enabled, a final `assistant` message must start with a "
    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We "
    "recommend you include thinking blocks from previous turns. To avoid this requirement, "
    "disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
_CLAUDE_SIGNATURE = "messages.{index}.content.0: Invalid `signature` in `thinking` block"
# Gemini API texts (ai.google.dev/gemini-api/docs/thought-signatures; thClaws/thClaws#65,
# google-gemini/gemini-cli#13467)
_GEMINI_MISSING = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `{name}` , position {index}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
_GEMINI_CORRUPTED = "Corrupted thought signature."
#: The dummy signature Gemini documents for calls it did not sign.
GEMINI_SKIP = "skip_thought_signature_validator"
KIND_GEMINI_OPENAI = "gemini.openai.thought"
_GEMINI_OPENAI_SCOPE = "gemini-openai"
_GROQ_EFFORT = "`reasoning_effort` must be one of `none` or `default`"
# guess: Z.AI publishes no text for refusing `disabled` on GLM-5.3
_GLM_ALWAYS_ON = "Thinking cannot be disabled for this model."
_XAI_NO_EFFORT = "Model {name} does not support parameter reasoningEffort."
# DeepSeek takes a message's content as a string only (QwenLM/qwen-code#2320,
# tailcallhq/forgecode#2008); the column is where the emulator's compact JSON has the array
# (a guess: the real one counts the client's own serialisation).
_DEEPSEEK_SEQUENCE = (
    "Failed to deserialize the JSON body into the target type: messages[{index}]: invalid "
    "type: sequence, expected a string at line 1 column {column}"
)
# A system message after the conversation began: Mistral refuses it
# (swarmauri/swarmauri-sdk#162, after an assistant message; after the others' roles, a guess);
# the Qwen, Llama and Gemma chat templates behind vLLM raise (vllm-project/vllm#46976, in the
# body vLLM gives a template error, vllm-project/vllm#18769).
_MISTRAL_SYSTEM = "Unexpected role 'system' after role '{previous}'"
_TEMPLATE_SYSTEM = "System message must be at the beginning."
_SYSTEM_FIRST_TEMPLATES = re.compile(r"(?:^|/)(?:qwen|qwq|llama|meta-llama|gemma)")

#: Signing kinds of the proofs OpenRouter relays.
KIND_CLAUDE = "openrouter.anthropic.thinking"
KIND_GEMINI = "openrouter.google.thought"
KIND_OPENAI = "openrouter.openai.reasoning"
_ROUTER_SCOPE = "openrouter"

_FORMATS = {
    "anthropic": "anthropic-claude-v1",
    "google": "google-gemini-v1",
    "openai": "openai-responses-v1",
}
_PROVIDERS = {
    "anthropic": "Anthropic",
    "google": "Google",
    "openai": "OpenAI",
    "moonshotai": "Moonshot AI",
    "deepseek": "DeepSeek",
    "z-ai": "Z.AI",
}
_THINK_RE = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)


# --- switches ------------------------------------------------------------------------------


def groq_effort(model: OpenAIProfile, effort: Any) -> bool:
    """Whether the model is Groq's Qwen 3, whose ``reasoning_effort`` is ``none`` or
    ``default`` only (any other value is refused with Groq's text)."""
    if model.family != "groq" or not model.name.lower().startswith("qwen/qwen3"):
        return False
    if effort not in (None, "none", "default"):
        raise _plain_error(_GROQ_EFFORT)
    return True


def check_switches(model: OpenAIProfile, body: Mapping[str, Any]) -> None:
    """Refuse the reasoning fields a host rejects: Kimi's switch rules (as documented),
    GLM-5.3's refusal to stop thinking, grok-4's refusal of ``reasoning_effort``, Fireworks'
    ``reasoning_history`` values, and Mistral's strict validation of messages, which has no
    reasoning field (its reasoning goes back as ``thinking`` chunks): 422 ``extra_forbidden``
    (co-l/openfox#220, OpenMinis/OpenMinis#87)."""
    name = model.name.lower()
    switch = as_mapping(body.get("thinking")).get("type")
    if model.family == "zai" and name.startswith("glm-5.3") and switch == "disabled":
        raise _plain_error(_GLM_ALWAYS_ON)
    if model.family == "xai" and name in ("grok-4", "grok-4-0709") and "reasoning_effort" in body:
        error = OpenAIError(400, _XAI_NO_EFFORT.format(name=model.name))
        error.body = {"code": "invalid-argument", "error": _XAI_NO_EFFORT.format(name=model.name)}
        raise error
    history = body.get("reasoning_history")
    if model.family == "fireworks" and history not in (None, "interleaved", "preserved"):
        raise invalid_value(history, ("interleaved", "preserved"), "reasoning_history")
    if model.family == "mistral":
        for index, message in enumerate(as_list(body.get("messages"))):
            entry = as_mapping(message)
            for key in ("reasoning_content", "reasoning", "reasoning_details"):
                if entry.get("role") == "assistant" and key in entry:
                    raise _extra_forbidden(
                        ("body", "messages", index, "assistant", key), entry[key]
                    )
    if model.family != "kimi" or "thinking" not in body:
        return
    if isinstance(body["thinking"], bool):
        raise _plain_error(_KIMI_BOOL)
    if body.get("reasoning_effort") is not None:
        raise _plain_error(_KIMI_BOTH)


def check_string_content(model: OpenAIProfile, body: Mapping[str, Any]) -> None:
    """DeepSeek's refusal of a message whose content is a list of parts."""
    if model.family != "deepseek":
        return
    for index, message in enumerate(as_list(body.get("messages"))):
        if isinstance(as_mapping(message).get("content"), list):
            compact = json.dumps(body, separators=(",", ":"))
            column = compact.find('"content":[') + len('"content":[')
            raise OpenAIError(
                400,
                _DEEPSEEK_SEQUENCE.format(index=index, column=column),
                code="invalid_request_error",
            )


def check_system_placement(model: OpenAIProfile, messages: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a system message after the first non-system one where the host does: Mistral,
    and vLLM serving a model whose chat template wants it first. OpenAI reads one wherever it
    stands; the other hosts take it (some move it to the front, or keep only the last)."""
    strict_template = model.family == "vllm" and _SYSTEM_FIRST_TEMPLATES.search(model.name.lower())
    if model.family != "mistral" and not strict_template:
        return
    previous: object = None
    for message in messages:
        role = message.get("role")
        if role == "system" and previous not in (None, "system"):
            if model.family == "mistral":
                error = OpenAIError(400, _MISTRAL_SYSTEM.format(previous=previous))
                error.body = {
                    "object": "error",
                    "message": _MISTRAL_SYSTEM.format(previous=previous),
                    "type": "invalid_request_error",
                    "param": None,
                    "code": None,
                }
            else:
                error = OpenAIError(400, _TEMPLATE_SYSTEM)
                error.body = {
                    "object": "error",
                    "message": _TEMPLATE_SYSTEM,
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            raise error
        previous = role


def thinking_on(model: OpenAIProfile, body: Mapping[str, Any], effort: str | None) -> bool:
    """Whether a compatible host thinks for this request (its own switches)."""
    if not model.reasons or effort == "none":
        return False
    family = model.family
    switch = as_mapping(body.get("thinking")).get("type")
    if family in ("deepseek", "kimi", "zai") and switch in ("enabled", "disabled"):
        return switch == "enabled" or model.name.lower().startswith("kimi-k2-thinking")
    if family == "qwen":
        return body.get("enable_thinking") is not False
    if family == "ollama":
        return body.get("think") is not False
    if family == "vllm":
        kwargs = as_mapping(body.get("chat_template_kwargs"))
        return kwargs.get("enable_thinking") is not False and kwargs.get("thinking") is not False
    if family == "mistral":
        return model.name.lower().startswith("magistral") or effort not in (None, "none")
    if family == "groq" and model.name.lower().startswith("qwen/qwen3"):
        return effort != "none"
    if family == "together" and model.name.lower().startswith("zai-org/glm-5.3"):
        return True  # cannot be turned off (its quickstart)
    if family in ("router", "together"):
        reasoning = as_mapping(body.get("reasoning"))
        if reasoning.get("enabled") is False or reasoning.get("effort") == "none":
            return False
        if family == "router" and model.vendor == "anthropic":
            return bool(reasoning) and (
                reasoning.get("enabled") is True
                or reasoning.get("effort") is not None
                or reasoning.get("max_tokens") is not None
            )
    return True


# --- reading -------------------------------------------------------------------------------


def assistant_reasoning(message: Mapping[str, Any], *, fields: bool = True) -> tuple[str, str]:
    """``(reasoning text, content text)`` of an assistant message, whatever shape the
    reasoning came back in: a ``reasoning_content`` or ``reasoning`` field (unless ``fields``
    is False: the host reads none), ``reasoning_details`` items, ``thinking`` content chunks,
    or inline ``<think>`` tags."""
    thinking: list[str] = []
    for key in ("reasoning_content", "reasoning") if fields else ():
        value = message.get(key)
        if isinstance(value, str) and value:
            thinking.append(value)
            break
    if not thinking:
        for item in as_list(message.get("reasoning_details")):
            detail = as_mapping(item)
            text = detail.get("text", detail.get("summary"))
            if isinstance(text, str) and text:
                thinking.append(text)
    content = message.get("content")
    texts: list[str] = []
    if isinstance(content, list):
        for raw in cast("list[Any]", content):
            chunk = mapping_or_none(raw)
            if chunk is not None and chunk.get("type") == "thinking":
                thinking.append(text_of(chunk.get("thinking")))
            else:
                texts.append(text_of([raw]))
        return "\n".join(thinking), "\n".join(t for t in texts if t)
    text = text_of(content)
    tagged = _THINK_RE.match(text)
    if tagged is not None:
        thinking.append(tagged.group(1).strip())
        text = text[tagged.end() :]
    return "\n".join(thinking), text


def _has_reasoning_field(message: Mapping[str, Any]) -> bool:
    return any(key in message for key in ("reasoning_content", "reasoning", "reasoning_details"))


# --- replay rules ----------------------------------------------------------------------------


def check_replay(
    model: OpenAIProfile, messages: Sequence[Mapping[str, Any]], signer: Signer
) -> None:
    """Refuse a history the host refuses while thinking is on (the caller checks that)."""
    family, vendor = model.family, model.vendor
    if family == "deepseek" or (family == "router" and vendor == "deepseek"):
        index = _first_call_without(messages, "reasoning_content")
        if index is not None:
            legacy = model.name.lower() in ("deepseek-reasoner", "deepseek-chat")
            text = _DEEPSEEK_MISSING_LEGACY.format(index=index) if legacy else _DEEPSEEK_MISSING
            error = OpenAIError(400, text, code="invalid_request_error")
            raise _routed(error, model) if family == "router" else error
    elif family == "kimi" or (family == "router" and vendor == "moonshotai"):
        index = _first_call_without(messages, "reasoning_content")
        if index is not None:
            error = _plain_error(_KIMI_MISSING.format(index=index))
            raise _routed(error, model) if family == "router" else error
    elif family == "router" and vendor == "anthropic":
        _check_claude(messages, signer, model)
    elif family == "router" and vendor == "google":
        _check_gemini(messages, signer, model)


def _first_call_without(messages: Sequence[Mapping[str, Any]], field: str) -> int | None:
    """The index of the first assistant tool-call message without any reasoning field (the
    router maps ``reasoning`` and ``reasoning_details`` onto the upstream's own field)."""
    for index, message in enumerate(messages):
        if message.get("role") != "assistant" or not as_list(message.get("tool_calls")):
            continue
        if field not in message and not _has_reasoning_field(message):
            return index
    return None


def _upstream_index(messages: Sequence[Mapping[str, Any]], position: int) -> int:
    """Where the message at ``position`` lands in an Anthropic or Gemini request: system
    messages leave, a run of tool messages becomes one user message."""
    index = -1
    previous: object = None
    for message in messages[: position + 1]:
        role = message.get("role")
        if role in ("system", "developer"):
            continue
        if not (role == "tool" and previous == "tool"):
            index += 1
        previous = role
    return index


def _check_claude(
    messages: Sequence[Mapping[str, Any]], signer: Signer, model: OpenAIProfile
) -> None:
    """Claude behind the router, with thinking on (manual budget): every relayed signature
    must verify, and a tool loop's last assistant message must start with its thinking."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for item in as_list(message.get("reasoning_details")):
            detail = as_mapping(item)
            signature = detail.get("signature")
            text = str(detail.get("text") or "")
            if (
                detail.get("type") == "reasoning.text"
                and isinstance(signature, str)
                and not signer.verify_b64(_ROUTER_SCOPE, KIND_CLAUDE, signature, text)
            ):
                text = _CLAUDE_SIGNATURE.format(index=_upstream_index(messages, index))
                raise _routed(_anthropic_error(text), model)
    if last < 0 or last == len(messages) - 1:
        return
    final = messages[last]
    continuing = as_list(final.get("tool_calls")) and messages[last + 1].get("role") == "tool"
    thinking = [
        d
        for d in (as_mapping(i) for i in as_list(final.get("reasoning_details")))
        if d.get("type") in ("reasoning.text", "reasoning.encrypted")
    ]
    if continuing and not thinking:
        text = _CLAUDE_FIRST.format(index=_upstream_index(messages, last))
        raise _routed(_anthropic_error(text), model)


def _check_gemini(
    messages: Sequence[Mapping[str, Any]], signer: Signer, model: OpenAIProfile
) -> None:
    """Gemini 3 behind the router: the function calls of the current turn (after the last
    user text) carry their thought signature, relayed as a ``reasoning.encrypted`` item."""
    start = max(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and text_of(m.get("content"))
        ),
        default=-1,
    )
    for index in range(start + 1, len(messages)):
        message = messages[index]
        calls = [as_mapping(c) for c in as_list(message.get("tool_calls"))]
        if message.get("role") != "assistant" or not calls:
            continue
        signatures = [
            d
            for d in (as_mapping(i) for i in as_list(message.get("reasoning_details")))
            if d.get("type") == "reasoning.encrypted"
        ]
        name = str(as_mapping(calls[0].get("function")).get("name"))
        if not signatures:
            text = _GEMINI_MISSING.format(name=name, index=_upstream_index(messages, index))
            raise _routed(_google_error(text), model)
        for detail in signatures:
            data = detail.get("data")
            call_id = str(detail.get("id") or "")
            if not isinstance(data, str) or not signer.verify_b64(
                _ROUTER_SCOPE, KIND_GEMINI, data, call_id
            ):
                raise _routed(_google_error(_GEMINI_CORRUPTED), model)


def gemini_signature(signer: Signer, call_id: str) -> str:
    """The thought signature Gemini's OpenAI-compatible endpoint puts on a tool call."""
    return signer.seal_b64(_GEMINI_OPENAI_SCOPE, KIND_GEMINI_OPENAI, call_id, size=96)


def check_gemini_calls(messages: Sequence[Mapping[str, Any]], signer: Signer) -> None:
    """Gemini 3 on its OpenAI-compatible endpoint: the first tool call of each assistant step
    of the current turn (after the last user text) carries its thought signature in
    ``extra_content.google.thought_signature`` (the documented dummy passes), and it verifies."""
    start = max(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "user" and text_of(m.get("content"))
        ),
        default=-1,
    )
    for index in range(start + 1, len(messages)):
        message = messages[index]
        calls = [as_mapping(c) for c in as_list(message.get("tool_calls"))]
        if message.get("role") != "assistant" or not calls:
            continue
        first = calls[0]
        name = str(as_mapping(first.get("function")).get("name"))
        google = as_mapping(as_mapping(first.get("extra_content")).get("google"))
        signature = google.get("thought_signature")
        if not isinstance(signature, str) or not signature:
            text = _GEMINI_MISSING.format(name=name, index=_upstream_index(messages, index))
            raise _google_error(text)
        if signature != GEMINI_SKIP and not signer.verify_b64(
            _GEMINI_OPENAI_SCOPE, KIND_GEMINI_OPENAI, signature, str(first.get("id") or "")
        ):
            raise _google_error(_GEMINI_CORRUPTED)


# --- rendering -------------------------------------------------------------------------------


def router_details(
    model: OpenAIProfile, thinking: str, signer: Signer, first_call: str | None, seed: str
) -> list[dict[str, Any]]:
    """The ``reasoning_details`` the router returns for the upstream vendor's reasoning."""
    vendor = model.vendor or ""
    fmt = _FORMATS.get(vendor, "unknown")
    if vendor == "anthropic":
        signature = signer.seal_b64(_ROUTER_SCOPE, KIND_CLAUDE, thinking, size=256)
        return [
            {
                "type": "reasoning.text",
                "text": thinking,
                "signature": signature,
                "format": fmt,
                "index": 0,
            }
        ]
    if vendor == "google":
        details: list[dict[str, Any]] = [
            {"type": "reasoning.text", "text": thinking, "format": fmt, "index": 0}
        ]
        if first_call is not None:
            data = signer.seal_b64(_ROUTER_SCOPE, KIND_GEMINI, first_call, size=96)
            details.append(
                {
                    "type": "reasoning.encrypted",
                    "data": data,
                    "id": first_call,
                    "format": fmt,
                    "index": 0,
                }
            )
        return details
    if vendor == "openai":
        data = signer.seal_b64(_ROUTER_SCOPE, KIND_OPENAI, thinking, size=192)
        return [
            {"type": "reasoning.summary", "summary": thinking, "format": fmt, "index": 0},
            {"type": "reasoning.encrypted", "data": data, "id": seed, "format": fmt, "index": 0},
        ]
    return [{"type": "reasoning.text", "text": thinking, "format": fmt, "index": 0}]


# --- error bodies ----------------------------------------------------------------------------


def _plain_error(message: str) -> OpenAIError:
    """A 400 in the ``{"error": {"message", "type"}}`` shape Kimi answers with."""
    error = OpenAIError(400, message)
    error.body = {"error": {"message": message, "type": "invalid_request_error"}}
    return error


def _extra_forbidden(location: tuple[Any, ...], value: Any) -> OpenAIError:
    """Mistral's 422 for a field its request schema does not have."""
    error = OpenAIError(422, "Extra inputs are not permitted")
    error.body = {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": list(location),
                "msg": "Extra inputs are not permitted",
                "input": value,
            }
        ]
    }
    return error


def _anthropic_error(message: str) -> OpenAIError:
    error = OpenAIError(400, message)
    error.body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
    }
    return error


def _google_error(message: str) -> OpenAIError:
    error = OpenAIError(400, message)
    error.body = {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
    return error


def _routed(upstream: OpenAIError, model: OpenAIProfile) -> OpenAIError:
    """The router's 400 for an upstream refusal: the upstream body in ``metadata.raw``."""
    error = OpenAIError(400, "Provider returned error")
    error.body = {
        "error": {
            "message": "Provider returned error",
            "code": 400,
            "metadata": {
                "raw": json.dumps(upstream.body),
                "provider_name": _PROVIDERS.get(model.vendor or "", model.vendor or "unknown"),
            },
        },
        "user_id": "user_emulator",
    }
    return error
