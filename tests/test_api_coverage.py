"""bench/api_coverage.py in the suite: every counted PyTorch name we have runs on simple input
that torch accepts without raising NotImplementedError (a name that exists but does not work
does not count), and the coverage figures are computed without error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_no_counted_name_raises_not_implemented() -> None:
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "api_coverage.py"), "--check"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "| `torch` |" in run.stdout and "| `Tensor` |" in run.stdout
