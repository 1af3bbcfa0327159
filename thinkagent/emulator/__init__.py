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

from typing import TYPE_CHECKING, Any

from .faults import Fault
from .model import Reply, ReplyUsage, ToolCallSpec
from .recording import RecordedRequest

if TYPE_CHECKING:
    from .server import Emulator

__all__ = ["Emulator", "Fault", "RecordedRequest", "Reply", "ReplyUsage", "ToolCallSpec"]


def __getattr__(name: str) -> Any:
    # The server is imported on first use, so the package (and `python -m thinkagent.emulator
    # --help`) imports without the `emulator` extra, and its absence is named when it matters.
    if name != "Emulator":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._extras import needs

    with needs("emulator", "thinkagent.emulator"):
        from .server import Emulator

    globals()["Emulator"] = Emulator
    return Emulator
