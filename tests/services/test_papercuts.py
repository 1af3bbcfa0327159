"""What a newcomer meets in the first hour: an adapter imported without its SDK names the extra
to install, the standalone emulator serves code that only knows the SDKs' own environment
variables, and the Gemini demo says why it is skipped on Python 3.10."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"
QUICK_START = '''
import asyncio
from thinkagent import Agent
from thinkagent.providers.anthropic import AnthropicModel, ClaudeThinking


def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}, 21 C"


async def main() -> None:
    model = AnthropicModel("claude-opus-4-7", thinking=ClaudeThinking.adaptive(display="summarized"))
    result = await Agent(model, tools=[get_weather]).run("What's the weather in Paris?")
    print(result.output)


asyncio.run(main())
'''


#: thinkagent's one wording for a missing extra, whatever needs it.
MISSING_EXTRA = re.compile(
    r"^ModuleNotFoundError: (?P<what>.+) needs the '(?P<extra>\w+)' extra \((?P<package>[\w, -]+)\): "
    r"pip install 'thinkagent\[(?P=extra)\]'"
)
IN_EMULATOR = "from thinkagent.emulator import Emulator\nwith Emulator() as emu:\n    "


@pytest.mark.parametrize(
    ("missing", "statement", "what", "extra"),
    [
        ("anthropic", "import thinkagent.providers.anthropic", "AnthropicModel", "anthropic"),
        (
            "anthropic",
            "from thinkagent.providers.claude import AnthropicModel",
            "AnthropicModel",
            "anthropic",
        ),
        ("botocore", "import thinkagent.providers.bedrock", "BedrockModel", "bedrock"),
        (
            "botocore",
            "from thinkagent.providers.claude import BedrockModel",
            "BedrockModel",
            "bedrock",
        ),
        (
            "boto3",
            "from thinkagent.providers.claude import BedrockModel\n"
            "BedrockModel('us.anthropic.claude-opus-4-7')",
            "BedrockModel",
            "bedrock",
        ),
        (
            "openai",
            "from thinkagent.providers.openai import OpenAIChatModel",
            "The OpenAI family (OpenAIChatModel, OpenAIResponsesModel)",
            "openai",
        ),
        (
            "openai",
            "import thinkagent.providers.openai_responses",
            "The OpenAI family (OpenAIChatModel, OpenAIResponsesModel)",
            "openai",
        ),
        ("google", "import thinkagent.providers.gemini", "GeminiModel", "gemini"),
        (
            "starlette",
            "from thinkagent.emulator import Emulator",
            "thinkagent.emulator",
            "emulator",
        ),
        ("opentelemetry", "import thinkagent.otel", "thinkagent.otel", "otel"),
        ("sse_starlette", "import thinkagent.sse", "thinkagent.sse", "sse"),
        ("dbos", "import thinkagent.durable", "thinkagent.durable", "dbos"),
        ("mcp", "import thinkagent.mcp", "thinkagent.mcp", "mcp"),
        # with only the `emulator` extra: each client factory names the SDK's extra
        (
            "anthropic",
            IN_EMULATOR + "emu.anthropic_client()",
            "Emulator.anthropic_client",
            "anthropic",
        ),
        ("boto3", IN_EMULATOR + "emu.bedrock_client()", "Emulator.bedrock_client", "bedrock"),
        ("google", IN_EMULATOR + "emu.gemini_client()", "Emulator.gemini_client", "gemini"),
        ("google", IN_EMULATOR + "emu.vertex_client()", "Emulator.vertex_client", "gemini"),
        ("openai", IN_EMULATOR + "emu.openai_client()", "Emulator.openai_client", "openai"),
        ("openai", IN_EMULATOR + "emu.azure_client()", "Emulator.azure_client", "openai"),
    ],
)
def test_a_missing_extra_is_named_in_one_wording_and_one_exception_type(
    missing: str, statement: str, what: str, extra: str
) -> None:
    # `sys.modules[name] = None` makes importing `name` fail as if it were not installed
    probe = f"import sys; sys.modules[{missing!r}] = None\n{statement}"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 1
    found = MISSING_EXTRA.match(done.stderr.strip().splitlines()[-1])
    assert found is not None, done.stderr[-800:]
    assert (found["what"], found["extra"]) == (what, extra)
    assert "During handling" not in done.stderr and "direct cause" not in done.stderr


def test_bedrocks_missing_extra_names_the_extra_and_boto3_not_botocore() -> None:
    probe = "import sys; sys.modules['botocore'] = None\nimport thinkagent.providers.bedrock"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
    )
    last = done.stderr.strip().splitlines()[-1]
    assert "'bedrock' extra (boto3)" in last and "botocore" not in last


def test_the_standalone_emulator_without_its_extra_helps_and_says_what_to_install() -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        probe = (
            "import runpy, sys; sys.modules['starlette'] = None\n"
            f"sys.argv = ['python -m thinkagent.emulator', *{list(args)!r}]\n"
            "runpy.run_module('thinkagent.emulator', run_name='__main__')"
        )
        return subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=False, timeout=60
        )

    helped = run("--help")
    assert helped.returncode == 0 and "--port" in helped.stdout and not helped.stderr
    served = run("--port", "0")
    assert served.returncode == 1 and "Traceback" not in served.stderr
    assert served.stderr.strip() == (
        "python -m thinkagent.emulator needs the 'emulator' extra (starlette, uvicorn): "
        "pip install 'thinkagent[emulator]'"
    )


def test_the_standalone_emulator_serves_code_that_knows_only_the_sdk_variables(
    tmp_path: Path,
) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "thinkagent.emulator", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = re.search(r"http://[\d.]+:\d+", server.stdout.readline())
        assert url is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_"))}
        env.update(ANTHROPIC_BASE_URL=url.group(0), ANTHROPIC_API_KEY="any-key")
        script = tmp_path / "quick_start.py"
        script.write_text(QUICK_START, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(script)],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    assert "sunny in Paris, 21 C" in done.stdout


def test_the_gemini_demo_is_skipped_with_a_reason_on_python_3_10() -> None:
    probe = (
        "import runpy, sys\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        "import _demo  # its imports need the real version; the script's check sees 3.10\n"
        "sys.version_info = (3, 10, 14, 'final', 0)\n"
        f"runpy.run_path({str(EXAMPLES / 'gemini_thinking.py')!r}, run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "Skipping the Gemini demo: it needs google-genai 3, which installs on Python 3.11"
    )


ROOT = Path(__file__).parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_names_a_missing_interpreter_as_missing_and_an_old_one_as_old(tmp_path: Path) -> None:
    missing = subprocess.run(
        ["make", "-C", str(ROOT), "test", f"PYTHON={tmp_path / 'python3.99'}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert missing.returncode != 0
    assert f"No Python at PYTHON={tmp_path / 'python3.99'}" in missing.stdout
    old = tmp_path / "python"  # an interpreter that says it is 3.9
    old.write_text(
        "#!/bin/sh\n"
        'case "$*" in *version_info*) exit 1;; -V) echo "Python 3.9.18"; exit 0;; esac\n'
        "exit 1\n",
        encoding="utf-8",
    )
    old.chmod(0o755)
    too_old = subprocess.run(
        ["make", "-C", str(ROOT), "test", f"PYTHON={old}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert too_old.returncode != 0
    assert "thinkagent needs Python 3.10 or newer" in too_old.stdout
    assert "is Python 3.9.18" in too_old.stdout


def _project() -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_readme_installs_from_a_clone_or_the_git_url_in_the_metadata() -> None:
    urls = _project()["urls"]
    assert {"Homepage", "Repository", "Changelog", "Issues"} <= set(urls)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("## Install", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    assert f"git clone {urls['Repository']}" in install
    assert 'pip install -e ".[anthropic]"' in install
    assert f'pip install "thinkagent[anthropic] @ git+{urls["Repository"]}"' in install
    extras = set(_project()["optional-dependencies"]) - {"dev"}
    assert all(f"`{extra}`" in readme.split("## Install", 1)[1][:1200] for extra in extras)
