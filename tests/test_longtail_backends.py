"""``torch.backends.*`` flag modules and the process settings (threads, determinism, matmul
precision) against PyTorch: defaults, assignments read back, refusals (type and first
sentence), the links between them (``matmul.allow_tf32`` is ``set_float32_matmul_precision``),
and ``set_num_threads`` limiting the BLAS pool through ``threadpoolctl``."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Iterator

import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, check_case

_FLAGS = {"cudnn": ("enabled", "benchmark", "deterministic", "allow_tf32"),
          "mkldnn": ("enabled", "deterministic")}
_MATMUL = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
           "allow_bf16_reduced_precision_reduction")
_SDP = ("flash", "mem_efficient", "math", "cudnn")


def _state(T: Any) -> dict[str, Any]:
    b = T.backends
    out: dict[str, Any] = {f"{m}.{f}": getattr(getattr(b, m), f) for m, fs in _FLAGS.items()
                           for f in fs}
    out.update({f"matmul.{f}": getattr(b.cuda.matmul, f) for f in _MATMUL})
    out.update({f"sdp.{k}": getattr(b.cuda, f"{k}_sdp_enabled")() for k in _SDP})
    out.update(precision=T.get_float32_matmul_precision(), threads=T.get_num_threads(),
               deterministic=T.are_deterministic_algorithms_enabled(),
               warn_only=T.is_deterministic_algorithms_warn_only_enabled())
    return out


def _restore(T: Any, state: dict[str, Any]) -> None:
    b = T.backends
    for key, value in state.items():
        mod, _, name = key.partition(".")
        if mod in _FLAGS:
            setattr(getattr(b, mod), name, value)
        elif mod == "sdp":
            getattr(b.cuda, f"enable_{name}_sdp")(value)
    for f in _MATMUL[1:]:
        setattr(b.cuda.matmul, f, state[f"matmul.{f}"])
    T.set_float32_matmul_precision(state["precision"])
    T.set_num_threads(state["threads"])
    T.use_deterministic_algorithms(state["deterministic"], warn_only=state["warn_only"])


@pytest.fixture(autouse=True)
def _keep_settings() -> Iterator[None]:
    """Every test leaves both libraries' process settings as it found them."""
    saved = {T: _state(T) for T in (torch, ag)}
    yield
    for T, state in saved.items():
        _restore(T, state)


def test_defaults_are_pytorchs() -> None:
    ours, theirs = _state(ag), _state(torch)
    ours.pop("threads"), theirs.pop("threads")
    assert ours == theirs


def test_flag_modules_import_as_torch_submodules() -> None:
    for name in ("cudnn", "cuda", "mps", "mkldnn", "openmp", "opt_einsum", "cpu", "mkl"):
        mod = importlib.import_module(f"autograd_gpu.backends.{name}")
        assert getattr(ag.backends, name) is mod
    # NOTE: the array backends are still there, under their own names
    from autograd_gpu.backends import get_backend

    assert get_backend(ag.device("cpu")).name == "numpy"


def _set(mod: str, name: str, value: Any) -> Case:
    def run(T: Any, dev: str) -> Any:
        target = T.backends.cuda.matmul if mod == "matmul" else getattr(T.backends, mod)
        setattr(target, name, value)
        return getattr(target, name), T.get_float32_matmul_precision()
    return run


