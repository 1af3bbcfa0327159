"""Conversations in SQLite: each one's whole history as `dump_messages` JSON, proofs included,
so the next turn replays every thinking block exactly as the provider sent it."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from thinkagent import Message, dump_messages, load_messages, repair


class Conversations:
    """A table of conversations: `load` and `save` run in a worker thread (sqlite3 blocks)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS conversations ("
                " id TEXT PRIMARY KEY, messages TEXT NOT NULL, updated REAL NOT NULL)"
            )

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

    async def load(self, conversation_id: str) -> list[Message]:
        """The conversation's history (empty for a new one)."""
        return await asyncio.to_thread(self._load, conversation_id)

    def _load(self, conversation_id: str) -> list[Message]:
        with self._connect() as db:
            row = db.execute(
                "SELECT messages FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
        return load_messages(row[0]) if row else []

    async def save(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Store the history. `repair` answers calls a cut-off run left without results, so
        what is stored is always a history the next turn can continue."""
        data = dump_messages(repair(messages))
        await asyncio.to_thread(self._save, conversation_id, data)

    def _save(self, conversation_id: str, data: str) -> None:
        with self._connect() as db:
            db.execute(
                "INSERT INTO conversations (id, messages, updated) VALUES (?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET messages = excluded.messages,"
                " updated = excluded.updated",
                (conversation_id, data, time.time()),
            )

    async def ids(self) -> list[str]:
        """Every conversation, the most recent first."""

        def query() -> list[str]:
            with self._connect() as db:
                rows = db.execute("SELECT id FROM conversations ORDER BY updated DESC").fetchall()
            return [row[0] for row in rows]

        return await asyncio.to_thread(query)
