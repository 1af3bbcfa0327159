"""Local, protocol-faithful stand-ins for the reasoning wire APIs, for tests, demos and
benchmarks without API keys.

>>> from thinkagent.emulator import Emulator
>>> with Emulator() as emu:               # doctest: +SKIP
...     client = emu.anthropic_client()   # an anthropic.AsyncAnthropic pointed at it

See ``docs/emulator.md``. The emulator imports nothing from the rest of thinkagent: it is
an independent oracle, judged by the official SDKs and the real recordings, with a
vocabulary of its own (:mod:`.model`).

Layout: the server and the per-request framework (:mod:`.server`, :mod:`.framework`), the
neutral vocabulary and the brain (:mod:`.model`, :mod:`.brain`), the shared services
(:mod:`.encoding`, :mod:`.eventstream`, :mod:`.signing`, :mod:`.scripting`,
:mod:`.faults`, :mod:`.recording`), and a folder per family of rules (:mod:`.claude`,
:mod:`.gemini`, :mod:`.openai`), each with its ``rules`` module and the wires that serve
it, listed in :mod:`.wires`.
"""

try:
    from .faults import Fault
    from .model import Reply, ReplyUsage, ToolCallSpec
    from .recording import RecordedRequest
    from .server import Emulator
except ModuleNotFoundError as exc:  # its server's packages: say which extra brings them
    package = (exc.name or "").partition(".")[0]
    if package not in ("starlette", "uvicorn", "httptools", "anyio"):
        raise
    raise ModuleNotFoundError(
        f"thinkagent.emulator needs the {package!r} package: pip install 'thinkagent[emulator]'",
        name=exc.name,
    ) from None

__all__ = ["Emulator", "Fault", "RecordedRequest", "Reply", "ReplyUsage", "ToolCallSpec"]
