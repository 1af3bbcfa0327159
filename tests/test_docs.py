"""Every Python block in README.md and docs/ runs, as a script, against the emulator; or it is
visibly marked as a fragment (a first line `# fragment: ...`: a part of a larger example, a
signature listing), for the reader to see it will not run alone.

The blocks run the way a reader runs them: in a scratch folder, with no API keys, the vendor
SDKs pointed at a standalone emulator through their own environment variables
(`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`,
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`...), as `docs/services.md` describes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from thinkagent.emulator import Emulator

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)(.*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    code: str
    fragment: bool

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def python_blocks(path: Path) -> Iterator[Block]:
    """The ```python blocks of a Markdown file, with whether each is marked a fragment (its
    first line a `# fragment` comment, the word in the fence's info, or an HTML comment saying
    so on the line before the fence)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, language, info = match.groups()
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if language.lower() not in ("python", "py", "python3"):
            continue
        first = next((line.strip() for line in body if line.strip()), "")
        before = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        fragment = (
            "fragment" in info.lower()
            or (first.startswith("#") and "fragment" in first.lower())
            or ("<!--" in before and "fragment" in before.lower())
        )
        yield Block(path, start + 1, "\n".join(body) + "\n", fragment)


BLOCKS = [block for path in DOCUMENTS for block in python_blocks(path)]


@pytest.fixture(scope="module")
def sdk_environment() -> Iterator[dict[str, str]]:
    """The environment a reader has: no keys, the SDKs' base URLs on a running emulator."""
    with Emulator() as emulator:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith(("_API_KEY", "_BASE_URL", "_AUTH_TOKEN")) and not k.startswith("AWS_")
        }
        env.update(
            ANTHROPIC_BASE_URL=emulator.url,
            ANTHROPIC_API_KEY="docs-key",
            OPENAI_BASE_URL=emulator.url + "/v1",
            OPENAI_API_KEY="docs-key",
            DEEPSEEK_BASE_URL=emulator.url,
            DEEPSEEK_API_KEY="docs-key",
            GOOGLE_GEMINI_BASE_URL=emulator.url,
            GEMINI_API_KEY="docs-key",
            AWS_ENDPOINT_URL_BEDROCK_RUNTIME=emulator.url,
            AWS_ACCESS_KEY_ID="AKIDDOCS",
            AWS_SECRET_ACCESS_KEY="docs-secret",
            AWS_DEFAULT_REGION="us-east-1",
        )
        yield env


def test_the_documents_have_python_blocks() -> None:
    assert [b for b in BLOCKS if b.path.name == "README.md"]
    assert len({b.path for b in BLOCKS}) > 3


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_every_python_block_runs_or_is_a_marked_fragment(
    block: Block, sdk_environment: dict[str, str], tmp_path: Path
) -> None:
    if block.fragment:
        return  # a reader is told it does not run alone (some are signature listings)
    script = tmp_path / "block.py"
    script.write_text(block.code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=sdk_environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (
        f"{block.id} does not run as written (mark it `# fragment: ...` if it is not meant "
        f"to):\n{done.stderr[-2000:]}"
    )
