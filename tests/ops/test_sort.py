"""The sort family against torch: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode
(values, indices, layouts, NaN, ties, gradients), unique / unique_consecutive, searchsorted,
bucketize, histc, bincount, count_nonzero, isin. Errors are in ``tests/misuse/test_sort.py``.

Where PyTorch leaves the index of a tie to its algorithm (``stable=False`` past 16 elements,
``topk``, ``kthvalue``, ``median`` with a dim), values are compared exactly and the indices
must select those values (``gather``) without repeats; elsewhere indices are compared too.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.ops.test_scan import LAYOUTS, _data, _np, _pair, same

DTYPES = ["float32", "float64", "float16", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (1,), (7,), (20,), (3, 4), (2, 0, 3), (2, 3, 5)]
NAN = math.nan


def _cases(dtypes: list[str] = DTYPES) -> list[Any]:
    return [pytest.param(s, d, lay, id=f"{s}-{d}-{lay}") for s in SHAPES for d in dtypes
            for lay in LAYOUTS if lay == "contiguous" or len(s) > 1]


def _dims(shape: tuple[int, ...]) -> list[int]:
    return [*range(max(len(shape), 1)), -1]


def _with_nans(a: np.ndarray, seed: int) -> np.ndarray:
    if a.dtype.kind != "f" or not a.size:
        return a
    a = a.copy()
    a.reshape(-1)[np.random.default_rng(seed).random(a.size) < 0.2] = NAN
    return a


def selects(ours: Any, theirs: Any, x: Any, dim: int, keepdim: bool = True) -> None:
    """Same values as torch's; our indices pick them from ``x`` (ties may pick others)."""
    same(ours[0], theirs[0])
    assert str(ours[1].dtype) == "torch.int64" and tuple(ours[1].shape) == tuple(theirs[1].shape)
    if x.ndim == 0:
        assert int(ours[1]) == 0
        return
    idx = ours[1] if keepdim else ours[1].unsqueeze(dim)
    picked = _np(x.gather(dim, idx))
    want = _np(theirs[0] if keepdim else theirs[0].unsqueeze(dim))
    np.testing.assert_array_equal(picked, want)


# ---- sort --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype,layout", _cases())
def test_sort(shape: tuple[int, ...], dtype: str, layout: str, device: str) -> None:
    t, o = _pair(_with_nans(_data(shape, dtype), 1), device, layout)
    for dim in _dims(shape):
        for desc in (False, True):
            kw = {"dim": dim, "descending": desc, "stable": True}
            same(ag.sort(o, **kw), torch.sort(t, **kw))
            same(o.argsort(**kw), t.argsort(**kw))
            ours, theirs = o.sort(dim, descending=desc), t.sort(dim, descending=desc)
            if o.ndim and o.shape[dim] <= 16:
                same(ours, theirs)  # PyTorch's CPU sort is stable up to 16 elements
            else:
                same(ours[0], theirs[0])
                same(o.gather(dim, ours[1]), theirs[0])
    if len(shape):
        same(ag.msort(o), torch.msort(t))


def test_sort_special(device: str) -> None:
    for data in ([2.0, NAN, 1.0, NAN, 2.0, 1.0], [math.inf, -math.inf, NAN, 0.0, -0.0, 0.0],
                 [NAN, NAN, NAN]):
        t, o = _pair(np.array(data, dtype="float32"), device)
        for desc in (False, True):
            same(ag.sort(o, descending=desc, stable=True), torch.sort(t, descending=desc,
                                                                         stable=True))


def test_sort_long(device: str) -> None:
    """A long sort with many ties: stable indices as torch's stable sort."""
    a = np.random.default_rng(3).integers(0, 50, 5000).astype("float32")
    t, o = _pair(a, device)
    for desc in (False, True):
        same(ag.sort(o, descending=desc, stable=True), torch.sort(t, descending=desc,
                                                                     stable=True))


