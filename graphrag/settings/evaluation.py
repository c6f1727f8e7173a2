"""Settings of evaluation: the budgets of a question set and of a run."""

from __future__ import annotations

from pydantic import Field

from graphrag.settings.base import Section as _Section

__all__ = ["EvaluationSettings"]


class EvaluationSettings(_Section):
    """Evaluation sets (JSONL questions per base) and the runs that score them."""

    max_set_bytes: int = Field(gt=0, description="an uploaded set's size")
    max_questions: int = Field(gt=0, description="lines of one set")
    max_question_chars: int = Field(gt=0)
    max_answer_chars: int = Field(gt=0, description="a gold answer, and each alias")
    max_aliases: int = Field(ge=0)
    max_gold: int = Field(gt=0, description="gold documents of one question")
    max_tags: int = Field(ge=0)
    max_tag_chars: int = Field(gt=0)
    max_name_chars: int = Field(gt=0, description="a set's or a run's name")
    max_sets_listed: int = Field(gt=0)
    max_runs_listed: int = Field(gt=0)
    ranked_kept: int = Field(gt=0, description="documents stored per question and run")
    fetch_k: int = Field(gt=0, description="hits fetched per question before passages form")
    ks: list[int] = Field(min_length=1, description="the k of each recall R@k")
    all_at: int = Field(gt=0, description="the k of All@k: every gold document in the first k")
    progress_every: int = Field(gt=0, description="questions between two lease renewals")
    run_time_limit_s: int = Field(gt=0, description="one run task's hard time limit")
