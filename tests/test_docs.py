"""Every Python block of README.md and docs/ runs the way its page presents it, on every
supported Python, and prints what the page says it prints.

The blocks run as a reader runs them: one page's blocks in order in one scratch folder (what
one block leaves there, a SQLite file, the next finds), with no API keys, the vendor SDKs
pointed at a standalone emulator through their own environment variables
(`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`,
`AWS_ENDPOINT_URL_BEDROCK_RUNTIME`...), as `docs/services.md` describes. A block is one of:

- **a script**: runs alone, `python block.py`. A script whose first line names a file
  (`# server.py: ...`) is one the page asks you to save: the page's later blocks run with it
  saved beside them.
- **a fragment**, first line `# fragment: ...` naming the block it continues: the README's
  "quick start" or "the block above" (the page's previous Python block). It runs after that
  block's code, without its closing `asyncio.run(...)`, at the top level with `await` allowed:
  what the page's "inside an async function" means.
- **a signature listing**, first line `# signature: thinkagent.module.Name`: its parameters are
  the real ones, in order, with their kinds and defaults.
- **an outline**, first line `# outline: ...`: code to adapt, not to run (a new wire API): it
  compiles and every name it imports exists.

Where a block shows its output, as `#>` lines, the output must match: `...` stands for any
text within a line, and a line `#> ...` for any number of lines. Blocks that use Gemini run
where google-genai 3 installs (Python 3.11+), as the page says."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from thinkagent.emulator import Emulator

from .conftest import HAS_GENAI

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^(\s*)(`{3,})\s*([\w+-]*)(.*)$")
_MARK = re.compile(r"^#\s*(fragment|signature|outline)\s*:\s*(.*)$", re.IGNORECASE)
_FILE = re.compile(r"^#\s*([\w-]+\.py)\s*:")
_OUTPUT = re.compile(r"^\s*#>(?: (.*))?$")

# Runs a completed fragment the way code inside an async function runs: top-level `await`,
# `async with` and `async for` allowed, in a real `__main__` module.
RUNNER = """\
import ast, asyncio, sys, types
path = sys.argv[1]
code = compile(open(path, encoding="utf-8").read(), path, "exec",
               flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
module = types.ModuleType("__main__")
module.__file__ = path
sys.modules["__main__"] = module
result = eval(code, module.__dict__)
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    code: str
    kind: str  # "script", "fragment", "signature" or "outline"
    says: str  # what the marking line says after the colon
    saved_as: str | None = None  # the file name a script asks to be saved as

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def expected(self) -> list[str]:
        """The output the block shows, one `#>` line each."""
        found = (_OUTPUT.match(line) for line in self.code.splitlines())
        return [match.group(1) or "" for match in found if match is not None]


def python_blocks(path: Path) -> Iterator[Block]:
    """The ```python blocks of a Markdown file, each with its kind (from its first line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        indent, fence, language, _ = match.groups()
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
        marked = _MARK.match(first)
        kind, says = (marked[1].lower(), marked[2].strip()) if marked else ("script", "")
        named = _FILE.match(first)
        saved_as = named[1] if named and kind == "script" else None
        yield Block(path, start + 1, "\n".join(body) + "\n", kind, says, saved_as)


BLOCKS = [block for path in DOCUMENTS for block in python_blocks(path)]


def continued(block: Block) -> Block:
    """The block a fragment continues."""
    if "quick start" in block.says:
        return next(b for b in BLOCKS if b.path.name == "README.md" and b.kind == "script")
    if "the block above" in block.says:
        page = [b for b in BLOCKS if b.path == block.path and b.kind in ("script", "fragment")]
        earlier = [b for b in page if b.line < block.line]
        assert earlier, f"{block.id} continues the block above, but there is none"
        return earlier[-1]
    raise AssertionError(
        f"{block.id}: a fragment names the block it continues ('the quick start' or 'the "
        f"block above'), so that a reader (and this test) can complete it: {block.says!r}"
    )


def definitions(block: Block) -> str:
    """A block's code without its top-level `asyncio.run(...)`: what a later block builds on."""
    code = completed(block)
    lines = code.splitlines()
    for node in reversed(ast.parse(code).body):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "asyncio.run"
        ):
            del lines[node.lineno - 1 : node.end_lineno]
    return "\n".join(lines) + "\n"


