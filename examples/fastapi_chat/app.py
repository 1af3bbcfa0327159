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
  written with its `useChat` hook (the request body is the hook's: `id`, `messages`, `trigger`,
  `messageId`). The proofs stay here, stored by UI message id (`thinkagent.sse.UIChat`): the
  browser never sees one and never sends one back. It regenerates an answer without repeating
  the user's turn, and asks before booking a table for more than six (a tool approval).
- `POST /api/ag-ui`: the same in the AG-UI protocol (the body is a `RunAgentInput`; the thread
  id is the conversation's), the proofs kept here by message id (`thinkagent.ag_ui.AGUIThread`);
  a booking that needs approval ends the run with an interrupt, and `resume` answers it.
- `POST /api/chat/json`: the turn without streaming, as JSON.
- `GET /api/conversations`, `GET /api/conversations/{id}`: the stored conversations, as the page
  shows them (thinking text, tool calls and results, answers; never a proof).
- `GET /api/info`: the model and where it runs, for the page's header.

One turn of a conversation runs at a time: a second one that arrives while the first runs is
refused with 409, and a conversation is stored only if nobody stored it since it was loaded (a
version check, so two server processes cannot lose a turn either).
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
from starlette.background import BackgroundTask

sys.path.insert(0, str(Path(__file__).parent))  # `store` beside this file, however it is run

from store import Conversations, StaleConversation

from thinkagent import (
    Agent,
    ApprovalRequired,
    Message,
    Model,
    RunContext,
    TextPart,
    ThinkAgentError,
    ThinkingBlock,
    ToolCall,
    ToolResult,
)
from thinkagent.ag_ui import AGUIRequestError, AGUIThread
from thinkagent.sse import UIChat, UIRequestError, event_stream_response

HERE = Path(__file__).parent
EMULATOR = "the thinkagent emulator (no API key set)"
INSTRUCTIONS = "You are a helpful assistant. Use the tools for weather and time questions."


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


def get_time(city: str) -> str:
    """Current local time in a city."""
    return f"12:00 in {city}"


def book_table(ctx: RunContext[None], city: str, people: int) -> str:
    """Book a table at a restaurant in a city."""
    if people > 6 and not ctx.tool_call_approved:
        raise ApprovalRequired(f"a table for {people} needs your approval")
    return f"booked a table for {people} in {city}"


class Turns:
    """The conversations with a turn running in this process: a second turn of one of them is
    refused (409) until the first has ended and been stored."""

    def __init__(self) -> None:
        self._running: set[str] = set()

    def claim(self, conversation: str) -> None:
        if conversation in self._running:
            raise HTTPException(
                409, f"a turn of conversation {conversation!r} is still running: wait for it"
            )
        self._running.add(conversation)

    def release(self, conversation: str) -> None:
        self._running.discard(conversation)

    def released_after(self, response: Response, conversation: str) -> Response:
        """`response`, releasing the conversation once it has been sent, for a response whose
        run never started (a client gone at once); its `on_end` releases it as soon as the
        turn is stored, before the stream closes."""
        response.background = BackgroundTask(self.release, conversation)
        return response


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
    turns = Turns()

    def agent(*, booking: bool = False) -> Agent[None, str]:
        tools: list[Any] = [get_weather, get_time, *([book_table] if booking else [])]
        return Agent(state["model"], tools=tools, instructions=INSTRUCTIONS)

    async def store(
        conversation: str, messages: Any, version: int, ui: UIChat | AGUIThread | None = None
    ) -> bool:
        """Store a turn if nobody stored the conversation since it was loaded (False if not),
        then let its next turn in."""
        try:
            await conversations.save(conversation, messages, version=version, ui=ui)
        except StaleConversation:
            print(f"fastapi_chat: conversation {conversation} changed meanwhile: turn not stored")
            return False
        finally:
            turns.release(conversation)
        return True

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
        turns.claim(conversation)
        try:
            stored = await conversations.load(conversation)
            stream = agent().run_stream(
                turn.message, history=stored.messages, conversation_id=conversation
            )
        except BaseException:
            turns.release(conversation)
            raise

        async def save(ended: Any) -> None:
            await store(conversation, ended.messages, stored.version)

        response = event_stream_response(
            stream, on_end=save, headers={"x-conversation-id": conversation}
        )
        return turns.released_after(response, conversation)

    @app.post("/api/chat/ui")
    async def chat_ui(request: Request) -> Response:
        body = await request.json()
        if not isinstance(body, dict):
            raise HTTPException(422, "the body must be useChat's request object")
        conversation = str(body.get("id") or uuid.uuid4().hex)
        turns.claim(conversation)
        try:
            stored = await conversations.load(conversation)
            if stored.messages and stored.ui is None:
                raise HTTPException(422, f"conversation {conversation!r} is not a useChat one")
            chat = stored.ui or UIChat()
            try:
                turn = chat.turn(body)
            except UIRequestError as error:
                raise HTTPException(422, str(error)) from None
            stream = agent(booking=True).run_stream(
                turn.prompt,
                history=turn.history,
                approvals=turn.approvals,
                conversation_id=conversation,
            )
        except BaseException:
            turns.release(conversation)
            raise

        async def save(ended: Any) -> None:
            updated = turn.commit(ended)
            await store(conversation, updated.messages, stored.version, updated)

        return turns.released_after(turn.response(stream, on_end=save), conversation)

    @app.post("/api/ag-ui")
    async def chat_ag_ui(request: Request) -> Response:
        body = await request.json()
        if not isinstance(body, dict) or not isinstance(body.get("threadId"), str):
            raise HTTPException(422, "the body must be a RunAgentInput, with a threadId")
        conversation = body["threadId"]
        turns.claim(conversation)
        try:
            stored = await conversations.load(conversation)
            if stored.messages and stored.thread is None:
                raise HTTPException(422, f"conversation {conversation!r} is not an AG-UI one")
            thread = stored.thread or AGUIThread()
            try:
                turn = thread.turn(body)
            except AGUIRequestError as error:
                raise HTTPException(422, str(error)) from None
            stream = agent(booking=True).run_stream(
                turn.prompt,
                history=turn.history,
                approvals=turn.approvals,
                conversation_id=conversation,
            )
        except BaseException:
            turns.release(conversation)
            raise

        async def save(ended: Any) -> None:
            updated = turn.commit(ended)
            await store(conversation, updated.messages, stored.version, updated)

        return turns.released_after(turn.response(stream, on_end=save), conversation)

    @app.post("/api/chat/json")
    async def chat_json(turn: Turn) -> JSONResponse:
        conversation = turn.conversation_id or uuid.uuid4().hex
        turns.claim(conversation)
        try:
            stored = await conversations.load(conversation)
            try:
                result = await agent().run(
                    turn.message, history=stored.messages, conversation_id=conversation
                )
            except ThinkAgentError as error:
                await store(conversation, error.messages or stored.messages, stored.version)
                return JSONResponse({"conversation_id": conversation, "error": str(error)}, 502)
            if not await store(conversation, result.messages, stored.version):
                return JSONResponse(
                    {"conversation_id": conversation, "error": "the conversation changed"}, 409
                )
        finally:
            turns.release(conversation)
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
        stored = await conversations.load(conversation_id)
        return {"id": conversation_id, "messages": [_shown(m) for m in stored.messages]}

    return app


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
