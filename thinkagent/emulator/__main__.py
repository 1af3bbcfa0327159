"""``python -m thinkagent.emulator [--host H] [--port N] [--secret S]``: serve every wire
API in the foreground, print each API's base URL, stop on Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from ._extras import needs
from .signing import DEFAULT_SECRET


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m thinkagent.emulator",
        description="Serve the thinkagent emulator (Anthropic, Bedrock, Gemini, Vertex, OpenAI, Azure wire APIs).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default 0: a free port)")
    parser.add_argument(
        "--secret", default=None, help="signing secret (default: the fixed built-in secret)"
    )
    args = parser.parse_args(argv)
    try:
        with needs("emulator", "python -m thinkagent.emulator"):
            from .server import Emulator
    except ModuleNotFoundError as missing:
        print(missing, file=sys.stderr)  # the one line that says what to install
        return 1

    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    emulator = Emulator(host=args.host, port=args.port, secret=args.secret or DEFAULT_SECRET)
    try:
        emulator.start()
        print(f"thinkagent emulator listening on {emulator.url}", flush=True)
        for name, url in emulator.endpoints.items():
            print(f"  {name:<10} {url}", flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        emulator.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("thinkagent emulator stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
