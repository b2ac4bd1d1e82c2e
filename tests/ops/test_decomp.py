"""torch.linalg against PyTorch, part 1: determinants, inverses, solves, Cholesky and the
triangular solvers (``det``, ``slogdet``, ``logdet``, ``inv``/``inv_ex``/``inverse``,
``solve``/``solve_ex``, ``cholesky``/``cholesky_ex``/``torch.cholesky``,
``solve_triangular``, ``triangular_solve``, ``cholesky_solve``, ``cholesky_inverse``).

Each case runs one program under torch (CPU) and autograd_gpu (every device), on float32 and
float64, contiguous and transposed (non-contiguous) inputs, batched and not, and compares the
values, the node names and the gradients of a weighted sum of the outputs; then ``gradcheck``
and ``gradgradcheck`` in float64. Singular and non-positive-definite matrices: PyTorch's
``info`` values, errors and first derivatives. ``compare`` serves the ``test_linalg_*`` files.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck

Program = Callable[..., Any]
DTYPES = ("float32", "float64")
LAYOUTS = ("contiguous", "transposed", "sliced")


def _leaf(T: Any, a: np.ndarray, dev: str, dtype: str, layout: str, grad: bool) -> Any:
    """``(leaf, argument)``: ``a`` as a leaf of library ``T``, and the argument holding its
    values: the leaf itself, or with ``layout`` 'transposed' a transposed view of it, 'sliced'
    every other column of a leaf twice as wide (both not contiguous)."""
    kw = {"device": dev} if T is ag else {}
    dt = getattr(T, dtype)
    if layout == "sliced" and a.ndim >= 1:
        base = T.tensor(np.repeat(a, 2, axis=-1), dtype=dt, **kw).requires_grad_(grad)
        return base, base[..., ::2]
    if layout == "transposed" and a.ndim >= 2:
        base = T.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), dtype=dt, **kw)
        base.requires_grad_(grad)
        return base, base.mT
    t = T.tensor(a, dtype=dt, **kw).requires_grad_(grad)
    return t, t


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().cpu().numpy())


def _layout(t: Any) -> str:
    """'C' (contiguous), 'F' (each matrix column-major: PyTorch's LAPACK results) or 'other';
    one layout for tensors where both hold (a size 0 or 1 makes strides moot)."""
    if t.ndim < 2 or min(t.shape[-2:]) <= 1 or t.numel() == 0:
        return "any"
    if t.is_contiguous():
        return "C"
    return "F" if t.mT.is_contiguous() else "other"


def _run(T: Any, fn: Program, arrays: list[np.ndarray], dev: str, dtype: str, layout: str,
         grad: bool) -> tuple[list[Any], list[Any], list[str | None]]:
    leaves, args = zip(*(_leaf(T, a, dev, dtype, layout, grad) for a in arrays))
    outs = _outputs(fn(T, *args))
    names = [o.grad_fn.name() if o.grad_fn is not None else None for o in outs]
    grads: list[Any] = [None] * len(leaves)
    diff = [o for o in outs if o.requires_grad and o.numel()]
    if grad and diff:
        rng = np.random.default_rng(7)
        kw = {"device": dev} if T is ag else {}
        loss = sum((o * T.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, **kw)).sum()
                   for o in diff)
        grads = list(T.autograd.grad(loss, list(leaves), allow_unused=True))
    return outs, grads, names


def compare(fn: Program, arrays: list[np.ndarray], device: str, dtype: str = "float64",
            layout: str = "contiguous", grad: bool = True, tol: float | None = None,
            names: bool = True) -> None:
    """Run ``fn(T, *tensors)`` under torch and autograd_gpu; assert the same output shapes,
    dtypes, layouts, values, node names (``names``) and gradients (``tol``: relative and
    absolute tolerance)."""
    if tol is None:
        tol = 1e-7 if dtype == "float64" else 2e-4
    theirs, their_grads, their_names = _run(torch, fn, arrays, "cpu", dtype, layout, grad)
    ours, our_grads, our_names = _run(ag, fn, arrays, device, dtype, layout, grad)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape), (o.shape, t.shape)
        assert str(o.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (o.dtype, t.dtype)
        assert o.device.type == device
        assert _layout(o) == _layout(t) or _layout(t) == "other", (o.stride(), t.stride())
        np.testing.assert_allclose(_np(o), _np(t), rtol=tol, atol=tol)
    if names:
        assert our_names == their_names
    for g, h in zip(our_grads, their_grads):
        assert (g is None) == (h is None), (g, h)
        if h is not None:
            np.testing.assert_allclose(_np(g), _np(h), rtol=tol * 10, atol=tol * 10)


def check_grads(fn: Program, arrays: list[np.ndarray], device: str, second: bool = True) -> None:
    """``gradcheck`` (and ``gradgradcheck``) of ``fn(ag, *tensors)`` in float64."""
    inputs = [ag.tensor(np.ascontiguousarray(a), dtype=ag.float64, device=device,
                        requires_grad=True) for a in arrays]

    def f(*xs: Any) -> Any:
        return fn(ag, *xs)

    assert gradcheck(f, inputs)
    if second:
        assert gradgradcheck(f, inputs)


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def spd(T: Any, x: Any) -> Any:
    """A symmetric positive-definite matrix built from ``x`` (differentiably)."""
    n = x.shape[-1]
    return x @ x.mT + n * T.eye(n, dtype=x.dtype, device=x.device)


def upper(T: Any, x: Any, unit: bool = False) -> Any:
    """The upper triangle of ``x`` with a diagonal kept away from 0 (differentiably)."""
    n = x.shape[-1]
    mask = T.tensor(np.triu(np.ones((n, n)), 1 if unit else 0), dtype=x.dtype, device=x.device)
    return x * mask + 3 * T.eye(n, dtype=x.dtype, device=x.device)


# ---- the programs -------------------------------------------------------------------------

CASES: dict[str, tuple[Program, list[np.ndarray]]] = {
    "det": (lambda T, a: T.linalg.det(a), [rand(3, 3)]),
    "det_batch": (lambda T, a: T.linalg.det(a), [rand(2, 4, 4)]),
    "det_torch": (lambda T, a: T.det(a), [rand(2, 2)]),
    "det_method": (lambda T, a: a.det(), [rand(1, 3, 3)]),
    "slogdet": (lambda T, a: tuple(T.linalg.slogdet(a)), [rand(2, 3, 3)]),
    "slogdet_torch": (lambda T, a: tuple(T.slogdet(a)), [rand(3, 3)]),
    "logdet": (lambda T, a: T.logdet(a), [rand(2, 3, 3)]),
    "logdet_spd": (lambda T, a: a.logdet(), [rand(3, 3) + 3 * np.eye(3)]),
    "inv": (lambda T, a: T.linalg.inv(a), [rand(2, 3, 3)]),
    "inverse": (lambda T, a: a.inverse(), [rand(4, 4)]),
    "inv_ex": (lambda T, a: tuple(T.linalg.inv_ex(a)), [rand(3, 3)]),
    "solve": (lambda T, a, b: T.linalg.solve(a, b), [rand(2, 3, 3), rand(2, 3, 2)]),
    "solve_vector": (lambda T, a, b: T.linalg.solve(a, b[..., 0]), [rand(3, 3), rand(3, 1)]),
    "solve_batch_vector": (lambda T, a, b: T.linalg.solve(a, b[..., 0]),
                           [rand(2, 3, 3), rand(2, 3, 1)]),
    "solve_broadcast": (lambda T, a, b: T.linalg.solve(a, b), [rand(2, 1, 3, 3), rand(4, 3, 2)]),
    "solve_right": (lambda T, a, b: T.linalg.solve(a, b, left=False),
                    [rand(3, 3), rand(2, 3)]),
    "solve_ex": (lambda T, a, b: tuple(T.linalg.solve_ex(a, b)), [rand(3, 3), rand(3, 2)]),
    "cholesky": (lambda T, a: T.linalg.cholesky(spd(T, a)), [rand(2, 3, 3)]),
    "cholesky_upper": (lambda T, a: T.linalg.cholesky(spd(T, a), upper=True), [rand(4, 4)]),
    "cholesky_ex": (lambda T, a: tuple(T.linalg.cholesky_ex(spd(T, a))), [rand(3, 3)]),
    "cholesky_torch": (lambda T, a: T.cholesky(spd(T, a), True), [rand(3, 3)]),
    "cholesky_method": (lambda T, a: spd(T, a).cholesky(), [rand(2, 2, 2)]),
    "solve_triangular": (lambda T, a, b: T.linalg.solve_triangular(upper(T, a), b, upper=True),
                         [rand(2, 3, 3), rand(2, 3, 2)]),
    "solve_triangular_lower": (
        lambda T, a, b: T.linalg.solve_triangular(upper(T, a).mT, b, upper=False),
        [rand(3, 3), rand(3, 4)]),
    "solve_triangular_right_unit": (
        lambda T, a, b: T.linalg.solve_triangular(a, b, upper=True, left=False,
                                                  unitriangular=True),
        [rand(3, 3), rand(2, 2, 3)]),
    "solve_triangular_raw": (  # the other triangle holds anything: it is not read
        lambda T, a, b: T.linalg.solve_triangular(a + 3 * T.eye(3, dtype=a.dtype,
                                                                device=a.device), b, upper=False),
        [rand(3, 3), rand(3, 2)]),
    "triangular_solve": (lambda T, a, b: tuple(T.triangular_solve(b, upper(T, a))),
                         [rand(3, 3), rand(2, 3, 2)]),
    "triangular_solve_t": (
        lambda T, a, b: tuple(b.triangular_solve(upper(T, a).mT, upper=False, transpose=True,
                                                 unitriangular=True)),
        [rand(3, 3), rand(3, 2)]),
    "cholesky_solve": (lambda T, a, b: T.cholesky_solve(b, upper(T, a).mT),
                       [rand(3, 3), rand(2, 3, 2)]),
    "cholesky_solve_upper": (lambda T, a, b: b.cholesky_solve(upper(T, a), True),
                             [rand(2, 3, 3), rand(3, 1)]),
    "cholesky_inverse": (lambda T, a: T.cholesky_inverse(upper(T, a).mT), [rand(3, 3)]),
    "cholesky_inverse_upper": (lambda T, a: upper(T, a).cholesky_inverse(upper=True),
                               [rand(2, 3, 3)]),
}


@pytest.mark.filterwarnings("ignore:torch\\.(cholesky|triangular_solve) is deprecated")
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(device: str, name: str, dtype: str, layout: str) -> None:
    fn, arrays = CASES[name]
    compare(fn, arrays, device, dtype, layout)


# NOTE: cholesky_solve and cholesky_inverse read one triangle of the factor but PyTorch's
# gradient fills both (as ours): gradcheck them through a triangle.
GRAD_CASES = ["det_batch", "slogdet", "logdet_spd", "inv", "solve", "solve_broadcast",
              "solve_right", "solve_batch_vector", "cholesky", "cholesky_upper",
              "solve_triangular", "solve_triangular_right_unit", "triangular_solve",
              "triangular_solve_t", "cholesky_solve", "cholesky_inverse_upper"]


@pytest.mark.filterwarnings("ignore:torch\\.triangular_solve is deprecated")
@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradcheck(device: str, name: str) -> None:
    fn, arrays = CASES[name]
    check_grads(fn, arrays, device)


# ---- singular and indefinite matrices ---------------------------------------------------------

SINGULAR = [np.zeros((3, 3)), np.array([[1.0, 2.0], [2.0, 4.0]]),
            np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]),
            np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])]


@pytest.mark.parametrize("i", range(len(SINGULAR)))
def test_singular(device: str, i: int) -> None:
    """det and its first derivative (0 there, as PyTorch's), and its second through
    create_graph (the SVD form of the cofactor matrix); slogdet's (0, -inf); inv_ex's and
    solve_ex's info; inv's and solve's LinAlgError."""
    a = SINGULAR[i]
    compare(lambda T, x: T.linalg.det(x), [a], device)
    compare(lambda T, x: tuple(T.linalg.slogdet(x)), [a], device, grad=False)
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = T.tensor(a, dtype=T.float64, requires_grad=True, **({"device": dev} if T is ag
                                                               else {}))
        (g,) = T.autograd.grad(T.linalg.det(x), x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        if T is torch:
            expected = (g.detach().numpy(), gg.numpy())
        else:
            np.testing.assert_allclose(g.detach().cpu().numpy(), expected[0], atol=1e-9)
            np.testing.assert_allclose(gg.cpu().numpy(), expected[1], atol=1e-9)
    batch = np.stack([np.eye(a.shape[0]), a, 2 * np.eye(a.shape[0])])
    theirs = torch.linalg.inv_ex(torch.tensor(batch))
    ours = ag.linalg.inv_ex(ag.tensor(batch, device=device))
    np.testing.assert_array_equal(ours.info.cpu().numpy(), theirs.info.numpy())
    assert str(ours.info.dtype) == "torch.int32"
    np.testing.assert_allclose(ours.inverse[0::2].cpu().numpy(), theirs.inverse[0::2].numpy())
    assert np.isnan(ours.inverse[1].cpu().numpy()).all()  # NOTE: PyTorch's holds inf/NaN
    rhs = np.ones(batch.shape[:-1])
    theirs = torch.linalg.solve_ex(torch.tensor(batch), torch.tensor(rhs))
    ours = ag.linalg.solve_ex(ag.tensor(batch, device=device), ag.tensor(rhs, device=device))
    np.testing.assert_array_equal(ours.info.cpu().numpy(), theirs.info.numpy())
    for fn in (lambda T, x: T.linalg.inv(x), lambda T, x: T.inverse(x),
               lambda T, x: T.linalg.solve(x, x[..., 0]),
               lambda T, x: T.linalg.inv_ex(x, check_errors=True),
               lambda T, x: T.linalg.solve_ex(x, x, check_errors=True),
               lambda T, x: T.linalg.tensorinv(x[1], ind=1)):
        with pytest.raises(torch.linalg.LinAlgError) as theirs_e:
            fn(torch, torch.tensor(batch))
        with pytest.raises(ag.linalg.LinAlgError) as ours_e:
            fn(ag, ag.tensor(batch, device=device))
        assert str(ours_e.value) == str(theirs_e.value)


def test_det_second_derivative_mixed_batch(device: str) -> None:
    """Under create_graph, singular matrices of a batch take the SVD form and the others the
    solve (each on its own matrices: a zero matrix's NaN stays its own), as PyTorch's."""
    a = np.stack([rand(3, 3), SINGULAR[2], rand(3, 3, seed=1), SINGULAR[0]]).reshape(2, 2, 3, 3)
    results = []
    for T, dev in ((torch, "cpu"), (ag, device)):
        x = T.tensor(a, requires_grad=True, **({"device": dev} if T is ag else {}))
        w = T.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=T.float64,
                     **({"device": dev} if T is ag else {}))
        (g,) = T.autograd.grad((T.linalg.det(x) * w).sum(), x, create_graph=True)
        (gg,) = T.autograd.grad((g * g).sum(), x)
        results.append([_np(g), _np(gg)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, atol=1e-9)


def test_lu_info_index(device: str) -> None:
    """inv_ex's info is the index of LAPACK's first zero pivot (or 0 where rounding leaves no
    exact zero), also for a dependency in a later column of a larger matrix."""
    rng = np.random.default_rng(3)
    for n, k, j, factor in ((5, 3, 1, 1.0), (6, 6, 2, 2.0), (6, 4, 0, 1.0), (4, 2, 0, 0.0),
                          (7, 5, 4, 0.0)):
        m = rng.standard_normal((n, n))
        m[:, k - 1] = factor * m[:, j]
        theirs = torch.linalg.inv_ex(torch.tensor(m)).info
        ours = ag.linalg.inv_ex(ag.tensor(m, device=device)).info
        assert int(ours.item()) == int(theirs.item()), m


def test_slogdet_singular_gradient(device: str) -> None:
    """slogdet of a singular matrix: first derivative not finite (PyTorch's holds inf/NaN, ours
    NaN); under create_graph both refuse it with linalg.solve's LinAlgError."""
    a = SINGULAR[1]
    x = ag.tensor(a, device=device, requires_grad=True)
    (g,) = ag.autograd.grad(ag.linalg.slogdet(x).logabsdet, x)
    assert not np.isfinite(g.cpu().numpy()).all()
    for T, dev in ((torch, "cpu"), (ag, device)):
        y = T.tensor(a, requires_grad=True, **({"device": dev} if T is ag else {}))
        with pytest.raises(RuntimeError) as e:
            T.autograd.grad(T.linalg.slogdet(y).logabsdet, y, create_graph=True)
        assert type(e.value).__name__ in ("_LinAlgError", "LinAlgError")
        if T is torch:
            expected = str(e.value)
        else:
            assert str(e.value) == expected


NOT_PD = [np.array([[1.0, 2.0], [2.0, 1.0]]), -np.eye(3), np.ones((3, 3)),
          np.full((2, 2), np.nan), np.diag([1.0, 1.0, 0.0, 1.0])]


@pytest.mark.parametrize("i", range(len(NOT_PD)))
def test_cholesky_not_positive_definite(device: str, i: int) -> None:
    a = NOT_PD[i]
    batch = np.stack([np.eye(a.shape[0]), a])
    theirs = torch.linalg.cholesky_ex(torch.tensor(batch))
    ours = ag.linalg.cholesky_ex(ag.tensor(batch, device=device))
    np.testing.assert_array_equal(ours.info.cpu().numpy(), theirs.info.numpy())
    np.testing.assert_allclose(ours.L[0].cpu().numpy(), theirs.L[0].numpy())
    for fn in (lambda T, x: T.linalg.cholesky(x), lambda T, x: T.linalg.cholesky(x[1]),
               lambda T, x: T.linalg.cholesky_ex(x, check_errors=True),
               lambda T, x: T.cholesky(x)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(torch.linalg.LinAlgError) as theirs_e:
                fn(torch, torch.tensor(batch))
            with pytest.raises(ag.linalg.LinAlgError) as ours_e:
                fn(ag, ag.tensor(batch, device=device))
        assert str(ours_e.value) == str(theirs_e.value)


def test_linalg_error_class() -> None:
    assert issubclass(ag.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="singular"):
        ag.linalg.inv(ag.zeros(2, 2))


def test_solve_triangular_zero_diagonal(device: str) -> None:
    """A zero on the diagonal gives trsm's inf/NaN, as PyTorch's."""
    for a, b in ((np.array([[0.0, 2.0], [0.0, 1.0]]), np.ones((2, 1))),
                 (np.array([[1.0, 2.0], [0.0, 0.0]]), np.array([[1.0], [0.0]])),
                 (np.array([[2.0, 0.0], [1.0, 0.0]]), np.array([[2.0, 0.0], [1.0, 3.0]]))):
        up = bool(a[1, 0] == 0)
        theirs = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=up)
        ours = ag.linalg.solve_triangular(ag.tensor(a, device=device),
                                          ag.tensor(b, device=device), upper=up)
        np.testing.assert_array_equal(ours.cpu().numpy(), theirs.numpy())


# ---- edge shapes, NaN, out=, warnings ------------------------------------------------------------

EMPTY: dict[str, tuple[Program, list[tuple[int, ...]]]] = {
    "det": (lambda T, a: T.linalg.det(a), [(0, 0), (0, 2, 2), (2, 0, 0)]),
    "slogdet": (lambda T, a: tuple(T.linalg.slogdet(a)), [(0, 0), (0, 3, 3)]),
    "inv": (lambda T, a: T.linalg.inv(a), [(0, 0), (0, 2, 2), (3, 0, 0)]),
    "solve": (lambda T, a: T.linalg.solve(a, a), [(0, 0), (0, 2, 2)]),
    "cholesky": (lambda T, a: T.linalg.cholesky(a), [(0, 0), (2, 0, 0), (0, 3, 3)]),
    "solve_triangular": (lambda T, a: T.linalg.solve_triangular(a, a, upper=True),
                         [(0, 0), (0, 2, 2)]),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty(device: str, name: str) -> None:
    fn, shapes = EMPTY[name]
    for shape in shapes:
        compare(fn, [np.zeros(shape)], device)


def test_nan(device: str) -> None:
    a = np.full((2, 2), np.nan)
    compare(lambda T, x: T.linalg.inv(x), [a], device, grad=False)
    compare(lambda T, x: T.linalg.det(x), [a], device, grad=False)
    compare(lambda T, x: T.linalg.solve(x, x), [a], device, grad=False)


def test_out(device: str) -> None:
    a = rand(2, 3, 3)
    for T, dev in ((torch, "cpu"), (ag, device)):
        kw = {"device": dev} if T is ag else {}
        x = T.tensor(a, **kw)
        out = T.empty(0, dtype=T.float64, **kw)
        r = T.linalg.inv(x, out=out)
        assert r is out
        o1, o2 = T.empty(2, 3, 3, dtype=T.float64, **kw), T.empty(2, dtype=T.int32, **kw)
        T.linalg.inv_ex(x, out=(o1, o2))
        d = T.empty((), dtype=T.float64, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            T.linalg.det(x[0], out=d)
        if T is torch:
            expected = (out.numpy(), o1.numpy(), o2.numpy(), d.numpy())
        else:
            for mine, want in zip((out, o1, o2, d), expected):
                np.testing.assert_allclose(mine.cpu().numpy(), want)
    x = ag.tensor(a, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ag.linalg.inv(x, out=ag.empty(2, 3, 3, dtype=ag.float64, device=device))


def test_deprecation_warnings_once() -> None:
    from autograd_gpu.functions import decomp

    decomp._WARNED.discard("cholesky")
    x = ag.eye(2)
    with pytest.warns(UserWarning, match="torch.cholesky is deprecated"):
        ag.cholesky(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.cholesky(x)  # once per process, as PyTorch's TORCH_WARN_ONCE


def test_large_batch_matches(device: str) -> None:
    """Many small matrices at once (the batched LAPACK/cuSOLVER paths)."""
    a = rand(64, 5, 5, seed=4)
    compare(lambda T, x: (T.linalg.det(x), T.linalg.inv(x), T.linalg.cholesky(spd(T, x))),
            [a], device)
