"""The close report is a typed model, so OpenAPI names it and lists its fields."""

from __future__ import annotations

import pytest

from graphrag.memory.records import SessionCloseReport

pytestmark = pytest.mark.unit

CLOSE_REPORT_PATH = "/api/v1/memory/sessions/{session_id}/close-report"


def test_openapi_shows_the_close_report_model() -> None:
    from api.app import create_app
    from graphrag.settings import Settings

    spec = create_app(Settings()).openapi()
    content = spec["paths"][CLOSE_REPORT_PATH]["get"]["responses"]["200"]["content"]
    assert content["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SessionCloseReport"
    }
    shown = spec["components"]["schemas"]["SessionCloseReport"]["properties"]
    assert set(shown) == set(SessionCloseReport.model_fields)
