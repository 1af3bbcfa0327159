"""Gemini test helpers: `api` and `client`, fixtures that run a test on the Gemini API and on
Vertex AI (import them into a test module), `run` (an agent run, streamed or not), and
`MockGemini`, a `genai.Client` over an
in-process transport: the official SDK builds, sends and parses everything as usual, the
transport answers from a queue and records each request body."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import httpx2
import pytest
from google import genai
from google.genai import types

from thinkagent import Agent, RunResult

API_KEY = "test-api-key-do-not-leak"


@pytest.fixture(params=["gemini", "vertex"], name="api")
def api_fixture(request: pytest.FixtureRequest) -> str:
    """Each Google wire in turn: `"gemini"` (the Gemini API), then `"vertex"` (Vertex AI)."""
    return request.param


@pytest.fixture(name="client")
def client_fixture(api: str, request: pytest.FixtureRequest) -> genai.Client:
    """The suite's `gemini_client` or `vertex_client`, by `api`."""
    return request.getfixturevalue(f"{api}_client")


async def run(agent: Agent[Any, Any], prompt: str, *, stream: bool) -> RunResult[Any]:
    """`agent.run(prompt)`, or the result of `agent.run_stream(prompt)` read to its end."""
    if not stream:
        return await agent.run(prompt)
    async with agent.run_stream(prompt) as events:
        async for _ in events:
            pass
    return events.result


Answer = dict[str, Any] | list[dict[str, Any]] | httpx2.Response | Exception | Callable[[], Any]
"""A JSON body, a list of stream chunks (served as SSE), a whole response, or an error."""


class MockGemini:
    def __init__(self, *answers: Answer, vertex: bool = False) -> None:
        self.answers: list[Answer] = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        transport = httpx2.MockTransport(self._handle)
        options = types.HttpOptions(
            base_url="https://gemini.test",
            api_version="v1beta1" if vertex else "v1beta",
            httpx_async_client=httpx2.AsyncClient(transport=transport),
        )
        if vertex:
            from google.oauth2.credentials import Credentials

            self.client = genai.Client(
                vertexai=True,
                project="test-project",
                location="us-central1",
                credentials=Credentials(token=API_KEY),  # pyright: ignore[reportCallIssue]
                http_options=options,
            )
        else:
            self.client = genai.Client(api_key=API_KEY, http_options=options)

    def queue(self, *answers: Answer) -> None:
        self.answers.extend(answers)

    def _handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        self.paths.append(request.url.path)
        answer = self.answers.pop(0)
        if callable(answer) and not isinstance(answer, Exception):
            answer = answer()
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx2.Response):
            return answer
        if isinstance(answer, list):
            return httpx2.Response(
                200,
                content=sse(answer),
                headers={"content-type": "text/event-stream"},
            )
        return httpx2.Response(200, json=answer)


def sse(chunks: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def response(
    *parts: dict[str, Any],
    finish: str | None = "STOP",
    usage: dict[str, Any] | None = None,
    response_id: str | None = "resp-1",
) -> dict[str, Any]:
    """A `GenerateContentResponse` body (camelCase, as on the wire)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-3-pro-preview"}
    if usage is not None:
        body["usageMetadata"] = usage
    if response_id is not None:
        body["responseId"] = response_id
    return body


def error(status: int, message: str, code_name: str) -> httpx2.Response:
    return httpx2.Response(
        status, json={"error": {"code": status, "message": message, "status": code_name}}
    )
