"""The scatter family against torch: values (dtypes, shapes with 0-d and empty ones, negative
dims, non-contiguous inputs, repeated indices where the op accumulates), result layouts,
gradients (compared with torch's, and checked by finite differences in float64, twice where
PyTorch differentiates twice), in-place forms and the warnings PyTorch gives once. The CuPy
path's segmented reduction (used where CuPy has no atomic) is checked against NumPy's
``ufunc.at`` here too. Errors and corner cases: ``tests/misuse/test_scatter.py``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.autograd._util import to_np

pytestmark = pytest.mark.filterwarnings(
    "ignore:index_reduce\\(\\) is in beta", "ignore:The reduce argument of torch.scatter")

REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _data(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("int") or dtype.startswith("uint"):
        return rng.integers(-4 if dtype.startswith("int") else 0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).round(1).astype(dtype)


def _both(a: np.ndarray, dev: str, layout: str = "contiguous",
          grad: bool = False) -> tuple[Any, Any]:
    """``a`` as a torch and an autograd_gpu tensor, laid out as ``layout`` says (the values are
    ``a``'s either way)."""
    if layout == "transposed" and a.ndim >= 2:
        base = np.ascontiguousarray(a.transpose())
        t = torch.tensor(base).permute(*reversed(range(a.ndim)))
        o = ag.tensor(base, device=dev).permute(*reversed(range(a.ndim)))
    elif layout == "strided" and a.ndim >= 1:
        wide = np.repeat(a, 2, axis=-1)
        t, o = torch.tensor(wide)[..., ::2], ag.tensor(wide, device=dev)[..., ::2]
    else:
        t, o = torch.tensor(a), ag.tensor(a, device=dev)
    if grad:
        t = t.detach().requires_grad_()
        o = o.detach().requires_grad_()
    return t, o


def _leaves(*ts: Any) -> tuple[Any, ...]:
    """Contiguous float64 leaves holding the values of ``ts`` (gradcheck's inputs)."""
    return tuple(t.detach().contiguous().requires_grad_() for t in ts)


def _same(ours: Any, theirs: Any, tol: float = 1e-5) -> None:
    assert isinstance(ours, ag.Tensor)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(to_np(ours).astype("float64"), to_np(theirs).astype("float64"),
                               rtol=tol, atol=tol)


def _unique_index(shape: tuple[int, ...], dim: int, n: int, seed: int) -> np.ndarray:
    """An index of ``shape`` whose entries along ``dim`` are distinct positions in ``[0, n)``
    (no position written twice: a plain scatter is then deterministic)."""
    rng = np.random.default_rng(seed)
    moved = list(shape)
    k = moved.pop(dim)
    rows = [rng.permutation(n)[:k] for _ in range(int(np.prod(moved, dtype=np.int64)))]
    out = np.array(rows, dtype=np.int64).reshape(*moved, k)
    return np.moveaxis(out, -1, dim)


def _random_index(shape: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, shape).astype(np.int64)


# (self shape, dim, index shape, src shape)
SCATTER_SHAPES = [
    ((5,), 0, (3,), (4,)),
    ((4, 3), 0, (3, 3), (3, 3)),
    ((4, 3), 1, (4, 2), (5, 3)),
    ((4, 3), -2, (2, 2), (2, 3)),
    ((2, 3, 4), 2, (2, 2, 3), (2, 3, 4)),
    ((2, 3, 4), 1, (1, 3, 2), (2, 3, 2)),
    ((), 0, (), ()),
    ((3, 0), 0, (2, 0), (2, 0)),
]


def _scatter_call(T: Any, op: str, x: Any, d: int, idx: Any, src: Any, include_self: bool) -> Any:
    if op == "scatter":
        return T.scatter(x, d, idx, src)
    if op == "scatter_value":
        return T.scatter(x, d, idx, 1 if not x.dtype.is_floating_point else -1.5)
    if op == "scatter_add":
        return T.scatter_add(x, d, idx, src)
    return T.scatter_reduce(x, d, idx, src, op, include_self=include_self)


SCATTER_OPS = [("scatter", True), ("scatter_value", True), ("scatter_add", True)] + [
    (r, s) for r in REDUCES for s in (True, False)]


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16", "bool", "int8"])
@pytest.mark.parametrize("op,include_self", SCATTER_OPS)
def test_scatter_values(device: str, op: str, include_self: bool, dtype: str) -> None:
    if dtype == "bool" and op == "mean":
        pytest.skip("PyTorch has no bool mean (tests/misuse: its error)")
    for k, (shape, dim, ishape, sshape) in enumerate(SCATTER_SHAPES):
        d = dim % max(len(shape), 1)
        n = shape[d] if shape else 1
        if op in ("scatter", "scatter_value"):
            index = _unique_index(ishape or (1,), d, n, k).reshape(ishape) if n else \
                np.zeros(ishape, np.int64)
        else:
            index = _random_index(ishape, max(n, 1), k)
        layout = "transposed" if k % 2 else "contiguous"
        tx, ox = _both(_data(shape, dtype, k), device, layout)
        ts, os_ = _both(_data(sshape, dtype, k + 50), device, "strided" if k % 3 else layout)
        ti, oi = _both(index, device)
        theirs = _scatter_call(torch, op, tx, dim, ti, ts, include_self)
        ours = _scatter_call(ag, op, ox, dim, oi, os_, include_self)
        _same(ours, theirs, 1e-2 if dtype == "float16" else 1e-5)


@pytest.mark.parametrize("op,include_self", SCATTER_OPS)
def test_scatter_grads(device: str, op: str, include_self: bool) -> None:
    """Gradients as torch's for an upstream gradient that is not all ones; finite differences
    on distinct values (ties and zeros: compared with torch only, tests/misuse)."""
    for k, (shape, dim, ishape, _) in enumerate(SCATTER_SHAPES[:6]):
        d = dim % len(shape)
        if op in ("scatter", "scatter_value"):
            index = _unique_index(ishape, d, shape[d], k)
        else:
            index = _random_index(ishape, shape[d], k)
        src_shape = ishape  # NOTE: a larger src has no gradient in PyTorch (tests/misuse)
        tx, ox = _both(_data(shape, "float64", k) + 0.05 * np.arange(np.prod(shape)).reshape(
            shape), device, grad=True)
        ts, os_ = _both(_data(src_shape, "float64", k + 9) + 3, device, grad=True)
        ti, oi = _both(index, device)
        theirs = _scatter_call(torch, op, tx, dim, ti, ts, include_self)
        ours = _scatter_call(ag, op, ox, dim, oi, os_, include_self)
        up = _data(tuple(shape), "float64", 99)
        inputs_t = (tx,) if op == "scatter_value" else (tx, ts)
        inputs_o = (ox,) if op == "scatter_value" else (ox, os_)
        want = torch.autograd.grad(theirs, inputs_t, torch.tensor(up))
        got = ag.autograd.grad(ours, inputs_o, ag.tensor(up, device=device))
        for g, w in zip(got, want):
            _same(g, w)
        if k < 3:
            assert gradcheck(lambda *a, dim=dim, oi=oi: _scatter_call(
                ag, op, a[0], dim, oi, a[-1], include_self), inputs_o)


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "prod", "mean", "amax"])
def test_scatter_double_backward(device: str, op: str) -> None:
    x = ag.tensor(_data((3, 4), "float64", 1) + 4, device=device, requires_grad=True)
    s = ag.tensor(_data((2, 4), "float64", 2) + 2, device=device, requires_grad=True)
    idx = ag.tensor(_unique_index((2, 4), 0, 3, 3), device=device)
    assert gradgradcheck(lambda a, b: _scatter_call(ag, op, a, 0, idx, b, True), (x, s))


