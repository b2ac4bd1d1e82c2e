"""Shared fixtures: every test body runs on every available device.

``AUTOGRAD_GPU_FAKE_CUDA`` runs the CUDA code path on a NumPy stand-in for CuPy
(``tests/fake_cupy``): "cuda" is then available and the ``device`` fixture includes it.

- ``=1``: CuPy's functions only, our kernels off (``AUTOGRAD_GPU_KERNELS=0``).
- ``=emulate``: our kernels on (``AUTOGRAD_GPU_KERNELS=1``), run on the CPU by
  ``tests/kernel_emulator`` (needs g++; without it, as ``=1``), so the backend's kernel paths and
  ``tests/backends/test_cuda_kernels.py`` run too.

Those results test the CUDA plumbing and the kernels' logic, never a GPU; the run says so in its
header and summary. On a machine with real CuPy and a GPU the fake refuses to load.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

FAKE_MODE = os.environ.get("AUTOGRAD_GPU_FAKE_CUDA", "")
FAKE_CUDA = FAKE_MODE not in ("", "0")
EMULATE = False
HEADER = ""
if FAKE_CUDA:
    from tests import fake_cupy, kernel_emulator

    if FAKE_MODE not in ("1", "emulate"):
        raise pytest.UsageError(f"AUTOGRAD_GPU_FAKE_CUDA={FAKE_MODE!r}: use 1 (the NumPy stand-in "
                                "for CuPy, kernels off) or emulate (kernels on, emulated on the "
                                "CPU)")
    EMULATE = FAKE_MODE == "emulate" and kernel_emulator.available()
    HEADER = fake_cupy.EMULATED_HEADER if EMULATE else fake_cupy.HEADER
    if FAKE_MODE == "emulate" and not EMULATE:
        HEADER += f" ({kernel_emulator.unavailable_reason()})"
    try:
        fake_cupy.install(emulate_kernels=EMULATE)  # before autograd_gpu is imported
    except fake_cupy.RealGPUError as e:
        raise pytest.UsageError(str(e)) from None
    # NOTE: without the emulator the fake cannot run RawKernels; the CuPy backend then uses
    # CuPy's functions only.
    os.environ["AUTOGRAD_GPU_KERNELS"] = "1" if EMULATE else "0"

import autograd_gpu as ag  # noqa: E402
from autograd_gpu.backends import cuda_support  # noqa: E402

# Hypothesis profiles: ``ci`` (the default) is small and derandomized, so CI is deterministic;
# ``long`` runs 10 000 examples per test (``--hypothesis-profile=long``, or the environment
# variable ``AUTOGRAD_GPU_HYPOTHESIS=long``). Tests that set max_examples themselves keep it.
from hypothesis import HealthCheck, settings  # noqa: E402

_SLOW_STRATEGIES = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=500, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_SLOW_STRATEGIES)
settings.register_profile("long", max_examples=10_000, deadline=None, database=None,
                          suppress_health_check=_SLOW_STRATEGIES, print_blob=True)
settings.load_profile(os.environ.get("AUTOGRAD_GPU_HYPOTHESIS", "ci"))

DEVICES = ["cpu"] + (["cuda"] if cuda_support.is_available() else [])


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [HEADER] if FAKE_CUDA else []


def pytest_sessionstart(session: pytest.Session) -> None:
    # NOTE: -q hides the report header; the fake run must still never pass for a GPU run.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if FAKE_CUDA and reporter is not None and session.config.get_verbosity() < 0:
        reporter.write_line(HEADER)


def _oracle_note() -> str | None:
    """A line when the installed torch is not the oracle pyproject pins: its error messages and
    reprs (which the tests compare) change between versions (the GPU image had 2.11)."""
    import re
    from importlib import metadata
    from pathlib import Path

    pin = re.search(r'"torch==([^"]+)"', (Path(__file__).parents[1] / "pyproject.toml").read_text())
    try:
        have = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    if pin is None or have.split("+")[0] == pin.group(1):
        return None
    return (f"oracle: torch {have}, not the pinned {pin.group(1)}: comparisons of messages and "
            "reprs may fail for the version alone")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    note = _oracle_note()
    if note:
        terminalreporter.write_line(note)
    if EMULATE:
        terminalreporter.write_line(kernel_emulator.summary())
    if FAKE_CUDA:
        terminalreporter.write_line(f"{HEADER}: the 'cuda' results are not GPU results")


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """'cpu', and 'cuda' whenever a GPU is present (CUDA runs, never silently skips)."""
    return request.param


@pytest.fixture(autouse=True)
def _seed() -> None:
    ag.manual_seed(0)
