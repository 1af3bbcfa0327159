"""The OpenAI family: :mod:`.rules` (credentials and error bodies, OpenAI's and Azure's;
model profiles, reasoning dialects and the dialect knob; effort, tool and media parsing),
:mod:`.compat` (the compatible hosts' switches, reasoning shapes and refusals) and the two
wires that serve it, :mod:`.chat` (Chat Completions, also Azure and compatible endpoints) and
:mod:`.responses` (Responses: OpenAI's, Azure's, DeepSeek's and xAI's)."""

from .chat import OpenAIChatAPI
from .responses import OpenAIResponsesAPI

__all__ = ["OpenAIChatAPI", "OpenAIResponsesAPI"]