INDEX_SHAPES = [  # (self shape, dim, number of indices)
    ((5,), 0, 3), ((4, 3), 0, 5), ((4, 3), 1, 2), ((2, 3, 4), -2, 4), ((2, 3, 4), 2, 3),
    ((), 0, 1), ((3, 0), 0, 2), ((4, 3), 0, 0),
]


def _index_call(T: Any, op: str, x: Any, d: int, idx: Any, src: Any, include_self: bool) -> Any:
    if op == "index_add":
        return T.index_add(x, d, idx, src, alpha=2 if not x.dtype.is_floating_point else -1.5)
    if op == "index_copy":
        return T.index_copy(x, d, idx, src)
    if op == "index_fill":
        return T.index_fill(x, d, idx, 3 if not x.dtype.is_floating_point else 2.5)
    return T.index_reduce(x, d, idx, src, op, include_self=include_self)


INDEX_OPS = [("index_add", True), ("index_copy", True), ("index_fill", True)] + [
    (r, s) for r in ("prod", "mean", "amax", "amin") for s in (True, False)]


@pytest.mark.parametrize("dtype", ["float32", "int64", "int32", "float16"])
@pytest.mark.parametrize("op,include_self", INDEX_OPS)
def test_index_values(device: str, op: str, include_self: bool, dtype: str) -> None:
    for k, (shape, dim, m) in enumerate(INDEX_SHAPES):
        d = dim % max(len(shape), 1)
        n = shape[d] if shape else 1
        if op in ("index_copy",) or not n:
            index = np.random.default_rng(k).permutation(max(n, m))[:m].astype(np.int64) % max(
                n, 1)
            index = index[:min(m, n)] if n else index[:0]
        else:
            index = _random_index((m,), n, k)
        sshape = list(shape)
        if shape:
            sshape[d] = len(index)
        idtype = "int32" if k % 2 and op not in ("index_copy", "index_fill") else "int64"
        tx, ox = _both(_data(shape, dtype, k), device, "transposed" if k % 2 else "contiguous")
        ts, os_ = _both(_data(tuple(sshape), dtype, k + 20), device)
        ti, oi = _both(index.astype(idtype), device)
        theirs = _index_call(torch, op, tx, dim, ti, ts, include_self)
        ours = _index_call(ag, op, ox, dim, oi, os_, include_self)
        _same(ours, theirs, 1e-2 if dtype == "float16" else 1e-5)


