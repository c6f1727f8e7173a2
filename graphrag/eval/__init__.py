"""Evaluation built in: question sets per base, runs that score them, and comparisons.

`question_sets` checks and stores an uploaded JSONL set, `runner` scores one run question by
question (a Celery task's work, resumable), `metrics` turns per-question results into the
figures, `runs` starts, reads, cancels and compares runs.
"""
