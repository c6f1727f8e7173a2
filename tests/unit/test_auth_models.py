"""Capabilities, key-request validation and the stored hash of API keys (no database)."""

from __future__ import annotations

import uuid

import pytest
from pydantic import SecretStr, ValidationError

from graphrag.auth.keys import hash_key
from graphrag.auth.models import ApiKeyCreate, Capability, Principal
from graphrag.settings import AuthSettings, Settings

pytestmark = pytest.mark.unit


def _auth(pepper: str) -> AuthSettings:
    return Settings().auth.model_copy(update={"pepper": SecretStr(pepper)})


def test_admin_implies_every_capability_and_others_only_themselves() -> None:
    admin = Principal(tenant_id=uuid.uuid4(), capabilities=frozenset({Capability.ADMIN}))
    reader = Principal(tenant_id=uuid.uuid4(), capabilities=frozenset({Capability.READ}))
    assert all(admin.can(c) for c in Capability)
    assert [c for c in Capability if reader.can(c)] == [Capability.READ]


def test_hash_depends_on_the_pepper_and_hides_the_key() -> None:
    key = "grk_0a1b2c3d_secret-part"
    first, again, other = (
        hash_key(_auth("p1"), key),
        hash_key(_auth("p1"), key),
        hash_key(_auth("p2"), key),
    )
    assert first == again and first != other
    assert len(first) == 64 and "secret" not in first


@pytest.mark.parametrize("name", ["", "   ", "a\x00b", "tab\there", "a\ud800b"])
def test_key_names_must_be_printable(name: str) -> None:
    with pytest.raises(ValidationError):
        ApiKeyCreate(name=name, capabilities=[Capability.READ])


def test_a_key_needs_a_known_capability() -> None:
    with pytest.raises(ValidationError):
        ApiKeyCreate.model_validate({"name": "ci", "capabilities": []})
    with pytest.raises(ValidationError):
        ApiKeyCreate.model_validate({"name": "ci", "capabilities": ["root"]})
    made = ApiKeyCreate.model_validate({"name": " ci ", "capabilities": ["read", "admin"]})
    assert made.name == "ci" and made.capabilities == [Capability.READ, Capability.ADMIN]


@pytest.fixture()
def own_passwords(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The graph on, with service passwords of their own (not the shipped ones)."""
    monkeypatch.setenv("NEO4J_ENABLE", "true")
    monkeypatch.setenv("NEO4J_PASSWORD", "a-secret-of-our-own")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://graphrag:s3cret@db:5432/graphrag")
    return monkeypatch


def test_production_refuses_an_open_api_or_an_empty_pepper(
    own_passwords: pytest.MonkeyPatch,
) -> None:
    base = Settings(environment="development")
    with pytest.raises(ValidationError, match="AUTH_PEPPER"):
        Settings(environment="production", auth=_auth("").model_dump())
    with pytest.raises(ValidationError, match=r"auth\.required"):
        Settings(environment="production", auth={**_auth("p").model_dump(), "required": False})
    assert Settings(environment="production", auth=_auth("p").model_dump()).auth.required
    assert base.auth.required  # the shipped default is secure


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("NEO4J_PASSWORD", "graphrag-local", "NEO4J_PASSWORD"),
        ("NEO4J_PASSWORD", "change-me-please", "NEO4J_PASSWORD"),
        ("NEO4J_PASSWORD", "", "NEO4J_PASSWORD"),
        ("DATABASE_URL", "postgresql+psycopg://graphrag:graphrag@db:5432/graphrag", "DATABASE_URL"),
        ("DATABASE_URL", "postgresql://u:change%2Dme%2Dplease@db/graphrag", "DATABASE_URL"),
    ],
)
def test_production_refuses_default_passwords(
    own_passwords: pytest.MonkeyPatch, variable: str, value: str, named: str
) -> None:
    own_passwords.setenv(variable, value)
    assert Settings(environment="development", auth=_auth("p").model_dump())
    with pytest.raises(ValidationError, match=named):
        Settings(environment="production", auth=_auth("p").model_dump())


def test_production_checks_neo4j_only_when_it_is_on(own_passwords: pytest.MonkeyPatch) -> None:
    own_passwords.setenv("NEO4J_PASSWORD", "graphrag-local")
    own_passwords.setenv("NEO4J_ENABLE", "")
    own_passwords.setenv(
        "DATABASE_URL", "postgresql+psycopg:///graphrag?host=/run/pg"
    )  # no password
    assert Settings(environment="production", auth=_auth("p").model_dump()).neo4j.password
