"""Shared fixtures: every test body runs on every available device."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest  # noqa: E402

import autograd_gpu as ag  # noqa: E402
from autograd_gpu.backends import cuda_support  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if cuda_support.is_available() else [])


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """'cpu', and 'cuda' whenever a GPU is present (CUDA runs, never silently skips)."""
    return request.param


@pytest.fixture(autouse=True)
def _seed() -> None:
    ag.manual_seed(0)