@pytest.mark.parametrize("op,include_self", INDEX_OPS)
def test_index_grads(device: str, op: str, include_self: bool) -> None:
    for k, (shape, dim, m) in enumerate(INDEX_SHAPES[:5]):
        d = dim % len(shape)
        n = shape[d]
        index = (np.random.default_rng(k).permutation(n)[:min(m, n)] if op == "index_copy"
                 else _random_index((m,), n, k))
        sshape = list(shape)
        sshape[d] = len(index)
        tx, ox = _both(_data(shape, "float64", k) + 0.05 * np.arange(np.prod(shape)).reshape(
            shape), device, grad=True)
        ts, os_ = _both(_data(tuple(sshape), "float64", k + 9) + 3, device, grad=True)
        ti, oi = _both(index, device)
        theirs = _index_call(torch, op, tx, dim, ti, ts, include_self)
        ours = _index_call(ag, op, ox, dim, oi, os_, include_self)
        up = _data(shape, "float64", 7)
        inputs_t = (tx,) if op == "index_fill" else (tx, ts)
        inputs_o = (ox,) if op == "index_fill" else (ox, os_)
        want = torch.autograd.grad(theirs, inputs_t, torch.tensor(up))
        got = ag.autograd.grad(ours, inputs_o, ag.tensor(up, device=device))
        for g, w in zip(got, want):
            _same(g, w)
        if k < 2:
            def call(*a: Any, dim: int = dim, oi: Any = oi) -> Any:
                return _index_call(ag, op, a[0], dim, oi, a[-1], include_self)

            assert gradcheck(call, inputs_o)
            assert gradgradcheck(call, inputs_o)


