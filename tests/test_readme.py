"""README's Python API example runs as written, against the real lab server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_python_api_example_runs_and_prints_what_its_comments_promise() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    example = next(b for b in blocks if "anyio.run(main)" in b)
    result = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "Uninitialized"
    assert lines[1] == "2025-11-25 mcp_nb-lab"
    assert "'add'" in lines[2]
    assert lines[3] == "3"
    assert lines[4] == "Terminated"
    assert any("→ request initialize #1" in line for line in lines[5:])
