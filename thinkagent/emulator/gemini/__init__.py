"""The Gemini family: :mod:`.rules` (model profiles, validation, replay rules, thought
signatures) and :mod:`.generate`, the two wires that serve Gemini with them (the Gemini
API, scope ``gemini``, and Vertex AI, scope ``vertex``), and :mod:`.interactions`, the
Gemini API's Interactions API (scope ``gemini-interactions``)."""

from .generate import GeminiAPI, VertexAPI
from .interactions import GeminiInteractionsAPI

__all__ = ["GeminiAPI", "GeminiInteractionsAPI", "VertexAPI"]
