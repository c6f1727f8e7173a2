"""Stages and their statuses are enums with the wire values clients already read."""

from __future__ import annotations

import pytest

from graphrag.db.enums import Stage, StageStatus
from graphrag.ingest.schemas import KnowledgeStages, StageProgress

pytestmark = pytest.mark.unit


def test_wire_values_are_unchanged() -> None:
    assert [s.value for s in Stage] == ["parse", "embed", "index", "graph"]
    assert [s.value for s in StageStatus] == ["pending", "running", "done", "skipped", "cancelled"]


def test_stored_progress_reads_back_typed() -> None:
    stored = StageProgress(status=StageStatus.RUNNING, total=4).stored()
    assert stored == {"status": "running", "done": 0, "total": 4, "skipped": 0}
    assert StageProgress.model_validate(stored).status is StageStatus.RUNNING
    with pytest.raises(ValueError):
        StageProgress.model_validate({"status": "halfway"})


def test_the_api_schema_names_the_enums() -> None:
    schema = KnowledgeStages.model_json_schema()
    defs = schema["$defs"]
    assert defs["StageStatus"]["enum"] == [s.value for s in StageStatus]
    assert schema["properties"]["stages"]["propertyNames"] == {"$ref": "#/$defs/Stage"}
    assert defs["StageProgress"]["properties"]["status"]["$ref"] == "#/$defs/StageStatus"