CASES: dict[str, Case] = {
    **{f"{m}.{f}={v!r}": _set(m, f, v) for m, fs in _FLAGS.items() for f in fs
       for v in (True, False, 1, "x")},
    **{f"matmul.{f}={v!r}": _set("matmul", f, v) for f in _MATMUL
       for v in (True, False, "x", (False,), (True, False), (), (1,))},
    "matmul.unknown_read": lambda T, dev: T.backends.cuda.matmul.allow_everything,
    "matmul.unknown_write": lambda T, dev: setattr(T.backends.cuda.matmul, "nope", True),
    "precision_links_tf32": lambda T, dev: [
        (T.set_float32_matmul_precision(p), T.backends.cuda.matmul.allow_tf32)
        for p in ("high", "highest", "medium")],
    "tf32_links_precision": lambda T, dev: [
        (setattr(T.backends.cuda.matmul, "allow_tf32", v), T.get_float32_matmul_precision())
        for v in (True, False)],
    "precision_not_str": lambda T, dev: T.set_float32_matmul_precision(1),
    "sdp_switch": lambda T, dev: [(getattr(T.backends.cuda, f"enable_{k}_sdp")(False),
                                   getattr(T.backends.cuda, f"{k}_sdp_enabled")()) for k in _SDP],
    "sdp_switch_not_bool": lambda T, dev: T.backends.cuda.enable_math_sdp("yes"),
    "cudnn_queries": lambda T, dev: (T.backends.cudnn.is_available(), T.backends.cudnn.version()),
    "mps_queries": lambda T, dev: (T.backends.mps.is_available(), T.backends.mps.is_built()),
    "cudnn_flags_block": lambda T, dev: _in_flags(T),
    "opt_einsum": lambda T, dev: (T.backends.opt_einsum.is_available(),
                                  T.backends.opt_einsum.enabled, T.backends.opt_einsum.strategy,
                                  T.backends.opt_einsum.get_opt_einsum() is None),
    "threads_set": lambda T, dev: (T.set_num_threads(1), T.get_num_threads()),
    **{f"threads_bad_{v!r}": lambda T, dev, v=v: T.set_num_threads(v)
       for v in (0, -1, 1.5, True, "2", None)},
    **{f"deterministic_{v!r}": lambda T, dev, v=v: (
        T.use_deterministic_algorithms(v), T.are_deterministic_algorithms_enabled())
       for v in (True, False, 1, "x", None)},
    "deterministic_warn_only": lambda T, dev: (
        T.use_deterministic_algorithms(True, warn_only=True),
        T.is_deterministic_algorithms_warn_only_enabled(), T.get_deterministic_debug_mode()),
}


def _in_flags(T: Any) -> Any:
    c = T.backends.cudnn
    with c.flags(enabled=False, benchmark=True, deterministic=True, allow_tf32=False):
        inside = (c.enabled, c.benchmark, c.deterministic, c.allow_tf32)
    return inside, (c.enabled, c.benchmark, c.deterministic, c.allow_tf32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_pytorch(name: str) -> None:
    if name == "cudnn_queries" and torch.backends.cudnn.is_available():
        # NOTE: we never call cuDNN: False and None on every machine, as PyTorch's CPU build
        assert (ag.backends.cudnn.is_available(), ag.backends.cudnn.version()) == (False, None)
        return
    check_case(CASES[name], "cpu")


def test_precision_out_of_range_warns_and_keeps_the_setting() -> None:
    for T in (torch, ag):
        T.set_float32_matmul_precision("high")
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            T.set_float32_matmul_precision("HIGH")
        assert T.get_float32_matmul_precision() == "high"


def test_sdp_kernel_is_deprecated_and_scopes_the_switches() -> None:
    for T in (torch, ag):
        with pytest.warns(FutureWarning, match=r"torch.backends.cuda.sdp_kernel\(\)` is deprecat"):
            with T.backends.cuda.sdp_kernel(enable_math=False, enable_flash=True):
                assert not T.backends.cuda.math_sdp_enabled()
                assert T.backends.cuda.flash_sdp_enabled()
        assert T.backends.cuda.math_sdp_enabled()


def test_switching_the_flash_backend_off_changes_attention_as_in_pytorch() -> None:
    q = [[[[0.1, 0.2], [0.3, -0.1]]]]
    names = []
    for T in (torch, ag):
        x = T.tensor(q, requires_grad=True)
        T.backends.cuda.enable_flash_sdp(False)
        try:
            out = T.nn.functional.scaled_dot_product_attention(x, x, x)
        finally:
            T.backends.cuda.enable_flash_sdp(True)
        names.append(type(out.grad_fn).__name__)
    assert names[0] == names[1]


def test_set_num_threads_limits_the_blas_pool() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")  # NOTE: not a dependency
    import numpy as np

    np.ones((4, 4)) @ np.ones((4, 4))  # the BLAS is loaded
    for n in (1, 2):
        ag.set_num_threads(n)
        blas = [p["num_threads"] for p in threadpoolctl.threadpool_info()
                if p["user_api"] == "blas"]
        assert blas and set(blas) == {n}


def test_set_num_threads_without_threadpoolctl_records_the_number(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "threadpoolctl", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.set_num_threads(3)
    assert ag.get_num_threads() == 3