def completed(block: Block) -> str:
    """The code that runs for `block`: a fragment after the block it continues."""
    if block.kind != "fragment":
        return block.code
    return definitions(continued(block)) + "\n" + block.code


def output_pattern(expected: list[str], *, anything_before: bool) -> re.Pattern[str]:
    pieces = [r"(?:.*\n)*?"] if anything_before else []
    for line in expected:
        if line.strip() == "...":
            pieces.append(r"(?:.*\n)*?")
        else:
            pieces.append(".*?".join(re.escape(p) for p in line.split("...")) + r"[ \t]*\n")
    return re.compile("".join(pieces))


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
            HOSTNAME="docs-worker-1",
            PYTHONDONTWRITEBYTECODE="1",
        )
        yield env


@pytest.fixture(scope="module")
def page_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """One scratch folder per page, shared by its blocks in order."""
    return {path: tmp_path_factory.mktemp(path.stem) for path in DOCUMENTS}


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """A private PostgreSQL server, for the page that shows workers on Postgres."""
    script = ROOT / "tests" / "durable" / "postgres.sh"
    with __import__("socket").socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = subprocess.run(
        ["bash", str(script), "start", str(port)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if started.returncode == 3:
        pytest.skip(f"no PostgreSQL server to run the block on: {started.stderr.strip()}")
    assert started.returncode == 0, started.stderr
    url, directory = started.stdout.split()
    try:
        yield url
    finally:
        subprocess.run(["bash", str(script), "stop", directory], timeout=60, check=False)


def test_the_documents_have_python_blocks() -> None:
    assert [b for b in BLOCKS if b.path.name == "README.md"]
    assert len({b.path for b in BLOCKS}) > 3
    assert BLOCKS[0].path.name == "README.md"


def test_the_quick_start_is_the_readmes_first_script() -> None:
    quick = continued(next(b for b in BLOCKS if b.kind == "fragment" and "quick start" in b.says))
    assert "def get_weather" in quick.code and "agent = Agent(" in quick.code


RUNNABLE = [b for b in BLOCKS if b.kind in ("script", "fragment")]

# DBOS creates its SQLite tables with `unixepoch('subsec')` on Python 3.12+, which SQLite has
# from 3.42 on: with an older SQLite every launch fails (`NOT NULL constraint failed:
# application_versions.version_timestamp`), as docs/durable.md says.
DBOS_ON_SQLITE = sys.version_info < (3, 12) or sqlite3.sqlite_version_info >= (3, 42)
DBOS_ON_SQLITE_REASON = (
    f"DBOS on SQLite needs SQLite 3.42+ on Python 3.12+; this Python has {sqlite3.sqlite_version}"
)


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.id for b in RUNNABLE])
def test_every_block_runs_as_presented_and_prints_what_it_shows(
    block: Block,
    sdk_environment: dict[str, str],
    page_folders: dict[Path, Path],
    request: pytest.FixtureRequest,
) -> None:
    code = completed(block)
    if not HAS_GENAI and "thinkagent.providers.gemini" in code:
        pytest.skip("a Gemini block: google-genai 3 installs on Python 3.11 or newer")
    if "sqlite:///" in code and "DBOS.launch()" in code and not DBOS_ON_SQLITE:
        pytest.skip(DBOS_ON_SQLITE_REASON)
    env = dict(sdk_environment)
    if "DATABASE_URL" in code:
        env["DATABASE_URL"] = request.getfixturevalue("postgres_url")
    folder = page_folders[block.path]
    for earlier in BLOCKS:
        if earlier.path == block.path and earlier.line < block.line and earlier.saved_as:
            (folder / earlier.saved_as).write_text(earlier.code, encoding="utf-8")
    script = folder / "block.py"
    script.write_text(code, encoding="utf-8")
    command = [sys.executable, str(script)]
    if block.kind == "fragment":
        command = [sys.executable, "-c", RUNNER, str(script)]
    done = subprocess.run(
        command,
        cwd=folder,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, f"{block.id} does not run as presented:\n{done.stderr[-3000:]}"
    if block.expected:
        pattern = output_pattern(block.expected, anything_before=block.kind == "fragment")
        shown = "\n".join(f"#> {line}" for line in block.expected)
        assert pattern.fullmatch(done.stdout), (
            f"{block.id} prints something else than it shows:\n{shown}\n--- it printed:\n"
            f"{done.stdout[-3000:]}"
        )


SIGNATURES = [b for b in BLOCKS if b.kind == "signature"]


@pytest.mark.parametrize("block", SIGNATURES, ids=[b.id for b in SIGNATURES])
def test_every_signature_listing_is_the_real_signature(block: Block) -> None:
    module_name, _, name = block.says.rpartition(".")
    if module_name.startswith("thinkagent.providers.gemini") and not HAS_GENAI:
        pytest.skip("GeminiModel's signature: google-genai 3 installs on Python 3.11 or newer")
    target = getattr(importlib.import_module(module_name), name)
    call = re.sub(r"^#.*\n", "", block.code, count=1).strip()
    assert call.startswith(f"{name}("), f"{block.id} lists {name}(...) after its first line"
    listed = ast.parse(f"def {call}: ...").body[0]
    assert isinstance(listed, ast.FunctionDef)
    real = [p for p in inspect.signature(target).parameters.values() if p.name != "self"]
    shown_args = listed.args
    positional = [a.arg for a in shown_args.args]
    keyword = [a.arg for a in shown_args.kwonlyargs]
    assert positional == [p.name for p in real if p.kind is not inspect.Parameter.KEYWORD_ONLY], (
        f"{block.id}: positional parameters differ"
    )
    assert keyword == [p.name for p in real if p.kind is inspect.Parameter.KEYWORD_ONLY], (
        f"{block.id}: keyword-only parameters differ"
    )
    defaults = dict(
        zip(
            positional[len(positional) - len(shown_args.defaults) :],
            shown_args.defaults,
            strict=True,
        )
    )
    defaults.update(
        {a: d for a, d in zip(keyword, shown_args.kw_defaults, strict=True) if d is not None}
    )
    for parameter in real:
        shown = defaults.get(parameter.name)
        if parameter.default is inspect.Parameter.empty:
            assert shown is None, f"{block.id}: {parameter.name} has no default"
        else:
            assert shown is not None, f"{block.id}: {parameter.name}'s default is not shown"
            assert ast.literal_eval(shown) == parameter.default, (
                f"{block.id}: {parameter.name}={ast.unparse(shown)}, really {parameter.default!r}"
            )


OUTLINES = [b for b in BLOCKS if b.kind == "outline"]


@pytest.mark.parametrize("block", OUTLINES, ids=[b.id for b in OUTLINES])
def test_every_outline_compiles_and_imports_names_that_exist(block: Block) -> None:
    tree = ast.parse(block.code)
    package = re.search(r"#\s*(thinkagent/[\w/]+)\.py", block.code)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            assert package is not None, f"{block.id}: a relative import needs the file it is in"
            parts = package[1].split("/")[: -node.level]
            module = ".".join([*parts, *([node.module] if node.module else [])])
        else:
            module = node.module or ""
        if not module.startswith("thinkagent"):
            continue
        imported = importlib.import_module(module)
        for alias in node.names:
            assert hasattr(imported, alias.name), f"{block.id}: {module} has no {alias.name}"


def test_no_block_is_left_unchecked() -> None:
    assert {b.kind for b in BLOCKS} <= {"script", "fragment", "signature", "outline"}
    for block in BLOCKS:
        if block.kind == "fragment":
            continued(block)  # names the block it continues
