"""Settings of the REST API: listening address, proxies trusted, pages, request caps and the
rate limit."""

from __future__ import annotations

import ipaddress

from pydantic import Field, field_validator

from graphrag.settings.base import Section as _Section

__all__ = ["ApiSettings"]

_ANYONE = "*"  # forwarded_allow_ips: believe the forwarded headers of any peer


class ApiSettings(_Section):
    host: str
    port: int
    default_tenant: str
    default_page_size: int
    max_page_size: int
    max_batch_files: int = Field(gt=0, description="files accepted in one batch upload")
    max_body_mb: int = Field(gt=0, description="any request body (uploads, batches); 413 beyond")
    max_json_body_kb: int = Field(
        gt=0, description="the body of a route that takes small JSON (most of them); 413 beyond"
    )
    max_text_body_kb: int = Field(
        gt=0, description="the JSON body of a route that takes a document's text; 413 beyond"
    )
    multipart_slack_kb: int = Field(ge=0, description="multipart framing around one file")
    max_text_field_chars: int = Field(gt=0, description="any one text field of a request; 422")
    max_list_items: int = Field(gt=0, description="a request list without a cap of its own; 422")
    max_validation_errors: int = Field(gt=0, description="errors listed in one 422 reply")
    max_error_chars: int = Field(gt=0, description="characters of each part of a listed error")

    @property
    def max_body_bytes(self) -> int:
        return self.max_body_mb * 1024 * 1024

    @property
    def max_json_body_bytes(self) -> int:
        return self.max_json_body_kb * 1024

    @property
    def max_text_body_bytes(self) -> int:
        return self.max_text_body_kb * 1024

    @property
    def multipart_slack_bytes(self) -> int:
        return self.multipart_slack_kb * 1024

    rate_limit_requests: int = Field(ge=0, description="requests per key per window; 0: no limit")
    rate_limit_window_s: int = Field(gt=0)
    metrics_public: bool = Field(description="serve /metrics without a key (else `read` needed)")
    forwarded_allow_ips: list[str] = Field(
        description="addresses or networks of the reverse proxies whose X-Forwarded-For and "
        "X-Forwarded-Proto `graphrag serve` believes; [] believes none"
    )

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _addresses_or_networks(cls, value: list[str]) -> list[str]:
        # The server would take a mistyped entry as a literal that matches nothing: refuse it.
        entries = [entry.strip() for entry in value]
        for entry in entries:
            if entry != _ANYONE:
                ipaddress.ip_network(entry, strict=False)
        return entries
