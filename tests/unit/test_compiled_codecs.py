"""The compiled codecs the workers rely on for their CPU per task are installed and in use."""

from __future__ import annotations

import importlib.util

from redis.utils import HIREDIS_AVAILABLE


def test_redis_replies_are_parsed_by_hiredis() -> None:
    assert HIREDIS_AVAILABLE


def test_neo4j_packstream_is_coded_in_rust() -> None:
    assert importlib.util.find_spec("neo4j._codec.packstream._rust") is not None
