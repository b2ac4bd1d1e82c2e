"""The misuse catalogue's runner: each case is a program ``fn(T, dev)`` run once with torch (the
oracle, on the CPU) and once with autograd_gpu (on the device under test).

- Where torch raises, we must raise the same exception type with the same first sentence.
- Where torch runs, we must run too and return the same value (tensors by shape and value).

A family file (``test_index.py``, ``test_autograd.py``, ...) holds a ``CASES`` dict of such
programs and one line of test: ``test_misuse = catalogue_test(CASES)``. Aim: no case where
PyTorch raises and we do not, and no case where we raise and PyTorch does not.
"""

from __future__ import annotations

import re

from typing import Any, Callable

import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, first_sentence

Case = Callable[[Any, str], Any]


def _run(fn: Case, lib: Any, device: str) -> tuple[Any, BaseException | None]:
    try:
        return fn(lib, device), None
    except Exception as e:  # noqa: BLE001
        return None, e


def check_case(fn: Case, device: str, **tol: float) -> None:
    """Run ``fn`` under torch and us and assert the same outcome (see the module docstring)."""
    theirs, their_err = _run(fn, torch, "cpu")
    ours, our_err = _run(fn, ag, device)
    if their_err is None:
        if our_err is not None:
            raise AssertionError(f"torch runs, we raise {type(our_err).__name__}: {our_err}") \
                from our_err
        assert_same(ours, theirs, **tol)
        return
    if our_err is None:
        raise AssertionError(f"torch raises {type(their_err).__name__}: {their_err}; we return "
                             f"{ours!r}")
    assert isinstance(our_err, type(their_err)), (type(our_err), our_err, type(their_err),
                                                  their_err)
    # NOTE: torch runs on the CPU here; on CUDA PyTorch names tensor types torch.cuda.XTensor
    # (or CUDAXType) and kernels "name_cuda".
    text = str(our_err)
    if device != "cpu":
        text = text.replace("torch.cuda.", "torch.").replace('_cuda" not implemented',
                                                              '_cpu" not implemented')
        text = re.sub(r"\bCUDA(\w+Type)\b", r"CPU\1", text)
    assert first_sentence(text) == first_sentence(str(their_err)), (str(our_err),
                                                                    str(their_err))


def catalogue_test(cases: dict[str, Case]) -> Callable[[str, str], None]:
    """One parametrised test over ``cases`` on the ``device`` fixture."""

    @pytest.mark.parametrize("name", sorted(cases))
    def test_misuse(device: str, name: str) -> None:
        check_case(cases[name], device)

    return test_misuse
