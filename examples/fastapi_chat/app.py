"""A chat service with FastAPI: the model's thinking streams to the page as it arrives, with
the tool calls, their results and the answer; every conversation is kept in SQLite, proofs
included, so each turn replays the earlier thinking exactly.

    make chat                     # or: python examples/fastapi_chat/app.py [--port 8000]
    uvicorn --factory app:create_app --app-dir examples/fastapi_chat   # under your own uvicorn

then open http://127.0.0.1:8000. Without an API key it runs on the thinkagent emulator (started
in the app, and paced: each streamed event waits CHAT_PACE seconds, 0.15 by default, so the
thinking is seen growing as a real model's would; the page says it is the emulator); with
ANTHROPIC_API_KEY (or OPENAI_API_KEY, GEMINI_API_KEY) set it talks to that provider (CHAT_MODEL
picks the model). Conversations go to `conversations.sqlite3` beside this file (`--db` or
CHAT_DB for another), which git ignores.

Endpoints:
- `POST /api/chat` `{"message": ..., "conversation_id": ...}`: the turn as Server-Sent Events in
  thinkagent's schema (`thinkagent.sse.event_stream_response`); the conversation's id is in the
  `x-conversation-id` header (a new one when none is given).
- `POST /api/chat/ui`: the same in the Vercel AI SDK's UI message stream protocol, for a page
  written with its `useChat` hook (the request body is the hook's: `id`, `messages`).
- `POST /api/chat/json`: the turn without streaming, as JSON.
- `GET /api/conversations`, `GET /api/conversations/{id}`: the stored conversations, as the page
  shows them (thinking text, tool calls and results, answers; never a proof).
- `GET /api/info`: the model and where it runs, for the page's header.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).parent))  # `store` beside this file, however it is run

from store import Conversations

from thinkagent import (
    Agent,
    Message,
    Model,
    TextPart,
    ThinkAgentError,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from thinkagent.sse import event_stream_response, ui_message_stream_response

HERE = Path(__file__).parent
EMULATOR = "the thinkagent emulator (no API key set)"
INSTRUCTIONS = "You are a helpful assistant. Use the tools for weather and time questions."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Current local time in a city."""
    return f"12:00 in {city}"


async def open_model(stack: AsyncExitStack) -> tuple[Model, str]:
    """The model to chat with, and where it runs: the provider whose key is set, else the
    emulator (started here, stopped with the app)."""
    name = os.environ.get("CHAT_MODEL")
    if os.environ.get("ANTHROPIC_API_KEY"):
        from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

        thinking = ClaudeThinking.adaptive(display="summarized")
        return AnthropicModel(name or "claude-sonnet-4-6", thinking=thinking), "the Anthropic API"
    if os.environ.get("OPENAI_API_KEY"):
        from thinkagent.providers.openai import OpenAIResponsesModel, OpenAIThinking

        thinking = OpenAIThinking(summary="auto")
        return OpenAIResponsesModel(name or "gpt-5", thinking=thinking), "the OpenAI API"
    if os.environ.get("GEMINI_API_KEY"):
        from thinkagent.providers.gemini import GeminiModel, GeminiThinking

        thinking = GeminiThinking(include_thoughts=True)
        return GeminiModel(name or "gemini-3-flash-preview", thinking=thinking), "the Gemini API"
    from thinkagent.emulator import Emulator, Fault
    from thinkagent.providers.claude import AnthropicModel, ClaudeThinking

    emulator = stack.enter_context(Emulator())
    # The emulator answers a turn in a blink; a real model streams for seconds. Each event of its
    # answers waits CHAT_PACE seconds, so the thinking is seen growing (about 30,000 requests).
    pace = float(os.environ.get("CHAT_PACE", "0.15"))
    if pace > 0:
        emulator.inject(Fault.slow(pace, api="anthropic"), times=100_000)
    client = emulator.anthropic_client()
    stack.push_async_callback(client.close)
    thinking = ClaudeThinking.adaptive(display="summarized")
    model = AnthropicModel(name or "claude-sonnet-4-6", client=client, thinking=thinking)
    return model, EMULATOR


class Turn(BaseModel):
    message: str = Field(min_length=1)
    conversation_id: str | None = None