INDEX_PUT_KEYS: list[Callable[[Any, str], tuple[Any, ...]]] = [
    lambda T, dev: (T.tensor([2, 0, -1], device=dev),),
    lambda T, dev: (T.tensor([[0], [2]], device=dev), T.tensor([1, -1, 1], device=dev)),
    lambda T, dev: (T.tensor([True, False, True], device=dev),),
    lambda T, dev: (T.tensor([1, 1, 1], device=dev), T.tensor([0, 2, 0], device=dev)),
    lambda T, dev: (T.tensor([[True, False, True, True]] * 3, device=dev),),
]


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("key", range(len(INDEX_PUT_KEYS)))
def test_index_put(device: str, key: int, accumulate: bool) -> None:
    make = INDEX_PUT_KEYS[key]
    if not accumulate and key == 3:
        pytest.skip("a position written twice: nondeterministic in PyTorch")
    x = _data((3, 4), "float64", key)
    tx, ox = _both(x, device, "transposed", grad=True)
    region = tuple(torch.zeros(3, 4)[make(torch, "cpu")].shape)
    tv, ov = _both(_data(region[-1:], "float64", 5), device, grad=True)
    theirs = torch.index_put(tx, make(torch, "cpu"), tv, accumulate=accumulate)
    ours = ag.index_put(ox, make(ag, device), ov, accumulate=accumulate)
    _same(ours, theirs)
    up = _data((3, 4), "float64", 3)
    want = torch.autograd.grad(theirs, (tx, tv), torch.tensor(up))
    got = ag.autograd.grad(ours, (ox, ov), ag.tensor(up, device=device))
    for g, w in zip(got, want):
        _same(g, w)
    assert gradgradcheck(lambda a, b: ag.index_put(a, make(ag, device), b,
                                                   accumulate=accumulate), _leaves(ox, ov))
    ti, oi = _both(_data((3, 4), "int64", key), device)
    _same(oi.index_put_(make(ag, device), ag.ones(region[-1:], dtype=ag.int64, device=device),
                        accumulate=accumulate),
          ti.index_put_(make(torch, "cpu"), torch.ones(region[-1:], dtype=torch.int64),
                        accumulate=accumulate))


MASKED_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (2, 4)), ((), ()), ((2, 1, 3), (4, 1)),
                 ((0, 3), (3,))]


