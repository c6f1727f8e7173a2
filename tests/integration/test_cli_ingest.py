"""`graphrag ingest` uploads through the service layer and follows documents to the end."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from graphrag.db.enums import ParseStatus
from graphrag.db.models import Knowledge, KnowledgeBase
from tests.support import sample_files
from tests.support.services import ROOT, worker_environment
from tests.support.worker import WorkerProcess

pytestmark = pytest.mark.integration

CLI_TIMEOUT_S = 300


def _ingest(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cli.main", "ingest", *args],
        cwd=ROOT,
        env={**worker_environment(env), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def test_ingest_folder_then_again(
    tmp_path: Path, settings_env: dict[str, str], worker: WorkerProcess, db_session: Session
) -> None:
    (tmp_path / "a.md").write_text(f"# Alpha\n\nThe Okafor dam holds water. {uuid.uuid4()}")
    (tmp_path / "b.pdf").write_bytes(sample_files.text_pdf([f"Bravo page {uuid.uuid4()}"]))
    (tmp_path / "empty.txt").write_text("")
    kb_name = f"cli-{uuid.uuid4().hex[:8]}"

    first = _ingest(settings_env, str(tmp_path), "--kb", kb_name)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "refused" in first.stdout and "empty.txt" in first.stdout
    table_rows = [line for line in first.stdout.splitlines() if line.startswith("│")]
    assert sum("completed" in row for row in table_rows) == 2

    kb = db_session.execute(select(KnowledgeBase).where(KnowledgeBase.name == kb_name)).scalar_one()
    docs = db_session.execute(select(Knowledge).where(Knowledge.kb_id == kb.id)).scalars().all()
    assert sorted(d.file_name for d in docs) == ["a.md", "b.pdf"]
    assert all(d.parse_status == ParseStatus.COMPLETED and d.chunk_count > 0 for d in docs)

    again = _ingest(settings_env, str(tmp_path / "a.md"), "--kb", kb_name)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already there" in again.stdout


def test_ingest_reports_failure_with_exit_code(
    tmp_path: Path, settings_env: dict[str, str], worker: WorkerProcess
) -> None:
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(sample_files.encrypted_pdf("secret"))
    result = _ingest(settings_env, str(locked), "--kb", f"cli-{uuid.uuid4().hex[:8]}")
    assert result.returncode == 1
    assert "failed" in result.stdout and "password" in result.stdout.lower()


def test_graph_ingest_prints_the_run_figures(
    tmp_path: Path, settings_env: dict[str, str], worker: WorkerProcess
) -> None:
    for i in range(3):
        (tmp_path / f"d{i}.md").write_text(f"The Okafor dam holds water. {uuid.uuid4()}")
    result = _ingest(settings_env, str(tmp_path), "--kb", f"cli-{uuid.uuid4().hex[:8]}", "--graph")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "documents/s" in result.stdout and "slot utilisation" in result.stdout
    figures = next(line for line in result.stdout.splitlines() if "%" in line and "│" in line)
    cells = [c.strip() for c in figures.strip("│").split("│")]
    assert cells[1] == "3" and cells[2] == "1.00"  # one graph chunk, one call per document
    assert "3/3 documents" in result.stdout
