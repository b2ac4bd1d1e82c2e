"""Norms (``linalg.norm``, ``vector_norm``, ``matrix_norm``, ``cond``) and the products and
reshapings of ``torch.linalg`` (``matrix_power``, ``multi_dot``, ``vecdot``, ``cross``,
``tensorinv``, ``tensorsolve``), composed from existing differentiable ops as PyTorch composes
them (so their ``grad_fn`` names are PyTorch's too)."""

from __future__ import annotations

import math
from typing import Any, Callable, Sequence

from ..dtypes import c_type_name
from ..ops import decomp as D
from ..ops import decomp_spectral as S
from ..ops import linalg as LO
from ..ops import reduce as R
from ..ops.util import normalize_dim, normalize_dims
from ..tensor import Tensor
from . import decomp_util as U
from .arith import _type_name
from .checks import expect_tensor, invalid_arguments

_INF = math.inf


# ---- norms -------------------------------------------------------------------------------------

def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None, out: Tensor | None = None) -> Tensor:
    """The ``ord``-norm of ``x`` over ``dim`` (all dims when None): ``sum(|x|^ord)^(1/ord)``;
    ``inf``/``-inf`` the max/min of ``|x|``, 0 the count of nonzeros (LinalgVectorNormBackward0).
    ``dtype``: compute and return in that floating dtype."""
    expect_tensor("linalg_vector_norm", "input", 1, x)
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    if x.dtype.is_complex:  # NOTE: the norm of the magnitudes (a real result)
        x = x.abs()
    U.check_floating("linalg.vector_norm", x)
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {_type_name(dtype)}")
        x = x.to(dtype)
    dims = normalize_dims(dim, x.ndim)
    p = float(ord)
    if p < 0 or math.isinf(p):
        _check_identity(x, dims, dim, p)
    out_t = R.Norm.apply(x, dims=dims, keepdim=bool(keepdim), p=p)
    return U.finish("linalg_vector_norm", out_t, out, (x,))


def _check_identity(x: Tensor, dims: tuple[int, ...], dim: Any, p: float) -> None:
    """PyTorch's refusal of a max/min-like norm (ord inf, -inf or negative) over no element."""
    name = "inf" if p == _INF else "-inf" if p == -_INF else repr(p)
    if x.numel() == 0 and (dim is None or dim == () or dim == []):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on an empty tensor "
                           "because the operation does not have an identity")
    for d in dims:
        if x.shape[d] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {name} norm on the "
                               f"dimension {d}because this dimension is empty and the operation "
                               "does not have an identity")


def matrix_norm(A: Tensor, ord: Any = "fro",  # noqa: A002,N803
                dim: Any = (-2, -1), keepdim: bool = False, *, dtype: Any = None,
                out: Tensor | None = None) -> Tensor:
    """A matrix norm over the two dims ``dim``: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 2/-2 (largest/smallest singular value), 1/-1 (max/min column abs sum), inf/-inf
    (max/min row abs sum)."""
    expect_tensor("linalg_matrix_norm", "input", 1, A)
    if isinstance(dim, int):
        raise invalid_arguments("linalg_matrix_norm", (A,), {"dim": dim})
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    U.check_floating("linalg.matrix_norm", A, complex_ok=True)
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dims))}")
    d0, d1 = (normalize_dim(d, A.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dims[0]}, "
                           f"{dims[1]})")
    if isinstance(ord, str):
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif isinstance(ord, bool) or float(ord) not in (1, -1, 2, -2, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {_fmt(ord)} not supported.")
    spectral = ord == "nuc" or (ord != "fro" and abs(float(ord)) == 2)
    if spectral and A.dtype.name == "float16":
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got Half")
    if ord != "fro" and A.numel() == 0 and (ord == "nuc" or float(ord) > 0):
        # NOTE: as PyTorch's: a max over no singular value or sum is 0 (a min still refuses)
        shape = [1 if i in (d0, d1) else s for i, s in enumerate(A.shape)]
        if not keepdim:
            shape = [s for i, s in enumerate(shape) if i not in (d0, d1)]
        result = A.new_zeros(tuple(shape), dtype=dtype or A.dtype.to_real())
    elif ord == "fro":
        result = vector_norm(A, 2, (d0, d1), keepdim, dtype=dtype)
    elif spectral:
        result = _spectral_norm(A, ord, d0, d1, keepdim, dtype)
    else:
        p = float(ord)
        first, second = (d1, d0) if abs(p) == _INF else (d0, d1)
        if not keepdim and first < second:
            second -= 1
        sums = vector_norm(A, 1, first, keepdim, dtype=dtype)
        result = sums.amax(second, keepdim) if p > 0 else sums.amin(second, keepdim)
    return U.finish("linalg_matrix_norm", result, out, (A,))


def _fmt(ord: Any) -> str:  # noqa: A002
    return str(int(ord)) if isinstance(ord, int) or float(ord).is_integer() else str(ord)


def _spectral_norm(A: Tensor, ord: Any, d0: int, d1: int, keepdim: bool,  # noqa: A002,N803
                   dtype: Any) -> Tensor:
    """'nuc', 2 and -2: the singular values of the matrices moved to the last two dims."""
    from .decomp_spectral import svdvals

    if dtype is not None:
        A = A.to(dtype)
    rest = [i for i in range(A.ndim) if i not in (d0, d1)]
    perm = rest + [d0, d1]
    s = svdvals(A.permute(*perm))
    if ord == "nuc":
        result = s.sum(-1)
    else:
        result = s.amax(-1) if float(ord) > 0 else s.amin(-1)
    if keepdim:
        inverse = [perm.index(i) for i in range(A.ndim)]
        result = result.unsqueeze(-1).unsqueeze(-1).permute(*inverse)
    return result


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,  # noqa: A002,N803
         out: Tensor | None = None, dtype: Any = None) -> Tensor:
    """``linalg.norm``: a vector norm over one dim (or over all of a 1-D input, or of any
    input when ``ord`` is None), a matrix norm over two dims (or of a 2-D input)."""
    expect_tensor("linalg_norm", "input", 1, A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dims)}")
    else:
        dims = None
    if ord is None:
        result = vector_norm(A, 2, dims, keepdim, dtype=dtype)
    else:
        if dims is None:
            if isinstance(ord, str) or A.ndim == 2:
                dims = (-2, -1)
            elif A.ndim != 1:
                raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                                   f"must be 1D or 2D. Got {A.ndim}D.")
            else:
                dims = (0,)
        if isinstance(ord, str) or len(dims) == 2:
            result = matrix_norm(A, ord, dims, keepdim, dtype=dtype)
        else:
            result = vector_norm(A, ord, dims, keepdim, dtype=dtype)
    return U.finish("linalg_norm", result, out, (A,))