@pytest.mark.parametrize("shapes", MASKED_SHAPES)
def test_masked(device: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    xs, ms = shapes
    tx, ox = _both(_data(xs, "float64", 1), device, "transposed", grad=True)
    tm, om = _both(_data(ms, "bool", 2), device)
    n = int(np.prod(torch.broadcast_shapes(xs, ms)))
    ts, os_ = _both(_data((n + 2,), "float64", 3), device, grad=True)
    for name, args_t, args_o in (("masked_select", (tx, tm), (ox, om)),
                                 ("masked_scatter", (tx, tm, ts), (ox, om, os_))):
        theirs = getattr(torch, name)(*args_t)
        ours = getattr(ag, name)(*args_o)
        _same(ours, theirs)
        up = _data(tuple(theirs.shape), "float64", 4)
        diff_t = tuple(a for a in args_t if a.requires_grad)
        diff_o = tuple(a for a in args_o if a.requires_grad)
        want = torch.autograd.grad(theirs, diff_t, torch.tensor(up))
        got = ag.autograd.grad(ours, diff_o, ag.tensor(up, device=device))
        for g, w in zip(got, want):
            _same(g, w)
    assert gradgradcheck(lambda a, b: ag.masked_scatter(a, om, b), _leaves(ox, os_))
    _same(ox.detach().masked_select(om), tx.detach().masked_select(tm))
    if torch.broadcast_shapes(xs, ms) == xs:
        _same(ox.detach().clone().masked_scatter_(om, os_.detach()),
              tx.detach().clone().masked_scatter_(tm, ts.detach()))


@pytest.mark.parametrize("accumulate", [False, True])
def test_take_put(device: str, accumulate: bool) -> None:
    for k, (shape, ishape) in enumerate([((3, 4), (2, 3)), ((5,), (4,)), ((), (1,)),
                                         ((2, 3, 2), ()), ((0,), (0,))]):
        n = int(np.prod(shape))
        rng = np.random.default_rng(k)
        m = int(np.prod(ishape))
        if accumulate:
            index = rng.integers(0, max(n, 1), m)
        else:  # NOTE: distinct positions (a position put twice is nondeterministic)
            index = rng.permutation(max(n, 1))[:m]
        # negative positions count from the end
        index = (index - n * (rng.random(m) < 0.5)).astype(np.int64).reshape(ishape)
        tx, ox = _both(_data(shape, "float64", k), device, "transposed", grad=True)
        ti, oi = _both(index, device)
        ts, os_ = _both(_data(ishape, "float64", k + 1), device, grad=True)
        for fn, args_t, args_o in (
                (lambda T, a, i, s: T.take(a, i), (tx, ti, ts), (ox, oi, os_)),
                (lambda T, a, i, s: T.put(a, i, s, accumulate), (tx, ti, ts), (ox, oi, os_))):
            theirs, ours = fn(torch, *args_t), fn(ag, *args_o)
            _same(ours, theirs)
            if not theirs.numel():
                continue
            up = _data(tuple(theirs.shape), "float64", 6)
            used_t = [a for a in (tx, ts) if a.requires_grad]
            used_o = [a for a in (ox, os_) if a.requires_grad]
            want = torch.autograd.grad(theirs, used_t, torch.tensor(up), allow_unused=True)
            got = ag.autograd.grad(ours, used_o, ag.tensor(up, device=device), allow_unused=True)
            for g, w in zip(got, want):
                assert (g is None) == (w is None)
                if w is not None:
                    _same(g, w)
        if n and oi.numel():
            assert gradgradcheck(lambda a, s, oi=oi: ag.put(a, oi, s, accumulate),
                                 _leaves(ox, os_))
            assert gradcheck(lambda a, oi=oi: ag.take(a, oi), _leaves(ox))


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_take_along_dim(device: str, dim: int | None) -> None:
    cases = {None: [((3, 4), (5,)), ((2, 3), (2, 2)), ((), (3,))],
             0: [((3, 4), (2, 4)), ((3, 4), (5, 1)), ((3, 1), (2, 4))],
             1: [((3, 4), (3, 2)), ((3, 4), (1, 5)), ((1, 4), (3, 1))]}[1 if dim == -1 else dim]
    for k, (shape, ishape) in enumerate(cases):
        n = int(np.prod(shape)) if dim is None else shape[dim]
        index = _random_index(ishape, n, k) - (n if dim is not None and k % 2 else 0)
        layout = "contiguous" if dim is None else "transposed"
        tx, ox = _both(_data(shape, "float64", k), device, layout, grad=True)
        ti, oi = _both(index, device)
        theirs = torch.take_along_dim(tx, ti, dim)
        ours = ag.take_along_dim(ox, oi, dim)
        _same(ours, theirs)
        up = _data(tuple(theirs.shape), "float64", 2)
        _same(ag.autograd.grad(ours, ox, ag.tensor(up, device=device))[0],
              torch.autograd.grad(theirs, tx, torch.tensor(up))[0])


LAYOUT_OPS: dict[str, Callable[[Any, Any, str], Any]] = {
    "scatter": lambda T, x, d: T.scatter(x, 0, T.tensor([[1, 0, 2]], device=d), 1.0),
    "scatter_add": lambda T, x, d: T.scatter_add(x, 1, T.tensor([[1], [0], [2], [0]], device=d),
                                                 x),
    "scatter_reduce": lambda T, x, d: T.scatter_reduce(x, 0, T.tensor([[1, 1, 2]], device=d), x,
                                                       "amax", include_self=False),
    "index_add": lambda T, x, d: T.index_add(x, 1, T.tensor([2, 0], device=d), x[:, :2]),
    "index_copy": lambda T, x, d: T.index_copy(x, 0, T.tensor([3], device=d), x[:1]),
    "index_fill": lambda T, x, d: T.index_fill(x, 1, T.tensor([1], device=d), 0.0),
    "index_reduce": lambda T, x, d: T.index_reduce(x, 0, T.tensor([3], device=d), x[:1], "mean"),
    "index_put": lambda T, x, d: T.index_put(x, (T.tensor([3], device=d),), x[0],
                                             accumulate=True),
    "take": lambda T, x, d: T.take(x, T.tensor([[1, 2], [3, 4]], device=d).t()),
    "masked_select": lambda T, x, d: T.masked_select(x, x > 0),
    "take_along_dim": lambda T, x, d: T.take_along_dim(x, T.tensor([[1], [0], [2], [1]],
                                                                   device=d), 1),
}


@pytest.mark.parametrize("name", sorted(LAYOUT_OPS))
def test_layout(device: str, name: str) -> None:
    """Results laid out as PyTorch's (a transposed input stays transposed where PyTorch clones
    with preserve_format; index reads are C-contiguous)."""
    tx, ox = _both(_data((4, 3), "float32", 0), device, "transposed")
    theirs, ours = LAYOUT_OPS[name](torch, tx, "cpu"), LAYOUT_OPS[name](ag, ox, device)
    _same(ours, theirs)
    keep = [i for i, s in enumerate(theirs.shape) if s != 1]
    assert [ours.stride()[i] for i in keep] == [theirs.stride()[i] for i in keep], name


def test_inplace_forms(device: str) -> None:
    """In-place forms return ``self``, bump its version, and differentiate through a view of a
    non-leaf as torch does."""
    for lib, dev in ((torch, "cpu"), (ag, device)):
        x = lib.zeros(2, 3, device=dev)
        before = x._version
        assert x.scatter_(1, lib.tensor([[2], [0]], device=dev), 1.0) is x
        assert x.index_add_(0, lib.tensor([1], device=dev), lib.ones(1, 3, device=dev)) is x
        assert x.put_(lib.tensor([0], device=dev), lib.tensor([5.0], device=dev)) is x
        assert x._version == before + 3
    tx, ox = _both(_data((3, 4), "float64", 0), device, grad=True)
    outs = []
    for lib, x, dev in ((torch, tx, "cpu"), (ag, ox, device)):
        y = x * 2
        y[:, 1].index_fill_(0, lib.tensor([2], device=dev), 0.0)
        y.scatter_add_(1, lib.tensor([[0, 0]] * 3, device=dev), x[:, :2])
        y.masked_scatter_(y > 0, x.flatten())
        outs.append((y, (y * y).sum()))
    (ty, tl), (oy, ol) = outs
    _same(oy, ty)
    _same(ag.autograd.grad(ol, ox)[0], torch.autograd.grad(tl, tx)[0])


EXPANDED_WRITES: dict[str, Callable[[Any, Any, str], Any]] = {
    "index_put": lambda T, x, d: x.index_put_((T.tensor([1], device=d),), T.ones(3, device=d)),
    "index_put_accumulate": lambda T, x, d: x.index_put_(
        (T.tensor([1], device=d),), T.ones(3, device=d), accumulate=True),
    "index_put_mask": lambda T, x, d: x.index_put_(
        (T.tensor([[True, False, True]] * 2, device=d),), T.ones(4, device=d)),
    "index_fill": lambda T, x, d: x.index_fill_(1, T.tensor([-2], device=d), 2.0),
}


@pytest.mark.parametrize("name", sorted(EXPANDED_WRITES))
def test_expanded_writes(device: str, name: str) -> None:
    """Into a tensor whose elements share memory, index_put_ and index_fill_ warn as PyTorch
    does and write the selected elements (the other in-place forms refuse: tests/misuse)."""
    results = []
    for lib, dev in ((torch, "cpu"), (ag, device)):
        x = lib.zeros(1, 3, device=dev).expand(2, 3)
        with pytest.warns(UserWarning, match=f"Use of {name.split('_')[0]}_{name.split('_')[1]}_"
                          " on expanded tensors is deprecated"):
            results.append(EXPANDED_WRITES[name](lib, x, dev))
    _same(results[1], results[0])


def test_warnings_once(device: str) -> None:
    """PyTorch warns once per process for scatter's reduce= with a tensor src and for
    index_reduce (beta)."""
    from autograd_gpu.tensor import _WARNED_ONCE

    _WARNED_ONCE.discard("scatter_reduce_arg")
    _WARNED_ONCE.discard("index_reduce")
    x, i = ag.zeros(3, device=device), ag.tensor([0], device=device)
    with pytest.warns(UserWarning, match="The reduce argument of torch.scatter with Tensor src"):
        ag.scatter(x, 0, i, ag.ones(1, device=device), reduce="add")
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        ag.index_reduce(x, 0, i, ag.ones(1, device=device), "prod")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.scatter(x, 0, i, ag.ones(1, device=device), reduce="add")
        ag.scatter(x, 0, i, 2.0, reduce="multiply")  # a number: no warning in PyTorch
        ag.index_reduce(x, 0, i, ag.ones(1, device=device), "prod")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool",
                                   "float16", "int32"])
