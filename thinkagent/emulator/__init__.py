"""Local, protocol-faithful stand-ins for the reasoning wire APIs, for tests, demos and
benchmarks without API keys.

>>> from thinkagent.emulator import Emulator
>>> with Emulator() as emu:               # doctest: +SKIP
...     client = emu.anthropic_client()   # an anthropic.AsyncAnthropic pointed at it

See ``docs/emulator.md``. The emulator imports nothing from the rest of thinkagent: it is
an independent oracle, judged by the official SDKs and the real recordings.
"""

from .faults import Fault
from .model import Reply, ReplyUsage, ToolCallSpec
from .recording import RecordedRequest
from .server import Emulator

__all__ = ["Emulator", "Fault", "RecordedRequest", "Reply", "ReplyUsage", "ToolCallSpec"]
