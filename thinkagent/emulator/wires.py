"""The wire APIs the emulator serves. Each family of rules is a folder (``claude/``,
``gemini/``, ``openai/``) holding its ``rules`` module and the wire modules that serve
it; to add a wire API, write a :class:`~thinkagent.emulator.framework.WireAPI` subclass
in its family's folder and list the class in :data:`WIRE_APIS` (see
``docs/emulator.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .claude import AnthropicAPI, BedrockAPI
from .gemini import GeminiAPI, GeminiInteractionsAPI, VertexAPI
from .openai import OpenAIChatAPI, OpenAIResponsesAPI

if TYPE_CHECKING:
    from .framework import WireAPI

__all__ = ["WIRE_APIS"]

#: Every wire API class, in routing order.
WIRE_APIS: tuple[type[WireAPI], ...] = (
    AnthropicAPI,
    BedrockAPI,
    GeminiAPI,
    VertexAPI,
    GeminiInteractionsAPI,
    OpenAIChatAPI,
    OpenAIResponsesAPI,
)