@pytest.mark.parametrize("reduce", ["sum", "prod", "amax", "amin", "mean"])
def test_segmented_reduction(dtype: str, reduce: str) -> None:
    """CuPy's path (sort, segmented log-step scan) gives NumPy's ``ufunc.at`` results, for
    every dtype and reduction, with many repeats and a broadcast key (no GPU needed)."""
    if dtype == "bool" and reduce == "mean":
        pytest.skip("no bool mean")
    b = ag.tensor(0.0).backend
    for seed in range(3):
        rng = np.random.default_rng(seed)
        out = _data((5, 4), dtype, seed)
        index = rng.integers(0, 5, (7, 4))
        values = _data((7, 4), dtype, seed + 1)
        if dtype.startswith("float") and reduce == "prod":
            values = (np.abs(values) + 0.5).astype(dtype)
        key = b.along_axis_key(index, 0)
        want = out.copy()
        b.scatter_reduce_into(want, key, values, reduce, include_self=seed != 1)
        got = out.copy()
        if reduce == "mean":
            cupy_path = type(b).__new__(type(b))
            cupy_path.name = "cupy"  # NOTE: CuPy's branches, on NumPy arrays
            cupy_path.scatter_reduce_into(got, key, values, reduce, include_self=seed != 1)
        else:
            if seed == 1:
                got[key] = b.reduce_identity(reduce, got.dtype)
            b._segment_combine(got, key, values, reduce)
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"),
                                   rtol=1e-2 if dtype == "float16" else 1e-6,
                                   atol=1e-2 if dtype == "float16" else 1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("rows", [(3,), (4, 2), ()])
