"""The thinking levels each Gemini 3 model takes, on both wires through the official SDK, and
the services' refusal of the others (the levels per model: Vertex AI's thinking guide)."""

from __future__ import annotations

import pytest
from google import genai
from google.genai import errors, types

from tests.support.gemini import api_fixture, client_fixture  # noqa: F401 (fixtures)

from .test_gemini import client_error

LEVELS = {
    "gemini-3-pro-preview": ("LOW", "HIGH"),
    "gemini-3-flash-preview": ("MINIMAL", "LOW", "MEDIUM", "HIGH"),
    "gemini-3.1-pro-preview": ("LOW", "MEDIUM", "HIGH"),
    "gemini-3.8-flash": ("LOW", "MEDIUM", "HIGH"),
}


def refusal(api: str, level: str) -> str:
    if api == "vertex":
        return (
            f"Unable to submit request because thinking_level {level} is not supported by this "
            "model. Learn more: "
            "https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
        )
    return (
        f"Thinking level {level} is not supported for this model. Please retry with other "
        "thinking level."
    )


@pytest.mark.parametrize("model", list(LEVELS))
async def test_each_model_takes_its_levels_only(client: genai.Client, api: str, model: str) -> None:
    for level in ("MINIMAL", "LOW", "MEDIUM", "HIGH", "XHIGH"):
        config = types.GenerateContentConfig(
            thinking_config=types.ThinkingConfig(thinking_level=types.ThinkingLevel(level))
        )
        if level in LEVELS[model]:
            await client.aio.models.generate_content(model=model, contents="Hi", config=config)
            continue
        with pytest.raises(errors.ClientError) as exc:
            await client.aio.models.generate_content(model=model, contents="Hi", config=config)
        assert client_error(exc) == refusal(api, level)