def cond(A: Tensor, p: Any = None, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The condition number ``norm(A, p) * norm(A^-1, p)``; for p None, 2 and -2 the ratio of
    extreme singular values (any shape). A singular matrix has condition number inf."""
    from .decomp_spectral import svdvals

    expect_tensor("linalg_cond", "input", 1, A)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    valid = ("fro", "nuc") if isinstance(p, str) else (None, 1, -1, 2, -2, _INF, -_INF)
    if p not in valid or isinstance(p, bool):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p is None or (not isinstance(p, str) and abs(p) == 2):
        s = svdvals(A)
        if A.numel() == 0:
            return U.finish("linalg_cond", s.new_zeros(tuple(A.shape[:-2])), out, (A,))
        big, small = s[..., :1], s[..., -1:]
        result = (small / big if p == -2 else big / small).squeeze(-1)
        return U.finish("linalg_cond", result, out, (A,))
    U.check_floating("linalg.cond", A, complex_ok=True)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    inverse, info = D.InvEx.apply(A, check=False)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    result = result.where(info == 0, _INF)
    return U.finish("linalg_cond", result, out, (A,))


# ---- products ----------------------------------------------------------------------------------

def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """``A`` multiplied by itself ``n`` times (``n = 0``: the identity; ``n < 0``: powers of the
    inverse), by repeated squaring as PyTorch (MmBackward0 / BmmBackward0 nodes)."""
    expect_tensor("linalg_matrix_power", "input", 1, A)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    U.check_matrix("linalg.matrix_power", A, square=True, floating=False)
    if A.dtype.name == "bool" and abs(n) > 1:
        raise NotImplementedError(f"\"addmm_impl_{A._device.type}_\" not implemented for 'Bool'")
    if n == 0:
        from .inplace_ops import copy_

        eye = D.eye_like(A, A.shape[-1]).expand(tuple(A.shape))
        result = copy_(_contiguous_clone(A), eye)
        return U.finish("linalg_matrix_power", result, out, (A,))
    from .decomp import inv

    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 1:
        result = _contiguous_clone(a)
    elif n == 2:
        result = a @ a
    elif n == 3:
        result = (a @ a) @ a
    else:
        z: Tensor | None = None
        acc: Tensor | None = None
        while n > 0:
            bit, n = n % 2, n // 2
            z = a if z is None else z @ z
            if bit:
                acc = z if acc is None else acc @ z
        assert acc is not None
        result = acc
    return U.finish("linalg_matrix_power", result, out, (A,))


def _contiguous_clone(a: Tensor) -> Tensor:
    """``a.clone(memory_format=torch.contiguous_format)`` (CloneBackward0)."""
    return a.clone() if a.is_contiguous() else a.contiguous()


def multi_dot(tensors: Sequence[Tensor], *, out: Tensor | None = None) -> Tensor:
    """The product of a chain of matrices in the cheapest order; the first may be a row vector
    and the last a column vector (the result then loses those dims)."""
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    for name, t in (("first", first), ("last", last)):
        if t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {name} tensor must be 1D or 2D but got "
                               f"{t.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               f"is {c_type_name(first.dtype)} and tensor {i} "
                               f"{c_type_name(t.dtype)}")
        U.check_same_device(first, t)
    out_shape = tuple(first.shape[:-1]) + tuple(last.shape[1:])
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = first.unsqueeze(0)
    if last.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} cannot "
                               "be multiplied")
    result = _chain(mats).view(out_shape)
    return U.finish("linalg_multi_dot", result, out, tensors)


def _chain(mats: list[Tensor]) -> Tensor:
    """The product of 2-D ``mats`` in the order of fewest multiplications (matrix-chain DP)."""
    from .linalg import mm

    n = len(mats)
    if n == 2:
        return mm(mats[0], mats[1])
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    if n == 3:
        a, b, c, d = dims
        cost_left = a * b * c + a * c * d
        cost_right = b * c * d + a * b * d
        if cost_left > cost_right:
            return mm(mats[0], mm(mats[1], mats[2]))
        return mm(mm(mats[0], mats[1]), mats[2])
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def build(i: int, j: int) -> Tensor:
        if i == j:
            return mats[i]
        k = split[i][j]
        return mm(build(i, k), build(k + 1, j))

    return build(0, n - 1)


class _Vdot(LO.Dot):
    node_name = "VdotBackward0"


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """The dot product of ``x`` and ``y`` along ``dim`` (broadcast)."""
    expect_tensor("linalg_vecdot", "x", 1, x)
    expect_tensor("linalg_vecdot", "y", 2, y)
    U.check_floating("linalg.vecdot", x, complex_ok=True)
    U.check_same_dtype("linalg.vecdot", x, y, names=("x", "y"))
    if x.dtype.is_complex:  # NOTE: x conjugated, as PyTorch's
        from .complex import conj  # NOTE: late: complex is a later family

        result = (conj(x) * y).sum(dim)
    elif x.ndim == 1 and y.ndim == 1:
        result = _Vdot.apply(x, y)
    else:
        result = (x * y).sum(dim)
    return U.finish("linalg_vecdot", result, out, (x, y))


def cross(input: Tensor, other: Tensor, *, dim: int = -1,  # noqa: A002
          out: Tensor | None = None) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the other dims broadcast)."""
    expect_tensor("linalg_cross", "input", 1, input)
    expect_tensor("linalg_cross", "other", 2, other)
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    U.broadcast_batch("linalg.cross", tuple(input.shape), tuple(other.shape))
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(other.dtype)}")
    U.check_same_device(input, other)
    if input.dtype.name == "bool":
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    result = S.Cross.apply(input, other, dim=d)
    return U.finish("linalg_cross", result, out, (input, other))


