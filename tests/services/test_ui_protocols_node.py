"""The UI protocols against examples/fastapi_chat, with their own npm packages: the AI SDK's
chat client (`ai`, the core of `useChat`) on `/api/chat/ui`, and an AG-UI client checked with
`@ag-ui/core`'s schemas on `/api/ag-ui`: a multi-turn chat with an approval and a regenerate,
every chunk and event checked by the protocol's own schema; the thinking of each turn replays
and verifies on the emulator, and no proof ever reaches the client (issue 25).

Runs where node and the packages of `tests/ui` are installed (`npm ci --prefix tests/ui`, which
`.ci/run` does); skipped with the reason otherwise."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.services.test_fastapi_chat import KEYS, serve, stop
from thinkagent import load_messages, validate_history
from thinkagent.emulator import Emulator

UI = Path(__file__).parents[1] / "ui"


def node_packages() -> str | None:
    """Why the node tests cannot run here, or None when they can."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (UI / "node_modules" / "ai").is_dir() or not (UI / "node_modules" / "@ag-ui").is_dir():
        return "the npm packages of tests/ui are not installed (npm ci --prefix tests/ui)"
    return None


needs_node = pytest.mark.skipif(node_packages() is not None, reason=node_packages() or "")


@pytest.fixture(scope="module")
def app(emu: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    db = tmp_path_factory.mktemp("ui") / "conversations.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in KEYS and not k.endswith("_BASE_URL")}
    env.update(ANTHROPIC_BASE_URL=emu.url, ANTHROPIC_API_KEY="test-key-not-secret")
    process, url = serve(env, db)
    try:
        yield url, db
    finally:
        stop(process)


def proofs(db: Path, conversation: str) -> list[str]:
    with sqlite3.connect(db) as connection:
        (messages,) = connection.execute(
            "SELECT messages FROM conversations WHERE id = ?", (conversation,)
        ).fetchone()
    history = load_messages(messages)
    validate_history(history)
    return [
        block.signature
        for message in history
        for block in message.thinking
        if block.signature is not None
    ]


@needs_node
def test_use_chat_drives_a_multi_turn_chat_with_an_approval_and_a_regenerate(
    app: tuple[str, Path], emu: Emulator
) -> None:
    done = subprocess.run(
        ["node", str(UI / "use_chat.mjs"), f"{app[0]}/api/chat/ui", "node-chat"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["invalid"] == []  # every chunk is one the SDK's schema accepts
    messages = out["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3
    booking = next(p for p in messages[3]["parts"] if p["type"] == "tool-book_table")
    assert booking["state"] == "output-available"
    assert booking["approval"]["approved"] is True
    assert "booked a table for 8 in Paris" in booking["output"]
    assert messages[5]["id"] != out["regenerated"]  # the regenerated answer replaced the old one
    triggers = [r["trigger"] for r in out["requests"]]
    assert triggers == ["submit-message"] * 4 + ["regenerate-message"]
    assert all(b["status"] == 200 for b in out["bodies"])

    # The thinking of earlier turns went back to the emulator, which verified it (a bad
    # signature is a 400, and the chat would have failed).
    replayed = [
        block
        for request in emu.requests
        if request.api == "anthropic"
        for message in request.body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "thinking"
    ]
    assert replayed and all(block["signature"] for block in replayed)

    # No proof ever reached the client, and the client never sent one.
    stored = proofs(app[1], "node-chat")
    assert stored
    streamed = "".join(b["text"] for b in out["bodies"])
    sent = json.dumps(out["requests"])
    for proof in stored:
        assert proof not in streamed and proof not in sent
    assert "signature" not in streamed and "signature" not in sent


@needs_node
def test_the_same_conversation_over_ag_ui_validates_against_ag_ui_core(
    app: tuple[str, Path], emu: Emulator
) -> None:
    done = subprocess.run(
        ["node", str(UI / "ag_ui.mjs"), f"{app[0]}/api/ag-ui", "ag-ui-thread"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["problems"] == []  # every input and event valid, in the lifecycle's order
    assert out["interrupt"]["reason"] == "tool_approval"
    assert out["interrupt"]["message"] == "a table for 8 needs your approval"
    roles = [m["role"] for m in out["messages"]]
    assert roles.count("user") == 3 and "reasoning" in roles and "tool" in roles
    tools = [m["content"] for m in out["messages"] if m["role"] == "tool"]
    assert "booked a table for 8 in Paris" in tools
    kinds = {e["type"] for run in out["received"] for e in run["events"]}
    assert {"REASONING_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TOOL_CALL_ARGS"} <= kinds
    assert {"TOOL_CALL_RESULT", "STATE_SNAPSHOT", "RUN_FINISHED"} <= kinds

    stored = proofs(app[1], "ag-ui-thread")
    assert stored
    streamed = "".join(run["text"] for run in out["received"])
    sent = json.dumps(out["inputs"])
    for proof in stored:
        assert proof not in streamed and proof not in sent
    assert "REASONING_ENCRYPTED_VALUE" not in streamed and "encryptedValue" not in streamed
