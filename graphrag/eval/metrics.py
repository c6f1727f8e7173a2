"""The figures of a run, from its per-question results: pure functions.

Retrieval: R@k is the share of a question's gold documents among its first k ranked documents
(a document ranked twice wastes a rank, as `bench/retrieval_quality.py` scores), MRR is 1 / the
rank of the first gold document, All@k the share of questions with every gold document in the
first k. Answers: exact match and token F1 after normalisation (lower case, no punctuation nor
articles), and whether the answer contains the gold answer or an alias. Citation precision is
the share of the passages an answer cites that come from gold documents.
"""

from __future__ import annotations

import statistics
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "QuestionScore",
    "contains_answer",
    "exact_match",
    "first_gold_rank",
    "percentile",
    "recall_at",
    "summarise",
    "token_f1",
]

_ARTICLES = frozenset({"a", "an", "the"})
_DROP = str.maketrans({c: " " for c in string.punctuation})
_P95 = 95
_PERCENT = 100


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold documents among the first `k` ranked ones (0 without gold)."""
    wanted = set(gold)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def first_gold_rank(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """The 1-based rank of the first gold document, None when none was ranked."""
    wanted = set(gold)
    return next((rank for rank, doc in enumerate(ranked, start=1) if doc in wanted), None)


def _words(text: str) -> list[str]:
    return [w for w in text.lower().translate(_DROP).split() if w not in _ARTICLES]


def exact_match(answer: str, gold: Sequence[str]) -> float:
    """1.0 when the normalised answer is one of the normalised gold answers."""
    said = _words(answer)
    return 1.0 if any(said == _words(g) for g in gold) else 0.0


def token_f1(answer: str, gold: Sequence[str]) -> float:
    """The best F1 of the answer's words against one gold answer's words."""
    said = _words(answer)
    best = 0.0
    for expected in gold:
        words = _words(expected)
        common = sum(min(said.count(w), words.count(w)) for w in set(said) & set(words))
        if common:
            precision, recall = common / len(said), common / len(words)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def contains_answer(answer: str, gold: Sequence[str]) -> float:
    """1.0 when the normalised answer holds a normalised gold answer as a run of words."""
    said = f" {' '.join(_words(answer))} "
    return 1.0 if any(f" {' '.join(_words(g))} " in said for g in gold if _words(g)) else 0.0


def percentile(values: Sequence[float], pct: int) -> float | None:
    """The `pct`th percentile (inclusive method), None without values."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=_PERCENT, method="inclusive")[pct - 1]


@dataclass(frozen=True)
class QuestionScore:
    """What one question of a run scored (None: not measured, e.g. no answer asked)."""

    recall: dict[int, float]  # empty: the question names no gold document
    reciprocal_rank: float | None
    all_found: float | None
    latency_ms: float
    llm_calls: int
    tokens: int | None
    exact_match: float | None = None
    token_f1: float | None = None
    contains_answer: float | None = None
    citation_precision: float | None = None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def summarise(
    scores: Sequence[QuestionScore], ks: Sequence[int], all_at: int
) -> dict[str, float | None]:
    """The metrics of a group of questions (every key present; None where not measured)."""
    figures: dict[str, float | None] = {
        f"r_at_{k}": _mean([s.recall.get(k) for s in scores]) for k in ks
    }
    latencies = [s.latency_ms for s in scores]
    figures |= {
        "mrr": _mean([s.reciprocal_rank for s in scores]),
        f"all_at_{all_at}": _mean([s.all_found for s in scores]),
        "exact_match": _mean([s.exact_match for s in scores]),
        "token_f1": _mean([s.token_f1 for s in scores]),
        "contains_answer": _mean([s.contains_answer for s in scores]),
        "citation_precision": _mean([s.citation_precision for s in scores]),
        "latency_p50_ms": percentile(sorted(latencies), 50),
        "latency_p95_ms": percentile(sorted(latencies), _P95),
        "llm_calls_per_question": _mean([float(s.llm_calls) for s in scores]),
        "tokens_per_question": _mean(
            [None if s.tokens is None else float(s.tokens) for s in scores]
        ),
        "questions": float(len(scores)),
    }
    return figures
