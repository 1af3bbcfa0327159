"""Built-in tools, provider-neutral: when the brain uses one, and what it returns.

The emulator runs the built-in tools a request declares itself, deterministically and offline:
a web search returns three fake pages about the question's subjects, a fetch or URL context
reads the URLs in the question, code execution prints a computed result, a remote MCP server
answers from its tool's name, a file search finds one passage, image generation draws a 1x1
PNG. Each wire renders the uses in its own shape (and signs what its service encrypts).

Policy (:func:`plan_uses`): in the current tool loop (the turns after the last user
question), each declared built-in tool the question calls for is used once, in declared order,
before any function tool: a web search for a question about the web, news or anything current;
a fetch or URL context when the question holds a URL; code execution for a computation; an
MCP server's tool when the question names the server or the tool; a file search for files or
documents; image generation for an image. A remote MCP call that needs approval ends the turn
awaiting it; approved in the next request, it runs; denied, it does not.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

from .model import Conversation, SearchHit, ServerToolSpec, ServerUse, Turn

__all__ = ["ONE_PIXEL_PNG", "hits_for", "plan_uses", "slug"]

_URL_RE = re.compile(r"https?://[^\s\"'<>)]+")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
_WORD_RE = re.compile(r"[a-z0-9]+")
_SEARCH_WORDS = frozenset(
    {
        "search",
        "web",
        "news",
        "latest",
        "today",
        "todays",
        "current",
        "online",
        "internet",
        "recent",
    }
)
_CODE_WORDS = frozenset(
    {"calculate", "compute", "code", "python", "execute", "sum", "average", "multiply", "run"}
)
_FILE_WORDS = frozenset({"file", "files", "document", "documents", "docs", "manual", "handbook"})
_IMAGE_WORDS = frozenset({"image", "picture", "draw", "drawing", "illustration"})

ONE_PIXEL_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201c7e7e80d0000000049454e44ae426082"
    )
).decode("ascii")
"""A 1x1 PNG: what the emulator's image generation draws."""


def slug(text: str) -> str:
    """``text`` as a URL path segment."""
    return "-".join(_WORD_RE.findall(text.lower()))[:60] or "result"


def hits_for(query: str, subjects: Sequence[str]) -> tuple[SearchHit, ...]:
    """The three fake pages a search for ``query`` finds (one per subject, the first subject
    filling the rest)."""
    names = list(subjects) or ["the web"]
    hits: list[SearchHit] = []
    for n in range(3):
        subject = names[n] if n < len(names) else names[0]
        hits.append(
            SearchHit(
                url=f"https://news.example.com/{slug(subject)}/{n + 1}",
                title=f"{subject}: result {n + 1}",
                snippet=f"Result {n + 1} about {subject} for the search {query!r}, served by "
                "the thinkagent emulator.",
            )
        )
    return tuple(hits)


def _words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.lower()))


def _code(question: str) -> tuple[str, str]:
    """The code the model writes for ``question`` and what it prints: the sum of the
    question's numbers (or a greeting when it has none)."""
    numbers = _NUMBER_RE.findall(question)
    if numbers:
        code = f"print({' + '.join(numbers)})"
        total = float(sum(float(n) for n in numbers))
        output = f"{int(total) if total.is_integer() else total}\n"
    else:
        code = 'print("hello from the sandbox")'
        output = "hello from the sandbox\n"
    return code, output


def _mcp_tool(spec: ServerToolSpec, words: set[str]) -> str | None:
    tools = spec.tools or (f"{slug(spec.name).replace('-', '_')}_lookup",)
    if _words(spec.name) & words:
        return tools[0]
    for tool in tools:
        if _words(tool.replace("_", " ")) & words:
            return tool
    return None


def _use(
    spec: ServerToolSpec, question: str, words: set[str], subjects: Sequence[str]
) -> ServerUse | None:
    """The use of ``spec`` the question calls for, or None."""
    kind = spec.kind
    if kind == "web_search" and words & _SEARCH_WORDS:
        return ServerUse(kind, "web_search", {"query": question}, hits=hits_for(question, subjects))
    urls = _URL_RE.findall(question)
    if kind in ("web_fetch", "url_context") and urls:
        url = urls[0].rstrip(".,;")
        page = SearchHit(url, f"Page at {url}", f"The text of {url}, fetched by the emulator.")
        return ServerUse(kind, kind, {"url": url}, hits=(page,))
    if kind == "code_execution" and words & _CODE_WORDS:
        code, output = _code(question)
        return ServerUse(kind, "code_execution", {"code": code}, output=output)
    if kind == "file_search" and words & _FILE_WORDS:
        hit = SearchHit(
            "file-emulator-1", "notes.txt", f"A passage about {question!r} from your files."
        )
        return ServerUse(kind, "file_search", {"queries": [question]}, hits=(hit,))
    if kind == "image_generation" and words & _IMAGE_WORDS:
        return ServerUse(kind, "image_generation", {"prompt": question}, output=ONE_PIXEL_PNG)
    if kind == "mcp":
        tool = _mcp_tool(spec, words)
        if tool is not None:
            return ServerUse(
                kind,
                tool,
                {"query": question},
                output=f"{tool} answered {question!r}",
                server=spec.name,
                approval="pending" if spec.approval else "none",
            )
    return None


def plan_uses(
    conversation: Conversation, question: str, loop: Sequence[Turn], subjects: Sequence[str]
) -> list[ServerUse]:
    """The built-in tool uses of the next reply (see the module docstring): the tools the
    question calls for and the loop has not used yet, or the MCP call the user just approved.
    A use ``"pending"`` approval, when there is one, is the last."""
    if not conversation.server_tools:
        return []
    used = [u for t in loop if t.role == "assistant" for u in t.server_uses]
    decided = {
        call_id: approved for t in loop if t.role == "user" for call_id, approved in t.approvals
    }
    uses: list[ServerUse] = []
    for pending in (u for u in used if u.approval == "pending"):
        decision = decided.get(pending.id or "")
        if decision is True:
            uses.append(
                ServerUse(
                    pending.kind,
                    pending.name,
                    pending.arguments,
                    output=f"{pending.name} answered {question!r}",
                    server=pending.server,
                    approval="approved",
                    approval_id=pending.id,
                )
            )
    done = {(u.kind, u.server) for u in used} | {(u.kind, u.server) for u in uses}
    words = _words(question)
    for spec in conversation.server_tools:
        if (spec.kind, spec.name if spec.kind == "mcp" else "") in done or (
            spec.max_uses is not None and spec.max_uses < 1
        ):
            continue
        use = _use(spec, question, words, subjects)
        if use is None:
            continue
        uses.append(use)
        if use.approval == "pending":
            break
    return uses
