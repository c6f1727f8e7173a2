"""Name keys and the candidate keys of a question."""

from __future__ import annotations

import pytest

from graphrag.graph.names import name_key, question_keys
from graphrag.search.graph_retrieval import _kept_keys

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("Marie Curie's", "marie curie"),
        ("MARIE  CURIE", "marie curie"),
        ("Marie Curie\u2019s", "marie curie"),
        ("Café de Flore", "cafe de flore"),
        ("Kimber Manufacturing, Inc.", "kimber manufacturing inc"),
        ("U.S.", "u s"),
        ("\u00c9cole Polytechnique", "ecole polytechnique"),
        ("---", ""),
        ("", ""),
    ],
)
def test_name_key_folds_case_accents_punctuation_and_possessives(raw: str, key: str) -> None:
    assert name_key(raw) == key


def test_question_keys_are_runs_of_words_longest_first_plus_model_names() -> None:
    keys = question_keys(
        "Who founded Cooper Firearms of Montana?",
        ["Cooper Firearms"],
        max_words=4,
        min_chars=3,
        max_keys=100,
    )
    names = [k.key for k in keys]
    assert names[0] == "cooper firearms"  # the model's name comes first
    assert "cooper firearms of montana" in names and "montana" in names
    assert "of" not in names  # shorter than min_chars
    widths = [k.width for k in keys[1:]]
    assert widths == sorted(widths, reverse=True)


def test_question_keys_are_capped() -> None:
    question = " ".join(f"word{i}" for i in range(200))
    assert len(question_keys(question, [], max_words=4, min_chars=3, max_keys=50)) == 50


def test_shorter_matches_inside_a_longer_one_are_dropped() -> None:
    keys = {
        k.key: k
        for k in question_keys("Was Cooper Firearms of Montana older than Kimber?", [], 4, 3, 100)
    }
    matched = [keys[k] for k in ("cooper firearms of montana", "montana", "kimber")]
    kept = {k.key for k in _kept_keys(matched)}
    assert kept == {"cooper firearms of montana", "kimber"}


def test_adversarial_question_is_handled_in_linear_work() -> None:
    question = "A " * 50_000
    keys = question_keys(question, [], max_words=4, min_chars=1, max_keys=200)
    assert len(keys) == 4  # "a", "a a", "a a a", "a a a a": duplicates are one key each
