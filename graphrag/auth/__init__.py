"""API keys, their capabilities, and the caller they authenticate."""

from graphrag.auth.keys import create_key, hash_key, list_keys, revoke_key, verify_key
from graphrag.auth.models import ApiKeyCreate, ApiKeyCreated, ApiKeyPublic, Capability, Principal

__all__ = [
    "ApiKeyCreate",
    "ApiKeyCreated",
    "ApiKeyPublic",
    "Capability",
    "Principal",
    "create_key",
    "hash_key",
    "list_keys",
    "revoke_key",
    "verify_key",
]
