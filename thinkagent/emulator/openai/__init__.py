"""The OpenAI family: :mod:`.rules` (credentials and error bodies, OpenAI's and Azure's;
model profiles and reasoning dialects; effort and tool parsing) and the two wires that
serve it, :mod:`.chat` (Chat Completions, also Azure and compatible endpoints) and
:mod:`.responses` (Responses, scopes ``openai`` and ``azure``)."""

from .chat import OpenAIChatAPI
from .responses import OpenAIResponsesAPI

__all__ = ["OpenAIChatAPI", "OpenAIResponsesAPI"]
