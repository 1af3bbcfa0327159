"""The Gemini family: :mod:`.rules` (model profiles, validation, replay rules, thought
signatures) and :mod:`.generate`, the two wires that serve Gemini with them (the Gemini
API, scope ``gemini``, and Vertex AI, scope ``vertex``)."""

from .generate import GeminiAPI, VertexAPI

__all__ = ["GeminiAPI", "VertexAPI"]