def create_app(db: str | Path | None = None, model: Model | None = None) -> FastAPI:
    """The app; `model` overrides the one `open_model` picks (tests), `db` the database."""
    conversations = Conversations(db or os.environ.get("CHAT_DB") or HERE / "conversations.sqlite3")
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if model is None:
                state["model"], where = await open_model(stack)
            else:
                state["model"], where = model, "the given model"
            state["where"] = where
            print(f"fastapi_chat: chatting with {state['model'].model_name} on {where}", flush=True)
            yield

    app = FastAPI(title="thinkagent chat", lifespan=lifespan)

    def agent() -> Agent[None, str]:
        return Agent(state["model"], tools=[get_weather, get_time], instructions=INSTRUCTIONS)

    @app.get("/")
    async def page() -> FileResponse:
        return FileResponse(HERE / "static" / "index.html")

    @app.get("/favicon.ico")
    @app.get("/favicon.svg")
    async def favicon() -> FileResponse:
        return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")

    @app.get("/api/info")
    async def info() -> dict[str, Any]:
        where = state["where"]
        return {"model": state["model"].model_name, "where": where, "emulator": where == EMULATOR}

    @app.post("/api/chat")
    async def chat(turn: Turn) -> Response:
        conversation = turn.conversation_id or uuid.uuid4().hex
        history = await conversations.load(conversation)
        stream = agent().run_stream(turn.message, history=history)

        async def save(ended: Any) -> None:
            await conversations.save(conversation, ended.messages)

        return event_stream_response(
            stream, on_end=save, headers={"x-conversation-id": conversation}
        )

    @app.post("/api/chat/ui")
    async def chat_ui(request: Request) -> Response:
        body = await request.json()
        conversation = str(body.get("id") or uuid.uuid4().hex)
        message = _last_user_text(body.get("messages") or [])
        if not message:
            raise HTTPException(422, "the last message must be the user's, with text")
        history = await conversations.load(conversation)
        stream = agent().run_stream(message, history=history)

        async def save(ended: Any) -> None:
            await conversations.save(conversation, ended.messages)

        return ui_message_stream_response(stream, on_end=save)

    @app.post("/api/chat/json")
    async def chat_json(turn: Turn) -> JSONResponse:
        conversation = turn.conversation_id or uuid.uuid4().hex
        history = await conversations.load(conversation)
        try:
            result = await agent().run(turn.message, history=history)
        except ThinkAgentError as error:
            await conversations.save(conversation, error.messages or history)
            return JSONResponse({"conversation_id": conversation, "error": str(error)}, 502)
        await conversations.save(conversation, result.messages)
        return JSONResponse(
            {
                "conversation_id": conversation,
                "output": result.output,
                "messages": [_shown(m) for m in result.new_messages],
                "usage": result.usage.model_dump(),
            }
        )

    @app.get("/api/conversations")
    async def list_conversations() -> dict[str, list[str]]:
        return {"conversations": await conversations.ids()}

    @app.get("/api/conversations/{conversation_id}")
    async def show(conversation_id: str) -> dict[str, Any]:
        messages = await conversations.load(conversation_id)
        return {"id": conversation_id, "messages": [_shown(m) for m in messages]}

    return app


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last message of a `useChat` request, if it is the user's."""
    if not messages or messages[-1].get("role") != "user":
        return ""
    parts = messages[-1].get("parts") or []
    return "".join(p.get("text", "") for p in parts if p.get("type") == "text").strip()


def _shown(message: Message) -> dict[str, Any]:
    """A stored message as the page shows it: no proof, a redacted block marked as such."""
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ThinkingBlock):
            parts.append({"kind": "thinking", "text": part.text, "redacted": part.is_redacted})
        elif isinstance(part, TextPart):
            parts.append({"kind": "text", "text": part.text})
        elif isinstance(part, ToolCall):
            shown = {"kind": "tool_call", "id": part.id, "name": part.name}
            parts.append({**shown, "arguments": part.arguments})
        elif isinstance(part, ToolResult):
            shown = {"kind": "tool_result", "call_id": part.call_id, "is_error": part.is_error}
            parts.append({**shown, "content": part.content})
    return {"role": message.role, "parts": parts}


def main() -> None:
    parser = argparse.ArgumentParser(description="The thinkagent FastAPI chat example.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument(
        "--db", default=None, help="the SQLite file (default: CHAT_DB, or beside this file)"
    )
    args = parser.parse_args()
    uvicorn.run(create_app(args.db), host=args.host, port=args.port)


if __name__ == "__main__":
    main()