# ---- tensor reshapings -------------------------------------------------------------------------

def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:  # noqa: N803
    """The inverse of ``A`` seen as a linear map from its last dims (``A.shape[ind:]``) to its
    first ``ind`` dims: shape ``A.shape[ind:] + A.shape[:ind]``."""
    expect_tensor("linalg_tensorinv", "input", 1, A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    start, end = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    rows, cols = math.prod(start), math.prod(end)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    square = A.reshape(cols, cols)
    U.check_matrix("linalg.inv", square, square=True, complex_ok=True)
    U.no_half(square, fn="linalg.inv")
    try:
        result = D.InvEx.apply(square, check=True)[0]
    except D.LinAlgError as e:
        raise D.LinAlgError(str(e).replace("linalg.inv:", "inv:", 1)) from None
    return U.finish("linalg_tensorinv", result.reshape(end + start), out, (A,))


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None, *,  # noqa: N803
                out: Tensor | None = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``: ``A`` reshaped to a square matrix (after
    moving ``dims`` to the end)."""
    expect_tensor("linalg_tensorsolve", "input", 1, A)
    expect_tensor("linalg_tensorsolve", "other", 2, B)
    if dims is not None:
        moved = [normalize_dim(d, A.ndim) for d in dims]
        A = A.permute(*[i for i in range(A.ndim) if i not in moved], *moved)
    result_shape = tuple(A.shape[B.ndim:])
    rows, cols = math.prod(B.shape), math.prod(result_shape)
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    from .decomp import solve

    result = solve(A.reshape(cols, cols), B.flatten())
    return U.finish("linalg_tensorsolve", result.reshape(result_shape), out, (A, B))


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of ``x`` (..., n): ``(..., n, N)`` with columns ``x**0, x**1,
    ..., x**(N-1)`` (``N`` defaults to ``n``), built as PyTorch's: ones, then a cumulative
    product (CatBackward0)."""
    expect_tensor("linalg_vander", "x", 1, x)
    n = N if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    from . import cat, cumprod  # NOTE: late: the families load after this module

    powers = cumprod(x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,)), -1)
    return cat([x.unsqueeze(-1).new_ones(tuple(x.shape) + (1,)), powers], -1)


__all__: list[str] = ["matrix_power"]
TENSOR_METHODS: dict[str, Callable[..., Any]] = {"matrix_power": matrix_power}
