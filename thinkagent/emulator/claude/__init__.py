"""The Claude family: :mod:`.rules` (model profiles, validation, replay rules, reply
blocks) and the two wires that serve Claude with them, :mod:`.anthropic` (the Anthropic
Messages API, scope ``anthropic``) and :mod:`.bedrock` (Bedrock Converse, scope
``bedrock``)."""

from .anthropic import AnthropicAPI
from .bedrock import BedrockAPI

__all__ = ["AnthropicAPI", "BedrockAPI"]
