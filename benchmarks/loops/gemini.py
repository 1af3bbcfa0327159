"""Gemini: the 2-turn thinking + tool loop, by `google.genai.Client` alone and through thinkagent."""

from __future__ import annotations

from typing import Any

from google import genai
from google.genai import types

from thinkagent import Agent
from thinkagent.providers.gemini import GeminiModel

from . import agent_tools, run_tool

NAME = "gemini"

MODEL = "gemini-3-pro-preview"
QUESTION = "What's the weather in Paris? I am planning a long walk along the river this afternoon."
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


class GeminiLoops:
    def __init__(self, base_url: str) -> None:
        self.client = genai.Client(
            api_key="bench",
            http_options=types.HttpOptions(base_url=base_url, api_version="v1beta"),
        )
        model = GeminiModel(MODEL, client=self.client)
        self.agents = {sync: Agent(model, tools=agent_tools(sync)) for sync in (False, True)}
        self.config = types.GenerateContentConfig(
            tools=[
                types.Tool(
                    function_declarations=[
                        types.FunctionDeclaration(
                            name="get_weather",
                            description="Current weather for a city.",
                            parameters_json_schema=SCHEMA,
                        )
                    ]
                )
            ],
            thinking_config=types.ThinkingConfig(include_thoughts=True),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    async def raw(self, streamed: bool, sync: bool) -> None:
        contents: list[types.Content] = [
            types.Content(role="user", parts=[types.Part(text=QUESTION)])
        ]
        for turn in range(2):
            if streamed:
                content, finish = await self._raw_stream(contents)
            else:
                response = await self.client.aio.models.generate_content(
                    model=MODEL, contents=contents, config=self.config
                )
                candidate = (response.candidates or [])[0]
                content, finish = candidate.content, candidate.finish_reason
            calls = (
                [p.function_call for p in (content.parts or []) if p.function_call]
                if content
                else []
            )
            if not calls:
                if turn != 1 or finish != types.FinishReason.STOP:
                    raise RuntimeError(f"unexpected finish {finish!r} on turn {turn}")
                return
            results = [
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call.id,
                        name=call.name,
                        response={"output": await run_tool(sync, call.args or {})},
                    )
                )
                for call in calls
            ]
            assert content is not None
            contents = [*contents, content, types.Content(role="user", parts=results)]
        raise RuntimeError("the loop did not end with an answer")

    async def _raw_stream(
        self, contents: list[types.Content]
    ) -> tuple[types.Content, types.FinishReason | None]:
        """Fold the chunks by hand: text of one kind joins its part until a signature closes
        it; each function call is a part of its own."""
        parts: list[types.Part] = []
        open_part: types.Part | None = None
        finish: types.FinishReason | None = None
        stream = await self.client.aio.models.generate_content_stream(
            model=MODEL, contents=contents, config=self.config
        )
        async for chunk in stream:
            candidate = (chunk.candidates or [None])[0]
            if candidate is None:
                continue
            for part in (candidate.content.parts or []) if candidate.content else []:
                if part.function_call is not None:
                    parts.append(part)
                    open_part = None
                    continue
                if not part.text and part.thought_signature is None:
                    continue
                if open_part is not None and bool(open_part.thought) == bool(part.thought):
                    open_part.text = (open_part.text or "") + (part.text or "")
                    open_part.thought_signature = part.thought_signature
                else:
                    open_part = types.Part(
                        text=part.text or "",
                        thought=part.thought,
                        thought_signature=part.thought_signature,
                    )
                    parts.append(open_part)
                if part.thought_signature is not None:
                    open_part = None
            if candidate.finish_reason is not None:
                finish = candidate.finish_reason
        return types.Content(role="model", parts=parts), finish

    async def thinkagent(self, streamed: bool, sync: bool) -> None:
        if streamed:
            async with self.agents[sync].run_stream(QUESTION) as stream:
                async for _ in stream:
                    pass
            result = stream.result
        else:
            result = await self.agents[sync].run(QUESTION)
        if len(result.messages) != 4 or not result.output:
            raise RuntimeError("the loop did not end with an answer after one tool call")

    async def aclose(self) -> None:
        await self.client.aio.aclose()


async def setup(base_url: str) -> GeminiLoops:
    return GeminiLoops(base_url)