def test_index_add_rows_in_sorted_runs(dtype: str, rows: tuple[int, ...]) -> None:
    """The embedding backward's CuPy path (sorted runs, no atomics) gives NumPy's ``add.at``:
    runs of every length up to 40, rows of any trailing shape (no GPU needed)."""
    b = ag.tensor(0.0).backend
    cupy_path = type(b).__new__(type(b))
    cupy_path.name = "cupy"  # NOTE: CuPy's branches, on NumPy arrays
    rng = np.random.default_rng(3)
    index = np.concatenate([np.full(40, 2), np.arange(6), rng.integers(0, 6, 50)])
    rng.shuffle(index)
    values = _data((index.size, *rows), dtype, 4)
    out = _data((6, *rows), dtype, 5)
    want = out.copy()
    np.add.at(want, index, values)
    got = out.copy()
    cupy_path.index_add_rows(got, index, values)
    tol = 1e-5 if dtype == "float32" else 1e-12  # NOTE: the sums' order differs: cancellation
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    empty = out.copy()
    cupy_path.index_add_rows(empty, index[:0], values[:0])
    assert np.array_equal(empty, out)


@pytest.mark.parametrize("deterministic", [False, True])
def test_index_add_with_repeats_under_either_mode(device: str, deterministic: bool) -> None:
    """``index_add_`` and ``put_(accumulate=True)`` with many repeats give PyTorch's sums
    whichever way the repeats are added (atomics, or sorted runs under
    ``use_deterministic_algorithms(True)``)."""
    rng = np.random.default_rng(0)
    index = rng.integers(0, 4, 300)
    src = rng.standard_normal((300, 3))
    ag.use_deterministic_algorithms(deterministic)
    try:
        x = ag.zeros(4, 3, dtype=ag.float64, device=device)
        x.index_add_(0, ag.tensor(index, device=device), ag.tensor(src, device=device))
        y = ag.zeros(4, 3, dtype=ag.float64, device=device)
        y.put_(ag.tensor(index * 3 + 1, device=device), ag.tensor(src[:, 0], device=device),
               accumulate=True)
    finally:
        ag.use_deterministic_algorithms(False)
    want = torch.zeros(4, 3, dtype=torch.float64).index_add_(0, torch.tensor(index),
                                                             torch.tensor(src))
    np.testing.assert_allclose(to_np(x), want.numpy(), rtol=1e-12, atol=1e-12)
    put = torch.zeros(4, 3, dtype=torch.float64).put_(torch.tensor(index * 3 + 1),
                                                      torch.tensor(src[:, 0]), accumulate=True)
    np.testing.assert_allclose(to_np(y), put.numpy(), rtol=1e-12, atol=1e-12)
