"""Realistic content: text whose length matches a message's declared tokens.

A framework trimmer counts tokens itself (LangChain's
``count_tokens_approximately``, a llama-index tokenizer, an autogen model
client).  So that it sees the size prunecheck declares, every rendered
message carries English-like filler text of :data:`CHARS_PER_TOKEN`
characters per declared token — the approximation OpenAI documents for
English text ("one token is roughly 4 characters") and the one LangChain's
approximate counter uses.  The filler is English words with a quarter of
code-like tokens (``user_id,``, ``x=1;``), so that a real BPE tokenizer
(tiktoken's ``cl100k_base``, llama-index's default) also counts about 4
characters per token: measured 4.0 on 80,000 characters.  A message opens
with its short model text (the
tool call, the file and version it read) so that a similarity heuristic
still sees it, then filler; tool calls keep realistic names and JSON
arguments (``read_file`` with ``{"path": "src/app.py"}``).

Rendering is O(characters) once per message: :func:`sized_text` is cached
per ``(message id, tokens, head)``, and the filler is a slice of one
pre-built corpus, so a budget check over a large context costs a lookup
per message, not a rebuild of megabytes of text.

>>> text = sized_text("m7", 50, "read_file src/app.py @v1")
>>> text.startswith("read_file src/app.py @v1"), len(text) == 50 * CHARS_PER_TOKEN
(True, True)
>>> approx_tokens(text)
50
"""

from __future__ import annotations

import random
import zlib
from functools import lru_cache

__all__ = ["CHARS_PER_TOKEN", "approx_tokens", "sized_text"]

#: Characters per token of the approximation (English-like words).
CHARS_PER_TOKEN = 4

_WORDS = """
the function returns a list of records that match the query and the caller then checks
each value against the schema before it writes the result to the cache configuration
file module import error handler request response token context message user agent model
tool call result batch stream chunk budget policy test server client database table
index column row field value string number object array null true false path line source
build deploy version update change review
""".split()  # noqa: SIM905 (a word list reads better as text)
#: Code-like tokens mixed into a quarter of the words: plain English runs at
#: about 5.7 characters per cl100k token; this mix brings tiktoken's count to
#: 4.0 characters per token, matching the approximation.
_CODE = (
    "user_id,",
    "42",
    "(x)",
    "foo.py",
    "0.5",
    "id=7",
    "{ok}",
    "i++",
    "[a]",
    "v2",
    "err:",
    "->",
    "x=1;",
    "2024",
    "cfg.yml",
)
_CODE_SHARE = 0.25
_CORPUS_CHARS = 1 << 18  # 256 KiB of filler, sliced at an offset per message


@lru_cache(maxsize=1)
def _corpus() -> str:
    rng = random.Random(20240601)
    parts: list[str] = []
    size = 0
    while size < _CORPUS_CHARS:
        sentence = " ".join(
            rng.choice(_CODE) if rng.random() < _CODE_SHARE else rng.choice(_WORDS)
            for _ in range(rng.randint(6, 16))
        )
        sentence = sentence[0].upper() + sentence[1:] + ". "
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)


def _filler(key: str, chars: int) -> str:
    corpus = _corpus()
    if chars <= 0:
        return ""
    start = zlib.crc32(key.encode()) % (len(corpus) // 2)
    start = corpus.find(" ", start) + 1  # begin on a word
    out = corpus[start : start + chars]
    while len(out) < chars:  # larger than the corpus: wrap around
        out += corpus[: chars - len(out)]
    return out


@lru_cache(maxsize=8192)
def sized_text(key: str, tokens: int, head: str = "") -> str:
    """``head`` followed by filler, :data:`CHARS_PER_TOKEN` × ``tokens``
    characters in all (just ``head`` if that is already longer).

    Deterministic in its arguments; cached (the same message renders to the
    very same string object at every budget check).
    """
    want = max(0, tokens) * CHARS_PER_TOKEN
    if len(head) >= want:
        return head
    if not head:
        return _filler(key, want)
    return head + " " + _filler(key, want - len(head) - 1)


def approx_tokens(text: str) -> int:
    """Tokens of ``text`` under the approximation: characters / 4, rounded."""
    return (len(text) + CHARS_PER_TOKEN // 2) // CHARS_PER_TOKEN