# ---- selection ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype,layout", _cases([d for d in DTYPES if d != "bool"]))
def test_topk(shape: tuple[int, ...], dtype: str, layout: str, device: str) -> None:
    t, o = _pair(_with_nans(_data(shape, dtype), 2), device, layout)
    for dim in _dims(shape):
        n = t.shape[dim] if t.ndim else 1
        for k in sorted({0, min(1, n), n // 2, n}):
            for largest in (True, False):
                selects(ag.topk(o, k, dim, largest), torch.topk(t, k, dim, largest), o, dim)
                selects(o.topk(k, dim, largest, False), t.topk(k, dim, largest, True), o, dim)


@pytest.mark.parametrize("n,k", [(5000, 10), (5000, 78), (70000, 10), (300, 7)])
@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "int"])
def test_topk_long(n: int, k: int, kind: str, device: str) -> None:
    """Long rows take a candidate path on the CPU: ties, NaN and integers through it."""
    rng = np.random.default_rng(n + k)
    a = rng.permutation(n).astype("float32") if kind == "distinct" else \
        rng.integers(0, 20, n).astype("int64" if kind == "int" else "float32")
    if kind == "nan":
        a[rng.integers(0, n, 3)] = NAN
    for rows in (1, 3):
        t, o = _pair(np.stack([np.roll(a, r) for r in range(rows)]), device)
        for largest in (True, False):
            theirs, ours = torch.topk(t, k, largest=largest), ag.topk(o, k, largest=largest)
            if kind == "distinct":
                same(ours, theirs)
            else:
                selects(ours, theirs, o, 1)
            # NOTE: ties resolve to the first positions, as a stable sort would
            ref = torch.sort(t, descending=largest, stable=True)
            same(ours[1], ref[1][:, :k], strides=False)


