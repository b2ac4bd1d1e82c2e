"""The manip family against torch: triangles, rolls, flips, rotations, repetition, diagonals,
splits, stacks, grids, combinations, broadcasting, block diagonals, differences and the
strided views (``diagonal``, ``unfold``, ``as_strided``); their storage sharing is tested in
``test_manip_views.py``.

Each program runs under both libraries on contiguous, transposed, strided, permuted, 0-d and
empty inputs where they apply; the results must agree in values, dtype, shape, strides (of
dims longer than 1), grad_fn name and the gradients of ``sum(out * w)``. Then gradcheck and
gradgradcheck in float64, ``out=`` and the in-place forms.
PyTorch's errors for bad arguments are in ``tests/misuse/test_manip.py``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck


def _arange(m: Any, dev: str, *shape: int, dtype: str = "float64") -> Any:
    n = 1
    for s in shape:
        n *= s
    kw = {"device": dev} if m is ag else {}
    return m.arange(n, **kw).to(getattr(m, dtype)).reshape(shape)


# Inputs: a leaf (float64, requiring grad) and the tensor the op gets (a view of the leaf).
INPUTS: dict[str, Callable[[Any], Any]] = {
    "c": lambda leaf: leaf,
    "t": lambda leaf: leaf.t(),
    "s": lambda leaf: leaf[:, ::2],
    "p": lambda leaf: leaf.permute(2, 0, 1),
    "v": lambda leaf: leaf,
    "0": lambda leaf: leaf,
    "e": lambda leaf: leaf,
}
SHAPES = {"c": (3, 4), "t": (4, 3), "s": (3, 8), "p": (3, 4, 5), "v": (5,), "0": (), "e": (0, 3)}
MATRICES, ALL_DIMS = "ctsp", "ctspv0e"

Op = Callable[[Any, Any, str], Any]

# name -> (input kinds, program(m, x, dev))
OPS: dict[str, tuple[str, Op]] = {
    # triangles
    "tril": ("ctspe", lambda m, x, d: m.tril(x)),
    "tril_above": ("ctsp", lambda m, x, d: x.tril(1)),
    "tril_below": ("ctsp", lambda m, x, d: m.tril(x, -2)),
    "tril_past": ("ct", lambda m, x, d: x.tril(-7)),
    "triu": ("ctspe", lambda m, x, d: m.triu(x)),
    "triu_above": ("ctsp", lambda m, x, d: x.triu(2)),
    "triu_below": ("ctsp", lambda m, x, d: m.triu(x, -1)),
    # rolls, flips, rotations
    "roll0": (ALL_DIMS.replace("0", ""), lambda m, x, d: m.roll(x, 1, 0)),
    "roll_neg": ("ctspv", lambda m, x, d: x.roll(-2, -1)),
    "roll_big": ("ctsv", lambda m, x, d: x.roll(7, 0)),
    "roll_two": ("ctsp", lambda m, x, d: x.roll((1, -3), (0, 1))),
    "roll_same_dim": ("ctsp", lambda m, x, d: x.roll((1, 1), (0, 0))),
    "roll_flat": (ALL_DIMS, lambda m, x, d: m.roll(x, 3)),
    "flip0": ("ctspve", lambda m, x, d: m.flip(x, (0,))),
    "flip_all": ("ctsp", lambda m, x, d: x.flip(*range(x.ndim))),
    "flip_last": ("ctspv", lambda m, x, d: x.flip(-1)),
    "flip_none": ("ct0", lambda m, x, d: m.flip(x, ())),
    "flip_0d": ("0", lambda m, x, d: m.flip(x, [0])),
    "fliplr": ("ctsp", lambda m, x, d: m.fliplr(x)),
    "flipud": ("ctspv", lambda m, x, d: x.flipud()),
    "rot90": ("ctsp", lambda m, x, d: m.rot90(x)),
    "rot90_2": ("ctsp", lambda m, x, d: x.rot90(2)),
    "rot90_3": ("ctsp", lambda m, x, d: x.rot90(3, [0, 1])),
    "rot90_0": ("ctsp", lambda m, x, d: x.rot90(0)),
    "rot90_neg": ("ctsp", lambda m, x, d: m.rot90(x, -1, (1, 0))),
    "rot90_5": ("p", lambda m, x, d: x.rot90(5, (2, 0))),
    "rot90_last": ("p", lambda m, x, d: x.rot90(1, (-1, -2))),
    # repetition
    "repeat_interleave": (ALL_DIMS, lambda m, x, d: x.repeat_interleave(2)),
    "repeat_interleave_dim": ("ctspe", lambda m, x, d: m.repeat_interleave(x, 3, 1)),
    "repeat_interleave_neg_dim": ("ctsp", lambda m, x, d: x.repeat_interleave(2, -1)),
    "repeat_interleave_once": ("ctsp", lambda m, x, d: x.repeat_interleave(1, 0)),
    "repeat_interleave_zero": ("ctsv", lambda m, x, d: x.repeat_interleave(0, 0)),
    "repeat_interleave_size": ("ct", lambda m, x, d: x.repeat_interleave(2, 0, output_size=2 * x.shape[0])),
    "repeat_interleave_tensor": ("ctsp", lambda m, x, d: x.repeat_interleave(
        _counts(m, d, x.shape[0]), 0)),
    "repeat_interleave_tensor_flat": ("v", lambda m, x, d: m.repeat_interleave(
        x, _counts(m, d, 5))),
    "repeat_interleave_tensor_one": ("ct", lambda m, x, d: x.repeat_interleave(
        m.tensor([2], device=d) if m is ag else m.tensor([2]), 1)),
    "repeat_interleave_tensor_0d": ("ct", lambda m, x, d: x.repeat_interleave(
        m.tensor(2, device=d) if m is ag else m.tensor(2), 1)),
    "tile": (ALL_DIMS, lambda m, x, d: m.tile(x, (2,))),
    "tile_more": ("ctv0", lambda m, x, d: x.tile(2, 1, 3)),
    "tile_none": ("ct0", lambda m, x, d: m.tile(x, ())),
    "tile_zero": ("ct", lambda m, x, d: x.tile((0, 2))),
    # diagonals
    "diagonal": ("ctspe", lambda m, x, d: m.diagonal(x)),
    "diagonal_above": ("ctsp", lambda m, x, d: x.diagonal(1)),
    "diagonal_below": ("ctsp", lambda m, x, d: x.diagonal(-2)),
    "diagonal_past": ("ct", lambda m, x, d: x.diagonal(9)),
    "diagonal_dims": ("p", lambda m, x, d: m.diagonal(x, 1, 2, 0)),
    "diagonal_neg_dims": ("p", lambda m, x, d: x.diagonal(-1, -1, -3)),
    "diag_matrix": ("ctse", lambda m, x, d: m.diag(x)),
    "diag_matrix_above": ("cts", lambda m, x, d: x.diag(2)),
    "diag_matrix_below": ("cts", lambda m, x, d: m.diag(x, -1)),
    "diag_vector": ("v", lambda m, x, d: m.diag(x)),
    "diag_vector_off": ("v", lambda m, x, d: x.diag(-2)),
    "diag_embed": ("ctspv", lambda m, x, d: m.diag_embed(x)),
    "diag_embed_off": ("ctsv", lambda m, x, d: x.diag_embed(1)),
    "diag_embed_dims": ("ctp", lambda m, x, d: m.diag_embed(x, -2, 0, 2)),
    "diag_embed_dims_neg": ("ctp", lambda m, x, d: m.diag_embed(x, 1, -1, 0)),
    "diagflat": (ALL_DIMS, lambda m, x, d: m.diagflat(x)),
    "diagflat_off": ("ctv", lambda m, x, d: x.diagflat(-3)),
    # splits
    "tensor_split": ("ctspve", lambda m, x, d: m.tensor_split(x, 3)),
    "tensor_split_dim": ("ctsp", lambda m, x, d: x.tensor_split(2, 1)),
    "tensor_split_many": ("ctsv", lambda m, x, d: x.tensor_split(7, -1)),
    "tensor_split_indices": ("ctspv", lambda m, x, d: m.tensor_split(x, [1, 2], 0)),
    "tensor_split_odd_indices": ("ctsv", lambda m, x, d: x.tensor_split([-1, 2, 9], -1)),
    "tensor_split_tensor": ("ctv", lambda m, x, d: m.tensor_split(x, m.tensor([1, 3]), 0)),
    "tensor_split_tensor_0d": ("ctv", lambda m, x, d: x.tensor_split(m.tensor(2))),
    "hsplit": ("ct", lambda m, x, d: m.hsplit(x[:, :2], 2)),
    "hsplit_vector": ("v", lambda m, x, d: x.hsplit([1, 3])),
    "hsplit_args": ("ct", lambda m, x, d: x.hsplit(1, 2)),
    "vsplit": ("ctsp", lambda m, x, d: m.vsplit(x, [1])),
    "dsplit": ("p", lambda m, x, d: m.dsplit(x, 2)),
    # stacks
    "hstack": (ALL_DIMS, lambda m, x, d: m.hstack([x, x])),
    "hstack_mixed": ("v0", lambda m, x, d: m.hstack((x, x.reshape(-1)[:1], x * 2))),
    "vstack": (ALL_DIMS, lambda m, x, d: m.vstack([x, x * 2])),
    "row_stack": ("ctv", lambda m, x, d: m.row_stack([x, x])),
    "dstack": (ALL_DIMS, lambda m, x, d: m.dstack([x, x])),
    "column_stack": ("ctsv0", lambda m, x, d: m.column_stack([x, x])),
    "column_stack_mixed": ("v", lambda m, x, d: m.column_stack([x, x.reshape(5, 1), x])),
    # grids and combinations
    "meshgrid_ij": ("v0", lambda m, x, d: m.meshgrid(x, x[:2] if x.ndim else x, indexing="ij")),
    "meshgrid_xy": ("v", lambda m, x, d: m.meshgrid(x, x[:2], x[1:4], indexing="xy")),
    "meshgrid_list": ("v", lambda m, x, d: m.meshgrid([x[:3], x], indexing="xy")),
    "meshgrid_one": ("v0", lambda m, x, d: m.meshgrid(x, indexing="xy")),
    "cartesian_prod": ("v", lambda m, x, d: m.cartesian_prod(x, x[:2])),
    "cartesian_prod_three": ("v", lambda m, x, d: m.cartesian_prod(x[:2], x, x[3:])),
    "cartesian_prod_one": ("v", lambda m, x, d: m.cartesian_prod(x)),
    "combinations": ("v", lambda m, x, d: m.combinations(x)),
    "combinations_3": ("v", lambda m, x, d: m.combinations(x, 3)),
    "combinations_1": ("v", lambda m, x, d: m.combinations(x, r=1)),
    "combinations_too_many": ("v", lambda m, x, d: m.combinations(x, 6)),
    "combinations_replacement": ("v", lambda m, x, d: m.combinations(x, 2, True)),
    "combinations_replacement_3": ("v", lambda m, x, d: m.combinations(
        x[:3], 3, with_replacement=True)),
    # at least n dims, broadcasting
    "atleast_1d": (ALL_DIMS, lambda m, x, d: m.atleast_1d(x)),
    "atleast_2d": (ALL_DIMS, lambda m, x, d: m.atleast_2d(x)),
    "atleast_3d": (ALL_DIMS, lambda m, x, d: m.atleast_3d(x)),
    "atleast_many": ("v0", lambda m, x, d: m.atleast_2d(x, x * 2)),
    "atleast_list": ("v0", lambda m, x, d: m.atleast_3d([x, x * 2])),
    "broadcast_to": ("v0", lambda m, x, d: m.broadcast_to(x, (2, 5) if x.ndim else (2, 3))),
    "broadcast_to_keep": ("ct", lambda m, x, d: x.broadcast_to((2, -1, x.shape[1]))),
    "broadcast_tensors": ("ctv0", lambda m, x, d: m.broadcast_tensors(x, x.reshape(-1)[:1])),
    "block_diag": ("ctsv0e", lambda m, x, d: m.block_diag(x, x * 2)),
    "block_diag_mixed": ("ctv", lambda m, x, d: m.block_diag(x[:1], x, x.reshape(-1)[:2])),
    # flat, swapped, differences
    "ravel": (ALL_DIMS, lambda m, x, d: m.ravel(x)),
    "swapdims": ("ctsp", lambda m, x, d: m.swapdims(x, 0, -1)),
    "swapdims_method": ("p", lambda m, x, d: x.swapdims(1, 2)),
    "diff": ("ctspve", lambda m, x, d: m.diff(x)),
    "diff_dim0": ("ctsp", lambda m, x, d: x.diff(dim=0)),
    "diff_n": ("ctsv", lambda m, x, d: m.diff(x, 2)),
    "diff_past": ("ctv", lambda m, x, d: m.diff(x, 9, 0)),
    "diff_n0": ("ctv", lambda m, x, d: m.diff(x, 0)),
    "diff_prepend": ("ctv", lambda m, x, d: m.diff(x, prepend=x[..., :2] * 3)),
    "diff_append": ("ctv", lambda m, x, d: x.diff(2, 0, append=x[:1] * 2)),
    "diff_both": ("v", lambda m, x, d: m.diff(x, 1, -1, x[:1], x[2:] * 5)),
    # strided views
    "unfold": ("ctspv", lambda m, x, d: x.unfold(0, 2, 1)),
    "unfold_step": ("ctsp", lambda m, x, d: x.unfold(-1, 2, 3)),
    "unfold_whole": ("ctv", lambda m, x, d: x.unfold(0, x.shape[0], 1)),
    "unfold_empty_window": ("ctv", lambda m, x, d: x.unfold(1 if x.ndim > 1 else 0, 0, 2)),
    "unfold_0d": ("0", lambda m, x, d: x.unfold(0, 1, 1)),
    "unfold_0d_empty": ("0", lambda m, x, d: x.unfold(-1, 0, 3)),
    "unfold_empty": ("e", lambda m, x, d: x.unfold(1, 2, 1)),
    "as_strided": ("c", lambda m, x, d: m.as_strided(x, (2, 2), (1, 2))),
    "as_strided_offset": ("ct", lambda m, x, d: x.as_strided((3, 2), (2, 1), 3)),
    "as_strided_overlap": ("c", lambda m, x, d: x.as_strided((3, 3), (1, 1))),
    "as_strided_zero_stride": ("c", lambda m, x, d: x.as_strided((2, 3), (0, 2), 1)),
    "as_strided_of_slice": ("c", lambda m, x, d: x[1:].as_strided((2, 2), (4, 1))),
    "as_strided_before_slice": ("c", lambda m, x, d: x[1:, 1:].as_strided((2, 2), (1, 4), 0)),
    "as_strided_of_expand": ("v", lambda m, x, d: x.expand(3, 5).as_strided((2, 3), (1, 1))),
    "as_strided_0d": ("c", lambda m, x, d: x.as_strided((), (), 5)),
    "as_strided_empty": ("c", lambda m, x, d: x.as_strided((0, 4), (100, 1), 50)),
    "view_as": ("c", lambda m, x, d: x.view_as(x.t().reshape(4, 3))),
    "reshape_as": ("t", lambda m, x, d: x.reshape_as(x.t())),
    "expand_as": ("v", lambda m, x, d: x.expand_as(m.zeros(2, 5))),
}


def _counts(m: Any, dev: str, n: int) -> Any:
    data = [(i * 2) % 3 for i in range(n)]
    return m.tensor(data, device=dev) if m is ag else m.tensor(data)


def _leaf(m: Any, dev: str, kind: str) -> Any:
    return _arange(m, dev, *SHAPES[kind]).requires_grad_()


def _run(m: Any, dev: str, op: str, kind: str) -> tuple[Any, Any]:
    leaf = _leaf(m, dev, kind)
    return OPS[op][1](m, INPUTS[kind](leaf), dev), leaf


def _describe(out: Any) -> Any:
    outs = out if isinstance(out, tuple) else (out,)
    return [(type(out).__name__, tuple(o.shape), str(o.dtype).split(".")[-1],
             o.grad_fn.name() if o.grad_fn is not None else None,
             tuple(s if n > 1 else None for s, n in zip(o.stride(), o.shape)) if o.numel() > 1
             else None) for o in outs]


def _loss(outs: Any) -> Any:
    total = None
    for o in outs if isinstance(outs, tuple) else (outs,):
        if not o.requires_grad:
            continue
        w = o.new_tensor(np.arange(1, o.numel() + 1, dtype=np.float64).reshape(tuple(o.shape)))
        term = (o * w).sum()
        total = term if total is None else total + term
    return total


def _values(out: Any) -> list[Any]:
    return [np.asarray(o.detach().cpu().numpy() if isinstance(o, ag.Tensor) else o.detach())
            for o in (out if isinstance(out, tuple) else (out,))]


CASES = [(op, kind) for op, (kinds, _) in OPS.items() for kind in kinds]


@pytest.mark.parametrize("op", sorted(OPS))
def test_matches_torch(device: str, op: str) -> None:
    for kind in OPS[op][0]:
        theirs, t_leaf = _run(torch, "cpu", op, kind)
        ours, a_leaf = _run(ag, device, op, kind)
        assert _describe(ours) == _describe(theirs), kind
        for a, b in zip(_values(ours), _values(theirs)):
            np.testing.assert_array_equal(a, b, err_msg=kind)
        t_loss, a_loss = _loss(theirs), _loss(ours)
        assert (a_loss is None) == (t_loss is None), kind
        if t_loss is None:
            continue
        t_loss.backward()
        a_loss.backward()
        np.testing.assert_array_equal(a_leaf.grad.cpu().numpy(), t_leaf.grad.numpy(),
                                      err_msg=kind)


# ---- dtypes other than float: values, dtype and promotion --------------------------------------

DTYPE_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "tril": lambda m, x: x.tril(1),
    "triu": lambda m, x: m.triu(x, -1),
    "roll": lambda m, x: x.roll((1, 2), (0, 1)),
    "flip": lambda m, x: x.flip(1),
    "rot90": lambda m, x: x.rot90(),
    "repeat_interleave": lambda m, x: x.repeat_interleave(2, 1),
    "tile": lambda m, x: x.tile(2),
    "diag": lambda m, x: m.diag(x),
    "diag_embed": lambda m, x: m.diag_embed(x),
    "diagonal": lambda m, x: x.diagonal(1),
    "unfold": lambda m, x: x.unfold(1, 2, 1),
    "as_strided": lambda m, x: x.as_strided((2,), (5,)),
    "combinations": lambda m, x: m.combinations(x[0]),
    "cartesian_prod": lambda m, x: m.cartesian_prod(x[0], x[1]),
    "meshgrid": lambda m, x: m.meshgrid(x[0], x[1], indexing="ij"),
    "block_diag": lambda m, x: m.block_diag(x, x[0]),
    "block_diag_promote": lambda m, x: m.block_diag(x, x[0].double(), x[0, 0].float()),
    "block_diag_0d_promote": lambda m, x: m.block_diag(x, x[0, 0].double()),
    "hstack_promote": lambda m, x: m.hstack([x, x.float()]),
    "diff": lambda m, x: m.diff(x),
    "diff_promote": lambda m, x: m.diff(x, prepend=x[:, :1].double()),
    "tensor_split": lambda m, x: m.tensor_split(x, 2, 1),
    "block_diag_none": lambda m, x: m.block_diag(),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32", "float16"])
def test_dtypes(device: str, dtype: str) -> None:
    for name, fn in DTYPE_OPS.items():
        outs = []
        for m, dev in ((torch, "cpu"), (ag, device)):
            x = _arange(m, dev, 3, 4, dtype="int64") % 3
            outs.append(fn(m, x.to(getattr(m, dtype))))
        ours, theirs = outs[1], outs[0]
        assert _describe(ours) == _describe(theirs), name
        for a, b in zip(_values(ours), _values(theirs)):
            np.testing.assert_array_equal(a, b, err_msg=name)


def test_nan_and_inf_pass_through(device: str) -> None:
    for m, dev in ((torch, "cpu"), (ag, device)):
        x = _arange(m, dev, 3, 3)
        x[0, 2] = float("nan")
        x[2, 0] = float("inf")
        assert np.isnan(_values(x.tril())[0][0, 2]) == 0
        assert np.isnan(_values(x.triu())[0][0, 2])
        assert np.isinf(_values(x.flip(0).roll(1, 1))[0]).sum() == 1


def test_index_functions(device: str) -> None:
    for args, kw in [((3, 3), {}), ((3, 4, 1), {}), ((4, 3, -1), {}), ((0, 3), {}),
                     ((3, 4, 10), {}), ((3, 4, -10), {}), ((5, 2, 1), {"dtype": "int32"})]:
        for name in ("tril_indices", "triu_indices"):
            t_kw = {k: getattr(torch, v) for k, v in kw.items()}
            theirs = getattr(torch, name)(*args, **t_kw)
            ours = getattr(ag, name)(*args, device=device,
                                     **{k: getattr(ag, v) for k, v in kw.items()})
            assert _describe(ours) == _describe(theirs), (name, args)
            np.testing.assert_array_equal(_values(ours)[0], _values(theirs)[0])
    for reps in ([1, 0, 3], [2], [], [0, 0]):
        for dtype in ("int64", "int32"):
            theirs = torch.repeat_interleave(torch.tensor(reps, dtype=getattr(torch, dtype)))
            ours = ag.repeat_interleave(ag.tensor(reps, dtype=getattr(ag, dtype), device=device))
            assert _describe(ours) == _describe(theirs)
            np.testing.assert_array_equal(_values(ours)[0], _values(theirs)[0])


# ---- gradcheck and gradgradcheck in float64 ----------------------------------------------------

GRADCHECK: dict[str, tuple[tuple[int, ...], Callable[[Any], Any]]] = {
    "tril": ((3, 4), lambda x: x.tril(-1)),
    "triu": ((2, 3, 3), lambda x: ag.triu(x, 1)),
    "roll": ((3, 4), lambda x: x.roll((1, -1), (0, 1))),
    "roll_flat": ((3, 2), lambda x: x.roll(2)),
    "flip": ((2, 3, 2), lambda x: x.flip(0, 2)),
    "rot90": ((3, 4), lambda x: x.rot90(1)),
    "rot90_3": ((2, 3, 2), lambda x: x.rot90(3, (2, 1))),
    "repeat_interleave": ((2, 3), lambda x: x.repeat_interleave(2, 1)),
    "repeat_interleave_tensor": ((3, 2), lambda x: x.repeat_interleave(
        ag.tensor([2, 0, 1], device=x.device), 0)),
    "tile": ((2, 2), lambda x: x.tile(2, 1, 2)),
    "diagonal": ((3, 4), lambda x: x.diagonal(1)),
    "diagonal_3d": ((2, 3, 3), lambda x: x.diagonal(-1, 2, 1)),
    "diag": ((3, 3), lambda x: ag.diag(x, -1)),
    "diag_vector": ((3,), lambda x: ag.diag(x, 1)),
    "diag_embed": ((2, 3), lambda x: ag.diag_embed(x, 1, 0, 2)),
    "diagflat": ((2, 2), lambda x: x.diagflat(-1)),
    "tensor_split": ((5, 2), lambda x: ag.tensor_split(x, 2)),
    "hstack": ((2, 3), lambda x: ag.hstack([x, x * 2])),
    "dstack": ((2, 3), lambda x: ag.dstack([x, x])),
    "meshgrid": ((3,), lambda x: ag.meshgrid(x, x[:2], indexing="xy")),
    "cartesian_prod": ((3,), lambda x: ag.cartesian_prod(x, x[1:])),
    "combinations": ((4,), lambda x: ag.combinations(x, 3)),
    "block_diag": ((2, 3), lambda x: ag.block_diag(x, x[0], x[0, 0])),
    "broadcast_tensors": ((3,), lambda x: ag.broadcast_tensors(x, x.reshape(3, 1))),
    "diff": ((3, 4), lambda x: ag.diff(x, 2, prepend=x[:, :1])),
    "unfold": ((3, 5), lambda x: x.unfold(1, 3, 1)),
    "unfold_step": ((5, 2), lambda x: x.unfold(0, 2, 2)),
    "as_strided": ((3, 4), lambda x: x.as_strided((3, 3), (1, 2), 1)),
    "as_strided_of_expand": ((3,), lambda x: x.expand(2, 3).as_strided((2, 2), (1, 1))),
    "as_strided_of_slice": ((3, 4), lambda x: x[1:].as_strided((3,), (3,), 5)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(device: str, name: str) -> None:
    shape, fn = GRADCHECK[name]
    x = (ag.arange(1, 1 + int(np.prod(shape)), dtype=ag.float64, device=device).reshape(shape)
         * 0.37).sin().requires_grad_()
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


# ---- out=, in place, warnings ------------------------------------------------------------------

OUT: dict[str, Callable[[Any, Any, Any], Any]] = {
    "tril": lambda m, x, o: m.tril(x, 1, out=o),
    "triu": lambda m, x, o: m.triu(x, out=o),
    "diag": lambda m, x, o: m.diag(x, -1, out=o),
    "diag_vector": lambda m, x, o: m.diag(x[0], out=o),
    "hstack": lambda m, x, o: m.hstack([x, x], out=o),
    "vstack": lambda m, x, o: m.vstack([x, x[0]], out=o),
    "row_stack": lambda m, x, o: m.row_stack([x, x], out=o),
    "dstack": lambda m, x, o: m.dstack([x, x], out=o),
    "column_stack": lambda m, x, o: m.column_stack([x, x[:, 0]], out=o),
    "diff": lambda m, x, o: m.diff(x, out=o),
}


@pytest.mark.parametrize("name", sorted(OUT))
def test_out(device: str, name: str) -> None:
    results = []
    for m, dev in ((torch, "cpu"), (ag, device)):
        x = _arange(m, dev, 3, 4)
        o = _arange(m, dev, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = OUT[name](m, x, o)
        assert r is o
        results.append((_values(o)[0], [str(w.message)[:40] for w in caught]))
    np.testing.assert_array_equal(results[1][0], results[0][0])
    assert results[1][1] == results[0][1]


def test_in_place_triangles(device: str) -> None:
    def program(m: Any, dev: str) -> Any:
        x = _arange(m, dev, 3, 4).requires_grad_()
        y = x * 1
        y.tril_(1)
        z = (x * 1).t()
        z.triu_(-1)
        w = y[1:].triu_()
        names = (y.grad_fn.name(), z.grad_fn.name())
        (y.sum() + (z * z).sum() + w.sum() * 2).backward()
        return names, _values(y)[0], _values(z)[0], x.grad.cpu().numpy()

    ours, theirs = program(ag, device), program(torch, "cpu")
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_array_equal(a, b)


def test_meshgrid_refuses_matrices(device: str) -> None:
    """PyTorch's message prints the tensor (C++'s format: compared up to the colon)."""
    for m, dev in ((torch, "cpu"), (ag, device)):
        with pytest.raises(RuntimeError, match="^torch.meshgrid: Expected 0D or 1D tensor in "
                                               "the tensor list but got:"):
            m.meshgrid(_arange(m, dev, 3), _arange(m, dev, 1, 1), indexing="ij")


def test_meshgrid_warns_without_indexing(device: str) -> None:
    said = {}
    for m, dev in ((torch, "cpu"), (ag, device)):
        v = _arange(m, dev, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = m.meshgrid(v, v[:2])
        said[m] = [str(w.message) for w in caught if w.category is UserWarning]
        assert _values(grids[0])[0].tolist() == [[0, 0], [1, 1], [2, 2]]
    # NOTE: PyTorch warns once per process (TORCH_WARN_ONCE): its words, when it spoke, are ours
    assert len(said[ag]) == 1 and "it will be required to pass the indexing" in said[ag][0]
    assert all(w.startswith(said[ag][0]) for w in said[torch]), said  # NOTE: + "(Triggered..."
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.meshgrid(_arange(ag, device, 3), indexing="ij")
