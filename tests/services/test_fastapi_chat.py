"""examples/fastapi_chat under a real uvicorn server, driven with httpx: the page, the JSON,
SSE and UI message stream endpoints, 50 conversations at once, and a client that disconnects
mid-stream leaving a stored history the next turn continues.

The app runs as its README says (`python examples/fastapi_chat/app.py`), talking to the suite's
emulator through the Anthropic SDK's own environment variables, as it would to the real API
with a key."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from thinkagent import load_messages, validate_history
from thinkagent.emulator import Emulator, Fault

APP = Path(__file__).parents[2] / "examples" / "fastapi_chat" / "app.py"
KEYS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(env: dict[str, str], db: Path) -> tuple[subprocess.Popen[str], str]:
    """The app under uvicorn, as its README starts it; its base URL once it listens."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(APP), "--port", str(port), "--db", str(db)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the app exited: {process.stdout.read() if process.stdout else ''}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("the app did not listen within 60 s")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def server(emu: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    db = tmp_path_factory.mktemp("chat") / "conversations.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.endswith("_BASE_URL")}
    env.update(ANTHROPIC_BASE_URL=emu.url, ANTHROPIC_API_KEY="test-key-not-secret")
    process, url = serve(env, db)
    try:
        yield url, db
    finally:
        stop(process)


@pytest.fixture
async def client(server: tuple[str, Path]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server[0], timeout=60) as client:
        yield client