@pytest.mark.parametrize("shape,dtype,layout", _cases([d for d in DTYPES if d != "bool"]))
def test_kthvalue_median_mode(shape: tuple[int, ...], dtype: str, layout: str,
                              device: str) -> None:
    base = _data(shape, dtype)
    for nans in (False, True):
        t, o = _pair(_with_nans(base, 4) if nans else base, device, layout)
        same(ag.median(o), torch.median(t))
        same(o.nanmedian(), t.nanmedian())
        for dim in _dims(shape):
            n = t.shape[dim] if t.ndim else 1
            if n == 0:
                continue
            for keep in (False, True):
                for k in sorted({1, (n + 1) // 2, n}):
                    selects(ag.kthvalue(o, k, dim, keep), torch.kthvalue(t, k, dim, keep), o,
                            dim, keep)
                selects(ag.median(o, dim, keep), torch.median(t, dim, keep), o, dim, keep)
                selects(o.nanmedian(dim, keep), t.nanmedian(dim, keep), o, dim, keep)
                # NOTE: PyTorch's CPU mode sorts stably up to 16 elements, with a comparison
                # NaN breaks (its result then depends on where the NaNs stand: not compared)
                if n <= 16 and not nans:
                    same(ag.mode(o, dim, keep), torch.mode(t, dim, keep))
                elif not nans:
                    selects(ag.mode(o, dim, keep), torch.mode(t, dim, keep), o, dim, keep)


def test_selection_exact_indices(device: str) -> None:
    """Distinct values: indices exactly torch's; NaN: the first NaN (median), NaN last (kth)."""
    a = np.random.default_rng(5).permutation(24).reshape(2, 3, 4).astype("float64")
    for arr in (a, _with_nans(a, 6)):
        t, o = _pair(arr, device, "transposed")
        for dim in (0, 1, 2, -1):
            same(ag.median(o, dim), torch.median(t, dim))
            same(ag.nanmedian(o, dim, True), torch.nanmedian(t, dim, True))
            same(ag.kthvalue(o, 2, dim), torch.kthvalue(t, 2, dim))
            same(ag.topk(o, 2, dim), torch.topk(t, 2, dim))
            same(ag.topk(o, 2, dim, largest=False), torch.topk(t, 2, dim, largest=False))
    for data in ([3.0, 1, 2, 1, 2, 3, 0], [3.0, 1, 2, 1, 2, 3, 0, 3], [NAN, 1.0, 1.0],
                 [1.0, NAN, NAN], [NAN, NAN], [True, False, False]):
        t, o = _pair(np.array(data), device)
        same(ag.mode(o), torch.mode(t))
    for data in ([NAN, NAN, NAN], [1.0, NAN, 2.0, 2.0, NAN], []):
        t, o = _pair(np.array(data), device)
        same(ag.nanmedian(o), torch.nanmedian(t))
        same(ag.median(o), torch.median(t))


@pytest.mark.parametrize("kind", ["distinct", "ties", "nan", "all_nan_row", "int"])
@pytest.mark.parametrize("shape,dim", [((3, 201), 1), ((200, 2), 0), ((1, 1000), -1)])
def test_selection_long(shape: tuple[int, int], dim: int, kind: str, device: str) -> None:
    """Long slices take a partition on the CPU: values as torch's, the index the one a stable
    sort puts at the selected position (first occurrence among ties, first NaN)."""
    rng = np.random.default_rng(11)
    a = rng.permutation(shape[0] * shape[1]).reshape(shape).astype("float64")
    if kind in ("ties", "int", "nan", "all_nan_row"):
        a = rng.integers(0, 7, shape).astype("int64" if kind == "int" else "float64")
    if kind == "nan":
        a[rng.random(shape) < 0.1] = NAN
    if kind == "all_nan_row":
        a[0] = NAN
    t, o = _pair(a, device)
    n = t.shape[dim]
    order = torch.sort(t, dim=dim, stable=True).indices
    nans = t.isnan().sum(dim, keepdim=True) if kind in ("nan", "all_nan_row") else \
        torch.zeros_like(order.narrow(dim, 0, 1))
    positions = {
        "kth": torch.full_like(nans, n // 3), "median": torch.where(nans > 0, n - nans, (n - 1) // 2),
        "nanmedian": torch.clamp(n - nans - 1, min=0) // 2,
    }
    for name, pos in positions.items():
        ours = ag.kthvalue(o, n // 3 + 1, dim, True) if name == "kth" else \
            getattr(ag, name)(o, dim, True)
        theirs = torch.kthvalue(t, n // 3 + 1, dim, True) if name == "kth" else \
            getattr(torch, name)(t, dim, True)
        selects(ours, theirs, o, dim)
        same(ours[1], order.gather(dim, pos))
    same(ag.median(o), torch.median(t))
    same(ag.nanmedian(o), torch.nanmedian(t))


# ---- gradients ---------------------------------------------------------------------------------

GRADS: dict[str, Callable[[Any, Any], Any]] = {
    "sort": lambda T, x: T.sort(x, 1)[0],
    "sort_desc_stable": lambda T, x: T.sort(x, dim=0, descending=True, stable=True).values,
    "msort": lambda T, x: T.msort(x),
    "topk": lambda T, x: T.topk(x, 2)[0],
    "topk_smallest_dim0": lambda T, x: T.topk(x, 2, 0, largest=False).values,
    "kthvalue": lambda T, x: T.kthvalue(x, 2, 1)[0],
    "kthvalue_keepdim": lambda T, x: T.kthvalue(x, 3, 0, keepdim=True)[0],
    "median": lambda T, x: T.median(x),
    "median_dim": lambda T, x: T.median(x, 1)[0],
    "nanmedian": lambda T, x: T.nanmedian(x),
    "nanmedian_dim": lambda T, x: T.nanmedian(x, 0, True).values,
    "mode": lambda T, x: T.mode(x, 1)[0],
    "median_0d": lambda T, x: T.median(x[0, 0], 0)[0],
}
GRAD_DATA = {
    "distinct": [[0.5, -1.2, 2.0, 1.5, 0.1], [0.3, 0.7, -0.4, 1.1, -2.0],
                 [2.5, -0.6, 0.9, -1.3, 3.0]],
    "ties": [[1.0, 2.0, 2.0, 1.0, 2.0], [0.5, 0.5, 0.5, 1.0, 0.5], [2.0, 2.0, 2.0, 2.0, 2.0]],
    "nan": [[1.0, NAN, 2.0, 2.0, NAN], [0.5, 1.5, NAN, 1.0, 0.0], [3.0, 1.0, 2.0, 0.0, -1.0]],
}


@pytest.mark.parametrize("data", sorted(GRAD_DATA))
@pytest.mark.parametrize("name", sorted(GRADS))
def test_grad(name: str, data: str, device: str) -> None:
    """The node name and ``.grad`` as torch's (ties: where PyTorch's CPU kernels break them
    as we do, or the median of all, which shares); gradcheck and gradgradcheck."""
    fn = GRADS[name]
    a = np.array(GRAD_DATA[data])
    t, o = _pair(a, device, grad=True)
    yt, yo = fn(torch, t), fn(ag, o)
    assert yo.grad_fn.name() == yt.grad_fn.name()
    w = np.random.default_rng(7).standard_normal(tuple(yt.shape))
    (yt * torch.from_numpy(w)).sum().backward()
    (yo * ag.tensor(w, device=device)).sum().backward()
    if data == "distinct" or name in ("median", "nanmedian") or name.startswith("sort") or \
            name == "msort" or name == "mode":
        same(o.grad, t.grad)
    else:
        assert _np(o.grad).sum() == pytest.approx(_np(t.grad).sum())
    if data == "distinct":
        x = ag.tensor(a, device=device, requires_grad=True)
        assert gradcheck(lambda v: fn(ag, v), (x,), eps=1e-6, atol=1e-5, rtol=1e-3)
        assert gradgradcheck(lambda v: fn(ag, v), (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_unique_and_bincount_refuse_backward(device: str) -> None:
    for fn in (lambda T, x: T.unique(x), lambda T, x: T.unique(x, dim=0),
               lambda T, x: T.unique_consecutive(x), lambda T, x: T.unique(x, return_counts=True)[0],
               lambda T, x: T.bincount(T.tensor([1, 0], device=x.device), weights=x)):
        t, o = _pair(np.array([1.0, 2.0]), device, grad=True)
        yt, yo = fn(torch, t), fn(ag, o)
        assert yo.requires_grad and yo.grad_fn.name() == yt.grad_fn.name()
        assert type(yo.grad_fn).__name__ == type(yt.grad_fn).__name__
        with pytest.raises(Exception) as theirs:
            yt.sum().backward()
        with pytest.raises(type(theirs.value), match=str(theirs.value).split(".")[0]):
            yo.sum().backward()


# ---- unique ------------------------------------------------------------------------------------

UNIQUE_DATA = [
    [3, 1, 2, 1, 3, 3, 0], [[1, 2], [0, 1], [1, 2]], [[3, 1], [2, 1]], [2.0, NAN, 1.0, NAN],
    [1.0, -0.0, 0.0], [1.0, 0.0, -0.0], [True, False, True], [[2.0, 1.0], [NAN, 3], [1, 2], [2, 0]],
    [[1, 1], [1, 1], [2, 1]], 5, [],
]


@pytest.mark.parametrize("data", UNIQUE_DATA, ids=str)
def test_unique(data: Any, device: str) -> None:
    t, o = _pair(np.array(data), device)
    dims = [None] + ([] if t.ndim == 0 or t.numel() == 0 else list(range(t.ndim)) + [-1])
    for dim in dims:
        for inv in (False, True):
            for cnt in (False, True):
                for srt in (True, False):
                    if not (t.ndim and t.dtype.is_floating_point and dim is not None and
                            bool(t.isnan().any())):
                        # NOTE: PyTorch's unique(dim=) values have odd strides (a view of its
                        # sorted copy); ours are C-contiguous
                        same(ag.unique(o, srt, inv, cnt, dim), torch.unique(t, srt, inv, cnt, dim),
                             strides=dim is None)
                same(o.unique_consecutive(inv, cnt, dim), t.unique_consecutive(inv, cnt, dim),
                     strides=dim is None)


def test_unique_empty_and_large(device: str) -> None:
    for shape, dim in (((0,), None), ((2, 0), None), ((2, 0), 1), ((0, 3), 0)):
        t, o = _pair(np.zeros(shape, dtype="float32"), device)
        same(ag.unique(o, return_inverse=True, return_counts=True, dim=dim),
             torch.unique(t, return_inverse=True, return_counts=True, dim=dim), strides=False)
    a = np.random.default_rng(8).integers(0, 30, (40, 3))
    t, o = _pair(a, device)
    for dim in (None, 0, 1):
        same(ag.unique(o, return_inverse=True, return_counts=True, dim=dim),
             torch.unique(t, return_inverse=True, return_counts=True, dim=dim), strides=False)
        same(ag.unique_consecutive(o, True, True, dim), torch.unique_consecutive(t, True, True, dim),
             strides=False)


# ---- searching and counting --------------------------------------------------------------------

SEARCH = [
    ([1.0, 3, 5, 7, 9], [3.0, 6, 9, 0, 10]), ([1.0, 3, 5, 7, 9], [[3.0, 6], [NAN, -1]]),
    ([1.0, 2, NAN], [NAN, 3.0, 2.0, 1.0]), ([1, 3, 3, 3, 5], [3, 4, 0, 6]),
    ([[1, 3, 5], [2, 4, 6]], [[3, 6], [1, 7]]), ([[1.0, 3, NAN], [2, 2, 2]], [[3.0, NAN, 0], [2, 1, 3]]),
    ([1, 3], [2.5, 4.0]), ([1.0, 3.0], [2, 4]), ([], [2.0]), ([1, 3], []), ([1.0, 3, 5], 3),
    ([1.0, 3, 5], 4.5),
]


@pytest.mark.parametrize("seq,values", SEARCH, ids=str)
def test_searchsorted_bucketize(seq: Any, values: Any, device: str) -> None:
    st, so = _pair(np.array(seq), device)
    vt, vo = (values, values) if np.ndim(values) == 0 else _pair(np.array(values), device)
    for right in (False, True):
        for i32 in (False, True):
            same(ag.searchsorted(so, vo, right=right, out_int32=i32),
                 torch.searchsorted(st, vt, right=right, out_int32=i32))
            if st.ndim == 1:
                same(ag.bucketize(vo, so, right=right, out_int32=i32),
                     torch.bucketize(vt, st, right=right, out_int32=i32))
        side = "right" if right else "left"
        same(ag.searchsorted(so, vo, side=side), torch.searchsorted(st, vt, side=side))
    if st.ndim == 1 and st.numel():
        perm = np.random.default_rng(0).permutation(st.numel())
        t_unsorted, o_unsorted = st[perm], so[ag.tensor(perm, device=device)]
        inv_t = torch.from_numpy(np.argsort(perm, kind="stable"))
        same(ag.searchsorted(o_unsorted, vo, sorter=ag.tensor(inv_t.numpy(), device=device)),
             torch.searchsorted(t_unsorted, vt, sorter=inv_t))


def test_searchsorted_large(device: str) -> None:
    rng = np.random.default_rng(9)
    seq = np.sort(rng.integers(0, 100, (3, 200)), axis=1).astype("float64")
    vals = rng.integers(-5, 105, (3, 50)).astype("float64")
    (st, so), (vt, vo) = _pair(seq, device), _pair(vals, device)
    for right in (False, True):
        same(ag.searchsorted(so, vo, right=right), torch.searchsorted(st, vt, right=right))
        same(ag.searchsorted(so[0], vo, right=right), torch.searchsorted(st[0], vt, right=right))


HISTC = [
    ([1.0, 2, 1, 4], 4, 0, 3), ([1.0, 2, 1, 4], 100, 0, 0), ([1.0, 1, 1], 100, 0, 0),
    ([1.0, 2, 1, NAN], 3, 0, 3), ([1.0, 2, math.inf], 3, 0, 3), ([0.0, 1, 2, 3], 3, 0, 3),
    ([0.1, 0.2, 0.3, 0.7, 0.9, 1.0], 10, 0, 1), ([], 3, 0, 0), ([5.0, 6], 4, 2, 2),
]


@pytest.mark.parametrize("data,bins,lo,hi", HISTC, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_histc(data: Any, bins: int, lo: float, hi: float, dtype: str, device: str) -> None:
    t, o = _pair(np.array(data, dtype=dtype), device)
    same(ag.histc(o, bins, lo, hi), torch.histc(t, bins, lo, hi))
    same(o.histc(bins=bins, min=lo, max=hi), t.histc(bins=bins, min=lo, max=hi))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_random(dtype: str, device: str) -> None:
    """Many values on and near bin edges: the bin arithmetic is PyTorch's, in the dtype."""
    rng = np.random.default_rng(10)
    a = np.concatenate([rng.standard_normal(3000), np.round(rng.uniform(-2, 2, 2000), 1)])
    t, o = _pair(a.astype(dtype), device)
    for bins, lo, hi in ((10, -2, 2), (7, -1.3, 0.9), (100, 0, 0), (40, -2, 2)):
        same(ag.histc(o, bins, lo, hi), torch.histc(t, bins, lo, hi))


def test_bincount_count_nonzero_isin(device: str) -> None:
    xt, xo = _pair(np.array([1, 3, 1, 0, 7]), device)
    same(ag.bincount(xo), torch.bincount(xt))
    same(xo.bincount(None, 10), xt.bincount(None, 10))
    for wdt in ("float32", "float64", "float16", "int64", "bool"):
        wt, wo = _pair(np.array([0.5, 1, 2, 1, 3]).astype(wdt), device)
        same(ag.bincount(xo, wo, 3), torch.bincount(xt, wt, 3))
    for dt in ("uint8", "int8", "int32"):
        t, o = _pair(np.array([2, 0, 2], dtype=dt), device)
        same(ag.bincount(o), torch.bincount(t))
    same(ag.bincount(ag.zeros(0, dtype=ag.int64, device=device)),
         torch.bincount(torch.zeros(0, dtype=torch.int64)))
    t, o = _pair(np.array([[0.0, NAN, 2.0], [0.0, 0.0, -1.0]]), device, "transposed")
    for dim in (None, 0, 1, -1, (0, 1), [], (1,)):
        same(ag.count_nonzero(o, dim), torch.count_nonzero(t, dim))
    same(o.count_nonzero(0), t.count_nonzero(0))
    same(o.count_nonzero(dim=1), t.count_nonzero(dim=1))
    same(o.count_nonzero(0, 1), t.count_nonzero(0, 1))
    pairs = [([1, 2, 3, 4], [2, 4]), ([1.0, 2], [2, 4]), ([NAN, 1.0], [NAN, 1.0]),
             ([1, 2], [2.5, 1.0]), ([[1, 2], [3, 4]], [[2], [3]]), ([1, 1, 3], [1, 2, 3])]
    for e, s in pairs:
        (et, eo), (st, so) = _pair(np.array(e), device), _pair(np.array(s), device)
        for inv in (False, True):
            same(ag.isin(eo, so, invert=inv, assume_unique=inv),
                 torch.isin(et, st, invert=inv, assume_unique=inv))
    (et, eo), (st, so) = _pair(np.array([1, 2, 3]), device), _pair(np.array([1, 2]), device)
    same(ag.isin(eo, 2), torch.isin(et, 2))
    same(ag.isin(2, so), torch.isin(2, st))


# ---- out= --------------------------------------------------------------------------------------

def test_out(device: str) -> None:
    t, o = _pair(np.array([[3.0, 1, 2], [0, 5, 4]], dtype="float32"), device)

    def outs(T: Any, dev: str, dtype: str = "float32", n: int = 2) -> Any:
        z = [T.zeros(0, dtype=getattr(T, dtype), device=dev)]
        return (z[0], T.zeros(0, dtype=T.int64, device=dev)) if n == 2 else z[0]

    runs: list[Callable[[Any, Any, str], Any]] = [
        lambda T, x, d: T.sort(x, 1, out=outs(T, d)),
        lambda T, x, d: T.topk(x, 2, out=outs(T, d)),
        lambda T, x, d: T.kthvalue(x, 2, 0, out=outs(T, d)),
        lambda T, x, d: T.median(x, 1, True, out=outs(T, d)),
        lambda T, x, d: T.nanmedian(x, 0, out=outs(T, d)),
        lambda T, x, d: T.mode(x, 1, out=outs(T, d)),
        lambda T, x, d: T.msort(x, out=outs(T, d, n=1)),
        lambda T, x, d: T.histc(x, 4, out=outs(T, d, n=1)),
        lambda T, x, d: T.searchsorted(T.tensor([1.0, 3.0], device=d), x,
                                       out=outs(T, d, "int64", 1)),
        lambda T, x, d: T.bucketize(x, T.tensor([1.0, 3.0], device=d), out_int32=True,
                                    out=outs(T, d, "int32", 1)),
        lambda T, x, d: T.isin(x, T.tensor([1.0, 3.0], device=d), out=outs(T, d, "bool", 1)),
    ]
    for run in runs:
        same(run(ag, o, device), run(torch, t, "cpu"))
