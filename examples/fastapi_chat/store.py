"""Conversations in SQLite: each one's whole history as `dump_messages` JSON, proofs included,
so the next turn replays every thinking block exactly as the provider sent it.

Every row has a version: `load` returns it, `save` writes only if the row is still at that
version (a compare-and-set), so two turns of one conversation that ran at the same time (two
requests, two server processes) cannot both be stored: the later save raises `StaleConversation`
instead of overwriting the earlier one. A `useChat` conversation also keeps its `UIChat` (which
UI message holds which messages), an AG-UI thread its `AGUIThread`, in the same row.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from thinkagent import Message, dump_messages, load_messages, repair
from thinkagent.ag_ui import AGUIThread
from thinkagent.sse import UIChat


class StaleConversation(Exception):
    """The conversation changed since it was loaded: another turn was stored first."""


@dataclass(frozen=True)
class Stored:
    """A conversation as loaded: its history, its `useChat` or AG-UI state (None for another
    client's conversation) and its version (0: not stored yet)."""

    messages: list[Message]
    ui: UIChat | None
    version: int
    thread: AGUIThread | None = None


class Conversations:
    """A table of conversations: `load` and `save` run in a worker thread (sqlite3 blocks)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS conversations ("
                " id TEXT PRIMARY KEY, messages TEXT NOT NULL, updated REAL NOT NULL)"
            )
            columns = {row[1] for row in db.execute("PRAGMA table_info(conversations)")}
            if "version" not in columns:  # a database from before versions: every row at 1
                db.execute(
                    "ALTER TABLE conversations ADD COLUMN version INTEGER NOT NULL DEFAULT 1"
                )
            if "ui" not in columns:
                db.execute("ALTER TABLE conversations ADD COLUMN ui TEXT")
            if "ag_ui" not in columns:
                db.execute("ALTER TABLE conversations ADD COLUMN ag_ui TEXT")

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection for one operation: committed, then closed."""
        db = sqlite3.connect(self.path, timeout=30)
        try:
            db.execute("PRAGMA journal_mode=WAL")  # readers do not wait for a writer
            with db:
                yield db
        finally:
            db.close()

    async def load(self, conversation_id: str) -> Stored:
        """The conversation (empty, at version 0, for a new one)."""
        return await asyncio.to_thread(self._load, conversation_id)

    def _load(self, conversation_id: str) -> Stored:
        with self._connect() as db:
            row = db.execute(
                "SELECT messages, ui, version, ag_ui FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
        if row is None:
            return Stored([], None, 0)
        ui = UIChat.load(row[1]) if row[1] else None
        thread = AGUIThread.load(row[3]) if row[3] else None
        return Stored(load_messages(row[0]), ui, int(row[2]), thread)

    async def save(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        *,
        version: int,
        ui: UIChat | AGUIThread | None = None,
    ) -> int:
        """Store the history if the conversation is still at `version` (as loaded); returns
        the new version. `repair` answers calls a cut-off run left without results, so what is
        stored is always a history the next turn can continue (a `UIChat` or an `AGUIThread`
        is stored as it is: its commit already did that, and keeps calls that wait for
        approval)."""
        data = dump_messages(messages if ui is not None else repair(messages))
        chat = ui.dump() if isinstance(ui, UIChat) else None
        thread = ui.dump() if isinstance(ui, AGUIThread) else None
        return await asyncio.to_thread(self._save, conversation_id, data, chat, thread, version)

    def _save(
        self, conversation_id: str, data: str, ui: str | None, thread: str | None, version: int
    ) -> int:
        with self._connect() as db:
            if version == 0:
                try:
                    db.execute(
                        "INSERT INTO conversations (id, messages, updated, version, ui, ag_ui)"
                        " VALUES (?, ?, ?, 1, ?, ?)",
                        (conversation_id, data, time.time(), ui, thread),
                    )
                except sqlite3.IntegrityError:
                    raise StaleConversation(conversation_id) from None
                return 1
            updated = db.execute(
                "UPDATE conversations SET messages = ?, ui = ?, ag_ui = ?, updated = ?,"
                " version = version + 1 WHERE id = ? AND version = ?",
                (data, ui, thread, time.time(), conversation_id, version),
            )
            if updated.rowcount != 1:
                raise StaleConversation(conversation_id)
            return version + 1

    async def ids(self) -> list[str]:
        """Every conversation, the most recent first."""

        def query() -> list[str]:
            with self._connect() as db:
                rows = db.execute("SELECT id FROM conversations ORDER BY updated DESC").fetchall()
            return [row[0] for row in rows]

        return await asyncio.to_thread(query)
