"""The recording benchmark still runs (tiny counts; it measures nothing here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_recording_benchmark_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks.recording", "--rounds", "1", "--block", "5",
         "--calls", "20", "--messages", "200"],
        capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "recording, lab server: 20 round trips" in result.stdout
    assert "raw pipe → replay" in result.stdout and "mcp_nb → replay" in result.stdout
    assert "load: 200 messages" in result.stdout