async def sse(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> tuple[httpx.Response, list[tuple[str, Any]]]:
    """POST a turn to /api/chat and read its events to the end."""
    events: list[tuple[str, Any]] = []
    async with client.stream("POST", "/api/chat", json=body) as response:
        name = "message"
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                events.append((name, json.loads(line[5:].strip())))
    return response, events


def stored(db: Path, conversation: str) -> str:
    with sqlite3.connect(db) as connection:
        row = connection.execute(
            "SELECT messages FROM conversations WHERE id = ?", (conversation,)
        ).fetchone()
    return row[0] if row else "[]"


async def test_the_page_is_served(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<title>thinkagent chat</title>" in page.text and 'fetch("/api/chat"' in page.text


async def test_a_json_turn_and_the_next_one_replay_the_thinking(
    client: httpx.AsyncClient, server: tuple[str, Path], emu: Emulator
) -> None:
    first = (
        await client.post("/api/chat/json", json={"message": "What's the weather in Paris?"})
    ).json()
    assert "sunny in Paris" in first["output"]
    conversation = first["conversation_id"]
    kinds = [[p["kind"] for p in m["parts"]] for m in first["messages"]]
    assert kinds[1][0] == "thinking" and "tool_call" in kinds[1]
    second = (
        await client.post(
            "/api/chat/json", json={"message": "And in Rome?", "conversation_id": conversation}
        )
    ).json()
    assert "Rome" in second["output"]
    # the signed thinking went back byte for byte (the emulator verified it: the turn answered)
    body = emu.requests[-1].body
    assert any(
        block["type"] == "thinking"
        for m in body["messages"]
        for block in m["content"]
        if isinstance(m["content"], list)
    )
    shown = (await client.get(f"/api/conversations/{conversation}")).json()
    assert len(shown["messages"]) == 8
    history = load_messages(stored(server[1], conversation))
    signatures = [b.signature for m in history for b in m.thinking if b.signature]
    assert signatures and not [s for s in signatures if s in json.dumps(shown)]


async def test_a_streamed_turn_is_server_sent_events(
    client: httpx.AsyncClient, server: tuple[str, Path]
) -> None:
    response, events = await sse(client, {"message": "What's the weather in Paris?"})
    assert response.headers["content-type"].startswith("text/event-stream")
    conversation = response.headers["x-conversation-id"]
    names = [name for name, _ in events]
    assert names[0] == "step-start" and names[-1] == "done"
    assert {"step": 1, "index": 0, "kind": "thinking"} in [
        d for n, d in events if n == "part-start"
    ]
    assert "".join(d["text"] for n, d in events if n == "thinking" and d["step"] == 1)
    assert [d["name"] for n, d in events if n == "tool-result"] == ["get_weather"]
    assert "sunny in Paris" in events[-1][1]["output"]
    assert len(load_messages(stored(server[1], conversation))) == 4


async def test_the_ui_message_stream_endpoint_speaks_the_ai_sdk_protocol(
    client: httpx.AsyncClient,
) -> None:
    body = {
        "id": "ui-conversation",
        "messages": [
            {
                "id": "u1",
                "role": "user",
                "parts": [{"type": "text", "text": "What's the weather in Paris?"}],
            }
        ],
        "trigger": "submit-message",
    }
    async with client.stream("POST", "/api/chat/ui", json=body) as response:
        assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
        data = [
            line[5:].strip() async for line in response.aiter_lines() if line.startswith("data:")
        ]
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    types = [c["type"] for c in chunks]
    assert types[0] == "start" and types[-1] == "finish"
    assert "reasoning-start" in types and "reasoning-delta" in types and "reasoning-end" in types
    assert "tool-input-available" in types and "tool-output-available" in types
    assert "sunny in Paris" in "".join(c["delta"] for c in chunks if c["type"] == "text-delta")


async def test_fifty_conversations_at_once(
    client: httpx.AsyncClient, server: tuple[str, Path]
) -> None:
    cities = [f"City{n}" for n in range(50)]
    turns = await asyncio.gather(
        *(sse(client, {"message": f"What's the weather in {city}?"}) for city in cities)
    )
    for city, (response, events) in zip(cities, turns, strict=True):
        assert events[-1][0] == "done", events[-3:]
        assert f"sunny in {city}" in events[-1][1]["output"]
        history = load_messages(stored(server[1], response.headers["x-conversation-id"]))
        assert len(history) == 4
        validate_history(history)


async def test_a_client_that_disconnects_mid_stream_leaves_a_history_to_continue(
    client: httpx.AsyncClient, server: tuple[str, Path], emu: Emulator
) -> None:
    emu.inject(Fault.slow(0.05, api="anthropic"), times=2)  # both requests of the turn crawl
    async with client.stream(
        "POST", "/api/chat", json={"message": "What's the weather in Paris?"}
    ) as response:
        conversation = response.headers["x-conversation-id"]
        name = ""
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
            if name == "tool-result" and line.startswith("data:"):
                break  # gone while the model streams its answer to the tool's result
    for _ in range(200):  # the server saves the evidence once it has cancelled the run
        if stored(server[1], conversation) != "[]":
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(3)  # the answer would have finished by now, had the run gone on
    history = load_messages(stored(server[1], conversation))
    validate_history(history)
    assert [m.role for m in history] == ["user", "assistant", "user"]  # cancelled before its answer
    assert history[-1].tool_results and history[1].thinking[0].signature
    # the next turn continues it: the stored thinking replays and verifies
    _, events = await sse(client, {"message": "And in Rome?", "conversation_id": conversation})
    assert events[-1][0] == "done"
    assert len(load_messages(stored(server[1], conversation))) == 7


# --- one turn at a time, stored with a version check; useChat's regenerate (issue 25) -----------


async def read_events(response: httpx.Response) -> list[tuple[str, Any]]:
    events: list[tuple[str, Any]] = []
    name = "message"
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            events.append((name, json.loads(line[5:].strip())))
    return events


async def test_the_fastapi_chat_example_loses_updates(
    client: httpx.AsyncClient, server: tuple[str, Path], emu: Emulator
) -> None:
    """Defect 3 (issue 25): two concurrent turns of one conversation both answered 200 and
    only one was stored. The second is now refused with 409 while the first runs."""
    emu.inject(Fault.slow(0.05, api="anthropic"), times=2)
    body = {"message": "What's the weather in Paris?", "conversation_id": "busy-1"}
    async with client.stream("POST", "/api/chat", json=body) as first:
        assert first.status_code == 200
        lines = first.aiter_lines()
        await anext(lines)  # the turn is running
        second = await client.post(
            "/api/chat", json={"message": "And in Rome?", "conversation_id": "busy-1"}
        )
        json_second = await client.post(
            "/api/chat/json", json={"message": "And in Rome?", "conversation_id": "busy-1"}
        )
        async for _ in lines:
            pass
    assert second.status_code == 409 and json_second.status_code == 409
    assert "still running" in second.json()["detail"]
    history = load_messages(stored(server[1], "busy-1"))
    assert len(history) == 4 and "Paris" in history[0].text  # the one turn, whole
    # once it has ended, the next turn runs on the stored history
    _, events = await sse(client, {"message": "And in Rome?", "conversation_id": "busy-1"})
    assert events[-1][0] == "done"
    assert len(load_messages(stored(server[1], "busy-1"))) == 8


async def test_the_store_refuses_a_stale_write(tmp_path: Path) -> None:
    sys.path.insert(0, str(APP.parent))
    try:
        from store import Conversations, StaleConversation  # pyright: ignore[reportMissingImports]
    finally:
        sys.path.remove(str(APP.parent))
    from thinkagent import Message

    conversations = Conversations(tmp_path / "c.sqlite3")
    one = [Message.user("one")]
    first = await conversations.load("c")
    assert first.version == 0
    assert await conversations.save("c", one, version=0) == 1
    with pytest.raises(StaleConversation):  # another turn loaded it at 0 too
        await conversations.save("c", [Message.user("two")], version=0)
    assert await conversations.save("c", [*one, Message.user("x")], version=1) == 2
    with pytest.raises(StaleConversation):
        await conversations.save("c", one, version=1)
    assert [m.text for m in (await conversations.load("c")).messages] == ["one", "x"]


async def ui_turn(client: httpx.AsyncClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    async with client.stream("POST", "/api/chat/ui", json=body) as response:
        assert response.status_code == 200, await response.aread()
        data = [
            line[5:].strip() async for line in response.aiter_lines() if line.startswith("data:")
        ]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


def ui_answer(chunks: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """The assistant UI message a client builds from a stream (text parts only)."""
    return {
        "id": chunks[0]["messageId"],
        "role": "assistant",
        "parts": [{"type": "text", "text": text}],
    }


async def test_use_chat_ignores_regenerate_and_duplicates_the_user_turn(
    client: httpx.AsyncClient, server: tuple[str, Path]
) -> None:
    """Defect 3 (issue 25): `/api/chat/ui` took the last user text as a new prompt whatever
    the trigger, so a regenerate stored the user's turn twice."""
    user = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Weather in Paris?"}]}
    first = await ui_turn(
        client, {"id": "regen-1", "messages": [user], "trigger": "submit-message"}
    )
    before = load_messages(stored(server[1], "regen-1"))
    assert [m.role for m in before] == ["user", "assistant", "user", "assistant"]
    again = await ui_turn(
        client,
        {
            "id": "regen-1",
            "messages": [user],
            "trigger": "regenerate-message",
            "messageId": first[0]["messageId"],
        },
    )
    after = load_messages(stored(server[1], "regen-1"))
    assert [m.role for m in after] == ["user", "assistant", "user", "assistant"]  # not doubled
    assert again[0]["messageId"] != first[0]["messageId"]  # a new answer replaces the old one
    with sqlite3.connect(server[1]) as connection:
        (ui,) = connection.execute("SELECT ui FROM conversations WHERE id = 'regen-1'").fetchone()
    assert [e["id"] for e in json.loads(ui)["entries"]] == ["u1", again[0]["messageId"]]
    # the next turn names the messages by id: the stored proofs replay and verify
    reply = ui_answer(again, "sunny")
    nxt = {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "And in Rome?"}]}
    last = await ui_turn(client, {"id": "regen-1", "messages": [user, reply, nxt]})
    assert last[-1]["type"] == "finish" and last[-1]["finishReason"] == "stop"
    assert len(load_messages(stored(server[1], "regen-1"))) == 8
