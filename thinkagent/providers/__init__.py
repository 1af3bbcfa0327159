"""Model adapters: one translator per wire API, each over the vendor's official SDK.

Adapters live in family packages (`claude/`: Anthropic Messages and Bedrock Converse;
`openai/`: Chat Completions and Responses; `gemini/`: the Gemini API and Vertex AI), all on one
skeleton (ADR 29). A family never makes you install another family's SDK, and within the
Claude family each adapter's SDK is imported only when that adapter is. The port they implement
is in `thinkagent.providers.base`; `anthropic`, `bedrock` and `openai_responses` here are the
pinned import paths, re-exporting from the families.
"""
