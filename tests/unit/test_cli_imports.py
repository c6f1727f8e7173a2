"""The command line imports no metrics library at start-up.

`graphrag worker` points prometheus-client at a multiprocess directory before the library is
first imported; a command module that imports it earlier (through the chat or ingest packages)
leaves the worker's counters in each process's memory, and its exporter shows none of them.
"""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_command_line_leaves_prometheus_client_unimported() -> None:
    probe = "import sys, cli.main; print('prometheus_client' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False", result.stderr
