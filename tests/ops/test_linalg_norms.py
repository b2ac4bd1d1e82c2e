"""torch.linalg against PyTorch, part 3: norms (``norm``, ``vector_norm``, ``matrix_norm``,
``cond``) and the composite products and reshapings (``matrix_power``, ``multi_dot``,
``vecdot``, ``cross``, ``tensorinv``, ``tensorsolve``, ``diagonal``, ``matmul``), checked as
``test_decomp.py`` checks the solvers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops.test_decomp import DTYPES, LAYOUTS, check_grads, compare, rand

INF = math.inf

CASES = {
    "vector_norm": (lambda T, a: T.linalg.vector_norm(a), [rand(2, 3)]),
    "vector_norm_3": (lambda T, a: T.linalg.vector_norm(a, 3, dim=-1, keepdim=True),
                      [rand(2, 3)]),
    "vector_norm_inf": (lambda T, a: T.linalg.vector_norm(a, INF, dim=(0, 2)), [rand(2, 3, 4)]),
    "vector_norm_neg_inf": (lambda T, a: T.linalg.vector_norm(a, -INF, dim=1), [rand(2, 3)]),
    "vector_norm_1": (lambda T, a: T.linalg.vector_norm(a, 1, dim=0), [rand(4, 3)]),
    "vector_norm_half_ord": (lambda T, a: T.linalg.vector_norm(a, 0.5), [rand(5)]),
    "vector_norm_0": (lambda T, a: T.linalg.vector_norm(a, 0, dim=1), [rand(2, 3)]),
    "vector_norm_dtype": (lambda T, a: T.linalg.vector_norm(a, dtype=T.float64), [rand(3, 2)]),
    "vector_norm_0d": (lambda T, a: T.linalg.vector_norm(a[0, 0]), [rand(2, 2)]),
    "matrix_norm_fro": (lambda T, a: T.linalg.matrix_norm(a), [rand(2, 3, 4)]),
    "matrix_norm_nuc": (lambda T, a: T.linalg.matrix_norm(a, "nuc"), [rand(2, 3, 4)]),
    "matrix_norm_2": (lambda T, a: T.linalg.matrix_norm(a, 2, dim=(0, 2)), [rand(3, 2, 4)]),
    "matrix_norm_neg2_keep": (lambda T, a: T.linalg.matrix_norm(a, -2, keepdim=True),
                              [rand(2, 3, 3)]),
    "matrix_norm_1": (lambda T, a: T.linalg.matrix_norm(a, 1), [rand(2, 3, 4)]),
    "matrix_norm_neg1": (lambda T, a: T.linalg.matrix_norm(a, -1, dim=(2, 0), keepdim=True),
                         [rand(3, 2, 4)]),
    "matrix_norm_inf": (lambda T, a: T.linalg.matrix_norm(a, INF), [rand(3, 4)]),
    "matrix_norm_neg_inf": (lambda T, a: T.linalg.matrix_norm(a, -INF, dim=(1, 0)),
                            [rand(3, 4, 2)]),
    "norm": (lambda T, a: T.linalg.norm(a), [rand(2, 3, 4)]),
    "norm_vector_dim": (lambda T, a: T.linalg.norm(a, 3, dim=1), [rand(2, 3)]),
    "norm_1d_ord": (lambda T, a: T.linalg.norm(a, -1), [rand(5)]),
    "norm_2d_ord": (lambda T, a: T.linalg.norm(a, 2), [rand(3, 4)]),
    "norm_matrix_dims": (lambda T, a: T.linalg.norm(a, "nuc", dim=(0, 2), keepdim=True),
                         [rand(3, 2, 4)]),
    "norm_dims_no_ord": (lambda T, a: T.linalg.norm(a, dim=(0, 1)), [rand(2, 2, 3)]),
    "cond": (lambda T, a: T.linalg.cond(a), [rand(2, 3, 3)]),
    "cond_wide": (lambda T, a: T.linalg.cond(a, -2), [rand(3, 5)]),
    "cond_fro": (lambda T, a: T.linalg.cond(a, "fro"), [rand(2, 3, 3)]),
    "cond_inf": (lambda T, a: T.linalg.cond(a, INF), [rand(3, 3)]),
    "matrix_power_2": (lambda T, a: T.linalg.matrix_power(a, 2), [rand(3, 3)]),
    "matrix_power_7": (lambda T, a: T.linalg.matrix_power(a, 7), [rand(2, 3, 3) / 2]),
    "matrix_power_neg": (lambda T, a: T.linalg.matrix_power(a, -2), [rand(3, 3) + 3 * np.eye(3)]),
    "matrix_power_1": (lambda T, a: a.matrix_power(1), [rand(2, 2)]),
    "matrix_power_0": (lambda T, a: T.matrix_power(a, 0), [rand(2, 3, 3)]),
    "multi_dot": (lambda T, a, b, c: T.linalg.multi_dot([a, b, c]),
                  [rand(2, 5), rand(5, 3), rand(3, 4)]),
    "multi_dot_right": (lambda T, a, b, c: T.linalg.multi_dot([a, b, c]),
                        [rand(6, 5), rand(5, 2), rand(2, 1)]),
    "multi_dot_vectors": (lambda T, a, b, c, d: T.linalg.multi_dot([a, b, c, d]),
                          [rand(3), rand(3, 4), rand(4, 2), rand(2)]),
    "multi_dot_five": (lambda T, a, b, c, d, e: T.linalg.multi_dot([a, b, c, d, e]),
                       [rand(4, 6), rand(6, 2), rand(2, 5), rand(5, 3), rand(3, 1)]),
    "multi_dot_two": (lambda T, a, b: T.linalg.multi_dot([a, b]), [rand(3), rand(3, 2)]),
    "vecdot": (lambda T, a, b: T.linalg.vecdot(a, b), [rand(2, 3), rand(3)]),
    "vecdot_dim": (lambda T, a, b: T.linalg.vecdot(a, b, dim=0), [rand(3, 2), rand(3, 2)]),
    "vecdot_1d": (lambda T, a, b: T.linalg.vecdot(a, b), [rand(4), rand(4)]),
    "cross": (lambda T, a, b: T.linalg.cross(a, b), [rand(2, 3), rand(2, 3)]),
    "cross_broadcast": (lambda T, a, b: T.linalg.cross(a, b, dim=0),
                        [rand(3, 1, 2), rand(3, 4, 1)]),
    "tensorinv": (lambda T, a: T.linalg.tensorinv(a.reshape(4, 2, 2), ind=1), [rand(16)]),
    "tensorinv_2": (lambda T, a: T.linalg.tensorinv(a.reshape(2, 3, 6)), [rand(36)]),
    "tensorsolve": (lambda T, a, b: T.linalg.tensorsolve(a.reshape(2, 3, 6), b),
                    [rand(36), rand(2, 3)]),
    "tensorsolve_dims": (lambda T, a, b: T.linalg.tensorsolve(a.reshape(6, 2, 3), b, dims=(0,)),
                         [rand(36), rand(2, 3)]),
    "diagonal": (lambda T, a: T.linalg.diagonal(a), [rand(2, 3, 3)]),
    "diagonal_offset": (lambda T, a: T.linalg.diagonal(a, offset=-1, dim1=0, dim2=2),
                        [rand(3, 2, 4)]),
    "matmul": (lambda T, a, b: T.linalg.matmul(a, b), [rand(2, 3, 4), rand(4)]),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(device: str, name: str, dtype: str, layout: str) -> None:
    fn, arrays = CASES[name]
    compare(fn, arrays, device, dtype, layout, grad=name not in NO_GRAD,
            names=not name.startswith("tensorinv"))


# NOTE: PyTorch's own backward of cond with a matrix norm fails (it writes in place into a
# tensor it saved); ours is gradchecked below.
NO_GRAD = {"cond_fro", "cond_inf"}
# NOTE: tensorinv reshapes the inverse, a view of it: PyTorch names that node
# ReshapeAliasBackward0 (a reshape of a non-contiguous tensor), ours ViewBackward0.


GRAD_CASES = ["vector_norm_3", "vector_norm_inf", "matrix_norm_nuc", "matrix_norm_2",
              "matrix_norm_1", "matrix_norm_neg_inf", "norm_2d_ord", "cond", "cond_fro",
              "matrix_power_7", "matrix_power_neg", "multi_dot_vectors", "vecdot", "cross",
              "cross_broadcast", "tensorinv", "tensorsolve_dims", "diagonal_offset"]


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradcheck(device: str, name: str) -> None:
    fn, arrays = CASES[name]
    check_grads(fn, arrays, device)


def test_matrix_norm_empty(device: str) -> None:
    """Empty matrices: the positive orders give 0, as PyTorch's (the negative ones refuse)."""
    for shape in ((0, 3), (3, 0), (2, 0, 3), (0, 0)):
        for ord in (2, "nuc", INF, 1, "fro"):
            compare(lambda T, a, o=ord: T.linalg.matrix_norm(a, o), [rand(*shape)], device,
                    grad=False)
            compare(lambda T, a, o=ord: T.linalg.matrix_norm(a, o, keepdim=True),
                    [rand(*shape)], device, grad=False)


