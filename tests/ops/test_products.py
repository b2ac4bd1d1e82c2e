"""The products family against torch: ``einsum`` (equation, list and sublist forms, ellipsis,
repeated subscripts, broadcasting), ``outer``/``ger``, ``kron``, ``cross``, ``trace``,
``tensordot``, ``baddbmm``, ``addbmm``, ``addmv``, ``addr``, ``vdot``, ``inner``,
``chain_matmul``.

One table of programs ``fn(T, *inputs)`` run with torch (the oracle) and with us on every
device: values, dtypes and shapes, the gradients of a weighted sum of the float outputs, and
PyTorch's grad_fn names; then float64 ``gradcheck`` / ``gradgradcheck``; then out= and the
in-place forms. ``compare`` also serves ``test_stats``. Errors: ``tests/misuse/test_products.py``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck

Case = tuple[Callable[..., Any], list[np.ndarray]]
TOL = {"float16": (2e-3, 2e-3), "float32": (2e-5, 2e-5), "float64": (1e-10, 1e-10)}


def _weights(T: Any, o: Any) -> Any:
    w = np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape))
    return T.tensor(w, dtype=o.dtype, device=o.device)


def _run(T: Any, dev: str, fn: Callable[..., Any], arrays: list[np.ndarray]) -> Any:
    xs = [T.tensor(a, device=dev, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = fn(T, *xs)
    outs = tuple(out) if isinstance(out, tuple) else (out,)
    diff = [x for x in xs if x.requires_grad]
    floats = [o for o in outs if o.requires_grad]
    grads: Any = ()
    if floats and diff:
        loss = sum((o * _weights(T, o)).sum() for o in floats)
        grads = T.autograd.grad(loss, diff, allow_unused=True)
    return outs, grads


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, ag.Tensor) else t.detach().numpy()


def _same(ours: Any, theirs: Any, what: str) -> None:
    if theirs is None:
        assert ours is None, what
        return
    name = str(theirs.dtype).replace("torch.", "")
    assert ours.dtype.name == name, (what, ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (what, ours.shape, theirs.shape)
    rtol, atol = TOL.get(name, (0, 0))
    np.testing.assert_allclose(_np(ours).astype("float64"), _np(theirs).astype("float64"),
                               rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def compare(fn: Callable[..., Any], arrays: list[np.ndarray], device: str,
            names: bool = False) -> None:
    """Run ``fn`` with torch on the CPU and with us on ``device``; compare outputs and
    gradients (and, with ``names``, the outputs' grad_fn names)."""
    t_outs, t_grads = _run(torch, "cpu", fn, arrays)
    o_outs, o_grads = _run(ag, device, fn, arrays)
    assert len(o_outs) == len(t_outs)
    for i, (o, t) in enumerate(zip(o_outs, t_outs)):
        _same(o, t, f"output {i}")
        assert o.requires_grad == t.requires_grad, f"output {i} requires_grad"
        if names and t.grad_fn is not None:
            assert o.grad_fn.name() == t.grad_fn.name()
    assert len(o_grads) == len(t_grads)
    for i, (o, t) in enumerate(zip(o_grads, t_grads)):
        _same(o, t, f"gradient {i}")


RNG = np.random.default_rng(3)
NAN = float("nan")


def _r(*shape: int, dtype: str = "float32") -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def _i(*shape: int) -> np.ndarray:
    return RNG.integers(-3, 4, shape)


M23, M34, M33, M43 = _r(2, 3), _r(3, 4), _r(3, 3), _r(4, 3)
B234, B245 = _r(2, 3, 4), _r(2, 4, 5)
V2, V3, V4 = _r(2), _r(3), _r(4)
D23, D34, D33 = _r(2, 3, dtype="float64"), _r(3, 4, dtype="float64"), _r(3, 3, dtype="float64")
D234, D245 = _r(2, 3, 4, dtype="float64"), _r(2, 4, 5, dtype="float64")
S = np.array(1.5, "float32")
BOOL3 = np.array([True, False, True])
NAN23 = np.full((2, 3), NAN, "float32")


def _sub(T: Any, x: Any, y: Any) -> Any:
    return T.einsum(x, [0, 1], y, [1, 2], [0, 2])


CASES: dict[str, Case] = {
    # einsum
    "einsum_bmm": (lambda T, x, y: T.einsum("bij,bjk->bik", x, y), [B234, B245]),
    "einsum_rowdot": (lambda T, x, y: T.einsum("ij,ij->i", x, y), [M23, _r(2, 3)]),
    "einsum_mm_implicit": (lambda T, x, y: T.einsum("ij,jk", x, y), [M23, M34]),
    "einsum_mm_out_permuted": (lambda T, x, y: T.einsum("ij,jk->ki", x, y), [D23, D34]),
    "einsum_transposed_inputs": (lambda T, x, y: T.einsum("ji,kj->ik", x.t(), y.t()), [M23, M34]),
    "einsum_diag": (lambda T, x: T.einsum("ii->i", x), [M33]),
    "einsum_trace": (lambda T, x: T.einsum("ii", x), [D33]),
    "einsum_diag_3d": (lambda T, x: T.einsum("iji->ij", x), [_r(3, 2, 3)]),
    "einsum_diag_then_contract": (lambda T, x, y: T.einsum("ii,ij->j", x, y), [M33, M34]),
    "einsum_triple_repeat": (lambda T, x: T.einsum("iii->i", x), [_r(2, 2, 2)]),
    "einsum_sum_all": (lambda T, x: T.einsum("ij->", x), [M23]),
    "einsum_sum_one": (lambda T, x: T.einsum("ij->j", x), [M23]),
    "einsum_transpose": (lambda T, x: T.einsum("ij->ji", x), [M23]),
    "einsum_identity": (lambda T, x: T.einsum("ij", x), [M23]),
    "einsum_implicit_order": (lambda T, x: T.einsum("ba", x), [M23]),
    "einsum_upper_first": (lambda T, x, y: T.einsum("bA,Ac", x, y), [M23, M34]),
    "einsum_outer": (lambda T, x, y: T.einsum("i,j->ij", x, y), [V2, V3]),
    "einsum_dot": (lambda T, x, y: T.einsum("i,i->", x, y), [V3, _r(3)]),
    "einsum_three": (lambda T, x, y, z: T.einsum("ij,jk,kl->il", x, y, z), [M23, M34, M43]),
    "einsum_bilinear": (lambda T, x, w, y: T.einsum("bn,anm,bm->ba", x, w, y),
                        [_r(2, 3), _r(4, 3, 5), _r(2, 5)]),
    "einsum_ellipsis_batch": (lambda T, x, y: T.einsum("...ij,...jk->...ik", x, y),
                              [_r(2, 1, 3, 4), _r(5, 4, 2)]),
    "einsum_ellipsis_implicit": (lambda T, x: T.einsum("...ij", x), [B234]),
    "einsum_ellipsis_summed": (lambda T, x: T.einsum("...i->i", x), [B234]),
    "einsum_ellipsis_one_side": (lambda T, x, y: T.einsum("...i,i->...", x, y), [B234, V4]),
    "einsum_ellipsis_middle": (lambda T, x: T.einsum("i...j->j...i", x), [B234]),
    "einsum_broadcast_one": (lambda T, x, y: T.einsum("ij,ij->ij", x, y), [M23, _r(1, 3)]),
    "einsum_broadcast_contract": (lambda T, x, y: T.einsum("ij,jk->ik", x, y), [_r(2, 1), M34]),
    "einsum_size_one_out": (lambda T, x, y: T.einsum("ij,jk->ik", x, y), [_r(1, 3), _r(3, 1)]),
    "einsum_spaces": (lambda T, x, y: T.einsum(" i j , j k -> i k ", x, y), [M23, M34]),
    "einsum_list": (lambda T, x, y: T.einsum("ij,jk", [x, y]), [M23, M34]),
    "einsum_sublist": (lambda T, x, y: _sub(T, x, y), [M23, M34]),
    "einsum_sublist_ellipsis": (lambda T, x, y: T.einsum(x, [..., 1], y, [1, 2]), [B234, _r(4, 2)]),
    "einsum_sublist_implicit": (lambda T, x, y: T.einsum(x, [0, 1], y, [1, 2]), [M23, M34]),
    "einsum_scalar_operand": (lambda T, x, s: T.einsum("i,->i", x, s), [V3, S]),
    "einsum_0d_only": (lambda T, s: T.einsum("->", s), [S]),
    "einsum_empty": (lambda T, x, y: T.einsum("ij,jk->ik", x, y), [np.zeros((2, 0), "float32"),
                                                                  np.zeros((0, 4), "float32")]),
    "einsum_int": (lambda T, x, y: T.einsum("ij,jk", x, y), [_i(2, 3), _i(3, 4)]),
    "einsum_int_trace": (lambda T, x: T.einsum("ii", x), [_i(3, 3)]),
    "einsum_bool_outer": (lambda T, x, y: T.einsum("i,j->ij", x, y), [BOOL3, BOOL3[:2]]),
    "einsum_bool_sum": (lambda T, x: T.einsum("ij->i", x), [_i(3, 2) > 0]),
    "einsum_mixed_outer": (lambda T, x, y: T.einsum("i,j->ij", x, y), [V3, V2.astype("float64")]),
    "einsum_float64_batch": (lambda T, x, y: T.einsum("bij,bkj->bik", x, y), [D234, D234 * 2]),
    # outer / ger
    "outer": (lambda T, x, y: T.outer(x, y), [V2, V3]),
    "outer_method": (lambda T, x, y: x.outer(y), [V3, V4]),
    "outer_promote": (lambda T, x, y: T.outer(x, y), [_i(3), V2]),
    "outer_bool": (lambda T, x, y: T.outer(x, y), [BOOL3, BOOL3]),
    "ger": (lambda T, x, y: x.ger(y), [V2, V3]),
    # kron
    "kron_2d": (lambda T, x, y: T.kron(x, y), [M23, _r(2, 2)]),
    "kron_1d_2d": (lambda T, x, y: T.kron(x, y), [V2, M23]),
    "kron_3d_2d": (lambda T, x, y: x.kron(y), [_r(2, 1, 2), _r(2, 3)]),
    "kron_0d": (lambda T, s, y: T.kron(s, y), [S, M23]),
    "kron_promote": (lambda T, x, y: T.kron(x, y), [M23, _i(2)]),
    "kron_bool": (lambda T, x, y: T.kron(x, y), [BOOL3, BOOL3[:2]]),
    "kron_strided": (lambda T, x, y: T.kron(x[:, ::2], y), [M23, _r(2, 2)]),
    # cross
    "cross_dim1": (lambda T, x, y: T.cross(x, y, dim=1), [_r(4, 3), _r(4, 3)]),
    "cross_neg_dim": (lambda T, x, y: x.cross(y, dim=-2), [_r(2, 3, 2), _r(2, 3, 2)]),
    "cross_broadcast": (lambda T, x, y: T.cross(x, y, dim=1), [_r(4, 3), _r(1, 3)]),
    "cross_default_dim": (lambda T, x, y: T.cross(x, y), [_r(2, 3), _r(2, 3)]),
    "cross_int": (lambda T, x, y: T.cross(x, y, dim=0), [_i(3, 2), _i(3, 2)]),
    "cross_transposed": (lambda T, x, y: T.cross(x.t(), y, dim=1), [_r(3, 4), _r(4, 3)]),
    "cross_float64": (lambda T, x, y: T.cross(x, y, dim=0), [D33, D33 * 0.5 + 1]),
    # trace
    "trace": (lambda T, x: T.trace(x), [M33]),
    "trace_wide": (lambda T, x: x.trace(), [M34]),
    "trace_tall": (lambda T, x: T.trace(x), [M43]),
    "trace_int32": (lambda T, x: T.trace(x), [_i(3, 3).astype("int32")]),
    "trace_empty": (lambda T, x: T.trace(x), [np.zeros((0, 2), "float32")]),
    "trace_transposed": (lambda T, x: T.trace(x.t()), [M34]),
    "trace_half": (lambda T, x: T.trace(x.half()), [M33]),
    # tensordot
    "tensordot_2": (lambda T, x, y: T.tensordot(x, y), [B234, _r(3, 4, 5)]),
    "tensordot_1": (lambda T, x, y: T.tensordot(x, y, 1), [M23, M34]),
    "tensordot_0": (lambda T, x, y: T.tensordot(x, y, 0), [V2, M23]),
    "tensordot_lists": (lambda T, x, y: T.tensordot(x, y, ([0, 2], [0, 1])), [B234, B245]),
    "tensordot_neg_dims": (lambda T, x, y: T.tensordot(x, y, ([-1], [-2])), [B234, B245]),
    "tensordot_tensor_dims": (lambda T, x, y: T.tensordot(x, y, T.tensor([[1], [0]])),
                              [M23, M34]),
    "tensordot_tensor_int": (lambda T, x, y: T.tensordot(x, y, T.tensor(1)), [M23, M34]),
    "tensordot_size_one": (lambda T, x, y: T.tensordot(x, y, ([1], [0])), [_r(2, 1), M34]),
    "tensordot_size_one_other": (lambda T, x, y: T.tensordot(x, y, ([1], [0])), [M23, _r(1, 4)]),
    "tensordot_int": (lambda T, x, y: T.tensordot(x, y, 1), [_i(2, 3), _i(3, 4)]),
    # baddbmm / addbmm / addmv / addr
    "baddbmm": (lambda T, c, x, y: T.baddbmm(c, x, y), [_r(2, 3, 5), B234, B245]),
    "baddbmm_scaled": (lambda T, c, x, y: c.baddbmm(x, y, beta=0.5, alpha=-2),
                       [_r(2, 3, 5), B234, B245]),
    "baddbmm_broadcast": (lambda T, c, x, y: T.baddbmm(c, x, y, alpha=3), [_r(5), B234, B245]),
    "baddbmm_beta0_nan": (lambda T, c, x, y: T.baddbmm(c, x, y, beta=0),
                          [np.full((2, 3, 5), NAN, "float32"), B234, B245]),
    "baddbmm_transposed": (lambda T, c, x, y: T.baddbmm(c, x.transpose(1, 2), y),
                           [_r(2, 3, 5), _r(2, 4, 3), B245]),
    "baddbmm_int": (lambda T, c, x, y: T.baddbmm(c, x, y, beta=1.5, alpha=2.5),
                    [_i(2, 3, 5), _i(2, 3, 4), _i(2, 4, 5)]),
    "addbmm": (lambda T, c, x, y: T.addbmm(c, x, y), [_r(3, 5), B234, B245]),
    "addbmm_scaled": (lambda T, c, x, y: c.addbmm(x, y, beta=2, alpha=0.5), [_r(3, 5), B234, B245]),
    "addbmm_broadcast": (lambda T, c, x, y: T.addbmm(c, x, y), [_r(1, 5), B234, B245]),
    "addbmm_beta0_nan": (lambda T, c, x, y: T.addbmm(c, x, y, beta=0),
                         [np.full((3, 5), NAN, "float32"), B234, B245]),
    "addbmm_no_batches": (lambda T, c, x, y: T.addbmm(c, x, y, beta=2),
                          [_r(3, 5), _r(0, 3, 4), _r(0, 4, 5)]),
    "addbmm_int": (lambda T, c, x, y: T.addbmm(c, x, y), [_i(3, 5), _i(2, 3, 4), _i(2, 4, 5)]),
    "addmv": (lambda T, c, m, v: T.addmv(c, m, v), [V2, M23, V3]),
    "addmv_scaled": (lambda T, c, m, v: c.addmv(m, v, beta=-1, alpha=0.25), [V2, M23, V3]),
    "addmv_0d_input": (lambda T, c, m, v: T.addmv(c, m, v), [S, M23, V3]),
    "addmv_1_input": (lambda T, c, m, v: T.addmv(c, m, v), [_r(1), M23, V3]),
    "addmv_beta0_nan": (lambda T, c, m, v: T.addmv(c, m, v, beta=0), [np.full(2, NAN, "float32"),
                                                                       M23, V3]),
    "addmv_transposed": (lambda T, c, m, v: T.addmv(c, m.t(), v), [V3, M23, V2]),
    "addmv_int": (lambda T, c, m, v: T.addmv(c, m, v, alpha=2), [_i(2), _i(2, 3), _i(3)]),
    "addr": (lambda T, c, u, v: T.addr(c, u, v), [M23, V2, V3]),
    "addr_scaled": (lambda T, c, u, v: c.addr(u, v, beta=3, alpha=-0.5), [M23, V2, V3]),
    "addr_broadcast": (lambda T, c, u, v: T.addr(c, u, v), [_r(1), V2, V3]),
    "addr_beta0_nan": (lambda T, c, u, v: T.addr(c, u, v, beta=0), [NAN23, V2, V3]),
    "addr_int": (lambda T, c, u, v: T.addr(c, u, v, beta=2, alpha=3), [_i(2, 3), _i(2), _i(3)]),
    "addr_promote": (lambda T, c, u, v: T.addr(c, u, v), [_i(2, 3), V2, V3]),
    "addr_bool": (lambda T, c, u, v: T.addr(c, u, v), [_i(2, 3) > 0, BOOL3[:2], BOOL3]),
    "addr_bool_beta0": (lambda T, c, u, v: T.addr(c, u, v, beta=0, alpha=2),
                        [_i(2, 3) > 0, BOOL3[:2], BOOL3]),
    "addr_bool_alpha0": (lambda T, c, u, v: T.addr(c, u, v, beta=False, alpha=False),
                         [_i(2, 3) > 0, BOOL3[:2], BOOL3]),
    # vdot / inner / chain_matmul
    "vdot": (lambda T, x, y: T.vdot(x, y), [V3, _r(3)]),
    "vdot_method_int": (lambda T, x, y: x.vdot(y), [_i(4), _i(4)]),
    "vdot_strided": (lambda T, x, y: T.vdot(x[::2], y), [_r(6), V3]),
    "inner_2d": (lambda T, x, y: T.inner(x, y), [M23, M43]),
    "inner_1d": (lambda T, x, y: x.inner(y), [V3, _r(3)]),
    "inner_0d": (lambda T, s, y: T.inner(s, y), [S, M23]),
    "inner_3d_2d": (lambda T, x, y: T.inner(x, y), [B234, _r(5, 4)]),
    "inner_int": (lambda T, x, y: T.inner(x, y), [_i(2, 3), _i(3)]),
    "chain_matmul_one": (lambda T, x: T.chain_matmul(x), [M23]),
    "chain_matmul_two": (lambda T, x, y: T.chain_matmul(x, y), [M23, M34]),
    "chain_matmul_three_left": (lambda T, a, b, c: T.chain_matmul(a, b, c),
                                [_r(2, 3), _r(3, 4), _r(4, 8)]),
    "chain_matmul_three_right": (lambda T, a, b, c: T.chain_matmul(a, b, c),
                                 [_r(8, 4), _r(4, 3), _r(3, 2)]),
    "chain_matmul_four": (lambda T, a, b, c, d: T.chain_matmul(a, b, c, d),
                          [_r(5, 2), _r(2, 6), _r(6, 1), _r(1, 4)]),
    "chain_matmul_int": (lambda T, a, b: T.chain_matmul(a, b), [_i(2, 3), _i(3, 2)]),
}

NAMED = ("outer", "kron_2d", "cross_dim1", "trace", "baddbmm", "addbmm", "addmv", "addr",
         "vdot", "einsum_transpose", "einsum_trace", "chain_matmul_one")

SMOOTH = ("einsum_bmm", "einsum_rowdot", "einsum_mm_out_permuted", "einsum_diag", "einsum_trace",
          "einsum_diag_then_contract", "einsum_three", "einsum_bilinear", "einsum_ellipsis_batch",
          "einsum_broadcast_one", "einsum_broadcast_contract", "einsum_outer", "outer", "kron_2d",
          "cross_dim1", "cross_broadcast", "trace_wide", "tensordot_lists",
          "tensordot_size_one", "baddbmm_scaled", "baddbmm_broadcast", "addbmm_scaled",
          "addmv_scaled", "addmv_0d_input", "addr_scaled", "addr_broadcast", "vdot", "inner_3d_2d",
          "chain_matmul_four")


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name: str, device: str) -> None:
    fn, arrays = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # chain_matmul's and cross's deprecation warnings
        compare(fn, arrays, device, names=name in NAMED)


