"""The tools and the question the wire tests share, declared in each API's shape (the
clients are the suite's shared fixtures, `tests/support/fixtures.py`)."""

from __future__ import annotations

from typing import Any

WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
TIME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "format": {"type": "string", "enum": ["24h", "12h"]},
    },
    "required": ["city", "format"],
}
#: Two tools: the question "weather and the time in Paris" makes a 3-turn loop
#: (get_weather, then get_time, then the answer).
ANTHROPIC_TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": WEATHER_SCHEMA,
    },
    {"name": "get_time", "description": "Local time in a city.", "input_schema": TIME_SCHEMA},
]
BEDROCK_TOOLS: dict[str, Any] = {
    "tools": [
        {
            "toolSpec": {
                "name": t["name"],
                "description": t["description"],
                "inputSchema": {"json": t["input_schema"]},
            }
        }
        for t in ANTHROPIC_TOOLS
    ]
}
#: The same tools as Chat Completions (nested ``function``) and Responses (flat) declare them.
CHAT_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": t["name"],
            "description": t["description"],
            "parameters": t["input_schema"],
        },
    }
    for t in ANTHROPIC_TOOLS
]
RESPONSES_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "name": t["name"],
        "description": t["description"],
        "parameters": t["input_schema"],
    }
    for t in ANTHROPIC_TOOLS
]
QUESTION = "What's the weather and the time in Paris?"
TOOL_OUTPUT = {"get_weather": "sunny, 21 C", "get_time": "14:05"}