def test_matrix_norm_ties(device: str) -> None:
    """Ties in the max column sum share the gradient, as PyTorch's amax."""
    a = np.array([[1.0, -1.0, 0.5], [2.0, 2.0, 0.5]])
    compare(lambda T, x: T.linalg.matrix_norm(x, 1), [a], device)
    compare(lambda T, x: T.linalg.matrix_norm(x, INF), [a.T.copy()], device)


def test_cond_singular(device: str) -> None:
    compare(lambda T, x: (T.linalg.cond(x, 1), T.linalg.cond(x)),
            [np.stack([np.eye(2), np.zeros((2, 2))])], device, grad=False)


def test_matrix_power_bool_cpu() -> None:
    x = ag.ones(2, 2, dtype=ag.bool)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        ag.linalg.matrix_power(x, 2)
    assert ag.linalg.matrix_power(x, 0).tolist() == torch.linalg.matrix_power(
        torch.ones(2, 2, dtype=torch.bool), 0).tolist()


def test_cross_int(device: str) -> None:
    a = np.array([[1, 2, 3], [4, 5, 6]])
    for T, dev in ((torch, "cpu"), (ag, device)):
        kw = {"device": dev} if T is ag else {}
        r = T.linalg.cross(T.tensor(a, **kw), T.tensor(a[::-1].copy(), **kw))
        if T is torch:
            expected = r.tolist(), str(r.dtype)
        else:
            assert (r.tolist(), str(r.dtype)) == expected


def test_namespace() -> None:
    """The torch.linalg names, and the torch.* ones of the family."""
    for name in ag.linalg.__all__:
        assert hasattr(torch.linalg, name), name
        assert callable(getattr(ag.linalg, name))
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
                 "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "matrix_exp",
                 "triangular_solve"):
        assert callable(getattr(ag, name)), name
        assert callable(getattr(ag.Tensor, name)), name
