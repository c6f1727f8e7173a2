"""Wait until a Neo4j server answers `RETURN 1` over Bolt, or give up after a timeout.

Used by run.sh. The password comes from the NEO4J_PASSWORD environment variable so that it
never shows in the process list. Exit status: 0 ready, 1 timed out, 2 the server process died.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired

__all__ = ["is_ready", "main"]

# Seconds between two probes: a first start takes tens of seconds, so finer is pointless.
_PROBE_INTERVAL_S = 1.0
# Seconds a single probe may spend connecting before it counts as "not yet".
_PROBE_CONNECT_TIMEOUT_S = 3.0
_DEFAULT_PASSWORD = "graphrag-local"


def is_ready(uri: str, user: str, password: str) -> bool:
    """Return True when one Bolt session can run `RETURN 1` with these credentials."""
    # Bolt may be up while the launcher has not yet set the password: AuthError means "not yet".
    try:
        with GraphDatabase.driver(
            uri, auth=(user, password), connection_timeout=_PROBE_CONNECT_TIMEOUT_S
        ) as driver:
            # An auto-commit query: execute_query would retry on its own with long back-offs.
            with driver.session() as session:
                record = session.run("RETURN 1 AS one").single()
            return record is not None and record["one"] == 1
    except (ServiceUnavailable, SessionExpired, AuthError, Neo4jError, OSError):
        return False


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    """Probe until ready; see the module docstring for the exit status."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uri", default="bolt://127.0.0.1:7697")
    parser.add_argument("--user", default="neo4j")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds")
    parser.add_argument("--pid", type=int, default=None, help="stop early if it exits")
    parser.add_argument(
        "--ready-file",
        type=Path,
        default=None,
        help="probe Bolt only once this file exists (failed logins would lock the user)",
    )
    args = parser.parse_args(argv)
    password = os.environ.get("NEO4J_PASSWORD", _DEFAULT_PASSWORD)
    deadline = time.monotonic() + args.timeout
    while True:
        waiting_for_file = args.ready_file is not None and not args.ready_file.exists()
        if not waiting_for_file and is_ready(args.uri, args.user, password):
            return 0
        if args.pid is not None and not _process_alive(args.pid):
            sys.stderr.write(f"neo4j process {args.pid} exited before answering\n")
            return 2
        if time.monotonic() >= deadline:
            sys.stderr.write(f"neo4j did not answer on {args.uri} within {args.timeout:.0f}s\n")
            return 1
        time.sleep(_PROBE_INTERVAL_S)


if __name__ == "__main__":
    sys.exit(main())
