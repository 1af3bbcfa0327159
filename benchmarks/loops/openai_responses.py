"""OpenAI Responses API: the 2-turn reasoning + tool loop (encrypted reasoning replayed), by
`AsyncOpenAI` alone and through thinkagent. The loops live in `openai.py`; this module only
adds their row."""

from __future__ import annotations

from .openai import ResponsesLoops

NAME = "openai-resp"


async def setup(base_url: str) -> ResponsesLoops:
    return ResponsesLoops(base_url)
