"""The wire APIs the emulator serves. To add one, write a module here with a
:class:`~thinkagent.emulator.framework.WireAPI` subclass and list the class in
:data:`WIRE_APIS` (see ``docs/emulator.md``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .anthropic import AnthropicAPI
from .bedrock import BedrockAPI
from .gemini import GeminiAPI, VertexAPI
from .openai_chat import OpenAIChatAPI
from .openai_responses import OpenAIResponsesAPI

if TYPE_CHECKING:
    from ..framework import WireAPI

__all__ = ["WIRE_APIS"]

#: Every wire API class, in routing order.
WIRE_APIS: tuple[type[WireAPI], ...] = (
    AnthropicAPI,
    BedrockAPI,
    GeminiAPI,
    VertexAPI,
    OpenAIChatAPI,
    OpenAIResponsesAPI,
)
