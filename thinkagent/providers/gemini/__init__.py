"""The Gemini family (Gemini API and Vertex AI, through `google-genai`): `GeminiModel`
(`generateContent`), `GeminiInteractionsModel` (the Interactions API), their thinking
configuration and replay policies.

```python
from thinkagent.providers.gemini import GeminiModel, GeminiThinking

model = GeminiModel("gemini-3-pro-preview", thinking=GeminiThinking(level="high"))
```

The adapters are in `generate.py` and `interactions.py`; the rules they follow (thinking checks, which signatures a model
accepts, signature encoding, finish reasons) in `_rules.py`. See `docs/providers/gemini.md`.
"""

from ..._extras import needs

with needs("gemini", "GeminiModel"):
    from ._rules import (
        SKIP_SIGNATURE,
        GeminiThinking,
        MissingSignature,
        ReplayThoughts,
        ThinkingLevel,
    )
    from .generate import DEFAULT_MAX_RETRIES, GeminiModel
    from .interactions import GeminiInteractionsModel

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "SKIP_SIGNATURE",
    "GeminiInteractionsModel",
    "GeminiModel",
    "GeminiThinking",
    "MissingSignature",
    "ReplayThoughts",
    "ThinkingLevel",
]
