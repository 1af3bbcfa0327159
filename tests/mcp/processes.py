"""The test MCP server (`server.py`) as a process the tests start, kill and start again."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

SERVER = str(Path(__file__).with_name("server.py"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """`server.py http PORT` on a fixed port: `start()` again after `kill()` serves the same
    URL from a new process (which knows none of the old one's sessions)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> HttpServer:
        process = subprocess.Popen(
            [sys.executable, SERVER, "http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.process = process
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the MCP test server did not start") from None
                time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
