"""Deterministic filler prose for generated documents: distinct per seed, sentence-shaped."""

from __future__ import annotations

import random

__all__ = ["PARAGRAPH_CHARS", "paragraphs"]

_SUBJECTS = ["The turbine", "Our survey", "The harbour board", "Each sensor", "The committee"]
_VERBS = ["reported", "measured", "approved", "replaced", "documented", "reviewed"]
_OBJECTS = ["the northern bridge", "a cooling loop", "the grain silo", "four pumps", "the archive"]
PARAGRAPH_CHARS = 400  # about four sentences, so pages hold several paragraphs

_TAILS = ["in 1998", "after the storm", "for the third time", "without delay", "at night"]


def _sentence(rng: random.Random, tag: str) -> str:
    parts = (rng.choice(_SUBJECTS), rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_TAILS))
    return f"{parts[0]} {parts[1]} {parts[2]} {parts[3]} (ref {tag}-{rng.randrange(10**6)})."


def paragraphs(seed: str, chars: int, paragraph_chars: int = PARAGRAPH_CHARS) -> str:
    """About `chars` characters of prose in paragraphs of about `paragraph_chars`."""
    rng = random.Random(seed)
    blocks: list[str] = []
    total = 0
    while total < chars:
        sentences: list[str] = []
        size = 0
        while size < paragraph_chars:
            sentence = _sentence(rng, seed)
            sentences.append(sentence)
            size += len(sentence) + 1
        blocks.append(" ".join(sentences))
        total += size + 2
    return "\n\n".join(blocks)