@pytest.mark.parametrize("name", SMOOTH)
def test_gradcheck(name: str, device: str) -> None:
    fn, arrays = CASES[name]
    xs = [ag.tensor(a.astype("float64"), device=device, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda *xs: fn(ag, *xs), xs, eps=1e-6, atol=1e-5, rtol=1e-3)
        assert gradgradcheck(lambda *xs: fn(ag, *xs), xs, eps=1e-6, atol=1e-5, rtol=1e-3)


OUT_CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray], tuple[int, ...]]] = {
    "outer": (lambda T, x, y, out: T.outer(x, y, out=out), [V2, V3], (2, 3)),
    "ger": (lambda T, x, y, out: T.ger(x, y, out=out), [V2, V3], (0,)),
    "kron": (lambda T, x, y, out: T.kron(x, y, out=out), [V2, M23], (2, 6)),
    "cross": (lambda T, x, y, out: T.cross(x, y, dim=0, out=out), [M33, M33 * 2], (3, 3)),
    "tensordot": (lambda T, x, y, out: T.tensordot(x, y, 1, out=out), [M23, M34], (0,)),
    "baddbmm": (lambda T, c, x, y, out: T.baddbmm(c, x, y, out=out), [_r(2, 3, 5), B234, B245],
                (2, 3, 5)),
    "addbmm": (lambda T, c, x, y, out: T.addbmm(c, x, y, alpha=2, out=out),
               [_r(3, 5), B234, B245], (3, 5)),
    "addmv": (lambda T, c, m, v, out: T.addmv(c, m, v, out=out), [V2, M23, V3], (2,)),
    "addr": (lambda T, c, u, v, out: T.addr(c, u, v, out=out), [M23, V2, V3], (2, 3)),
    "vdot": (lambda T, x, y, out: T.vdot(x, y, out=out), [V3, V3], ()),
    "inner": (lambda T, x, y, out: T.inner(x, y, out=out), [M23, M43], (2, 4)),
    "chain_matmul": (lambda T, x, y, out: T.chain_matmul(x, y, out=out), [M23, M34], (0,)),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out(name: str, device: str) -> None:
    fn, arrays, shape = OUT_CASES[name]

    def run(T: Any, dev: str) -> Any:
        out = T.empty(shape, device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fn(T, *(T.tensor(a, device=dev) for a in arrays), out)
        assert res is out
        return out

    ours, theirs = run(ag, device), run(torch, "cpu")
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-5, atol=1e-6)


INPLACE: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "baddbmm_": (lambda T, c, x, y: c.baddbmm_(x, y, beta=0.5, alpha=2), [_r(2, 3, 5), D234.astype(
        "float32"), B245]),
    "addbmm_": (lambda T, c, x, y: c.addbmm_(x, y), [_r(3, 5), B234, B245]),
    "addmv_": (lambda T, c, m, v: c.addmv_(m, v, alpha=3), [V2, M23, V3]),
    "torch_addmv_": (lambda T, c, m, v: T.addmv_(c, m, v, beta=0), [V2, M23, V3]),
    "addr_": (lambda T, c, u, v: c.addr_(u, v, beta=2), [M23, V2, V3]),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace(name: str, device: str) -> None:
    fn, arrays = INPLACE[name]

    def run(T: Any, dev: str) -> Any:
        xs = [T.tensor(a.astype("float64"), device=dev, requires_grad=True) for a in arrays]
        c = xs[0] * 1
        res = fn(T, c, *xs[1:])
        assert res is c
        grads = T.autograd.grad((c * c).sum(), xs)
        return (c.detach(), *grads), c.grad_fn.name()

    (ours, our_name), (theirs, their_name) = run(ag, device), run(torch, "cpu")
    assert our_name == their_name
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(_np(o), _np(t), rtol=1e-10, atol=1e-12)


def test_einsum_kinds_of_output(device: str) -> None:
    """The identity equation gives a new tensor (a view), never the operand itself."""
    x = ag.tensor(M23, device=device)
    y = ag.einsum("ij->ij", x)
    assert y is not x and y.shape == x.shape


def test_chain_matmul_warns_once() -> None:
    from autograd_gpu.functions import products_fused

    products_fused._warned_chain = False
    x = ag.ones(2, 2)
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated"):
        ag.chain_matmul(x, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.chain_matmul(x, x)


VMAPPED: dict[str, Callable[[Any], Any]] = {
    "einsum_bmm": lambda t: ag.einsum("ij,kj->ik", t, t * 2),
    "einsum_diag": lambda t: ag.einsum("ii->i", t[:, :3]),
    "einsum_rowdot": lambda t: ag.einsum("ij,ij->i", t, t),
    "outer": lambda t: ag.outer(t[0], t[1]),
    "kron": lambda t: ag.kron(t, t[:2, :2]),
    "cross": lambda t: ag.cross(t[:, :3], t[:, 1:4], dim=1),
    "trace": lambda t: ag.trace(t),
    "tensordot": lambda t: ag.tensordot(t, t.t(), 1),
    "baddbmm": lambda t: ag.baddbmm(t[:1, :1], t.unsqueeze(0), t.t().unsqueeze(0), alpha=2),
    "addbmm": lambda t: ag.addbmm(t[0, 0], t.unsqueeze(0), t.t().unsqueeze(0)),
    "addmv": lambda t: ag.addmv(t[:, 0], t, t[0], beta=0.5),
    "addr": lambda t: ag.addr(t, t[:, 0], t[0]),
    "vdot": lambda t: ag.vdot(t[0], t[1]),
    "inner": lambda t: ag.inner(t, t),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap(name: str, device: str) -> None:
    """vmap gives each sample's result (batching rules or the per-sample fallback)."""
    f = VMAPPED[name]
    x = ag.tensor(_r(4, 3, 5), device=device)
    out = ag.func.vmap(f)(x)
    for i in range(4):
        np.testing.assert_allclose(_np(out[i]), _np(f(x[i])), rtol=1e-5, atol=1e-6)


def test_ger_warns_once() -> None:
    from autograd_gpu.functions import products

    products._warned_ger = False
    x = ag.ones(2)
    with pytest.warns(UserWarning, match="torch.ger is deprecated"):
        ag.ger(x, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.ger(x, x)
