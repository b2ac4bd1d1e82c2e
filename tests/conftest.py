"""Shared fixtures: every test body runs on every available device.

With ``AUTOGRAD_GPU_FAKE_CUDA=1`` the CUDA code path runs on a NumPy stand-in for CuPy
(``tests/fake_cupy``, CuPy's kernels off): "cuda" is then available and the ``device`` fixture
includes it. Those results test the CUDA plumbing, never a GPU; the run says so in its header and
summary. On a machine with real CuPy and a GPU the fake refuses to load.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

FAKE_CUDA = os.environ.get("AUTOGRAD_GPU_FAKE_CUDA", "") not in ("", "0")
if FAKE_CUDA:
    from tests import fake_cupy

    try:
        fake_cupy.install()  # before autograd_gpu is imported
    except fake_cupy.RealGPUError as e:
        raise pytest.UsageError(str(e)) from None
    # NOTE: the fake cannot run RawKernels; the CuPy backend then uses CuPy's functions only.
    os.environ["AUTOGRAD_GPU_KERNELS"] = "0"

import autograd_gpu as ag  # noqa: E402
from autograd_gpu.backends import cuda_support  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if cuda_support.is_available() else [])


def pytest_report_header(config: pytest.Config) -> list[str]:
    if FAKE_CUDA:
        return [fake_cupy.HEADER]
    return []


def pytest_sessionstart(session: pytest.Session) -> None:
    # NOTE: -q hides the report header; the fake run must still never pass for a GPU run.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if FAKE_CUDA and reporter is not None and session.config.get_verbosity() < 0:
        reporter.write_line(fake_cupy.HEADER)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if FAKE_CUDA:
        terminalreporter.write_line(f"{fake_cupy.HEADER}: the 'cuda' results are not GPU results")


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """'cpu', and 'cuda' whenever a GPU is present (CUDA runs, never silently skips)."""
    return request.param


@pytest.fixture(autouse=True)
def _seed() -> None:
    ag.manual_seed(0)
