"""The op table: one ``OpInfo`` per op variant drives test_ops, test_gradcheck and
test_torch_parity.

``fn(m, *xs)`` is written once and called with ``m = autograd_gpu`` (ours) or ``m = torch`` (the
oracle); ``ref(*arrays)`` is a NumPy reference where one is easy. ``samples`` lists the input
shapes of each sample; ``domain`` says where inputs are drawn (per input or for all), so that
samples avoid poles and kinks unless an entry is about them (ties, zeros).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import autograd_gpu as ag

Shape = tuple[int, ...]


@dataclass(frozen=True)
class OpInfo:
    """One op variant. ``grad_fn`` is PyTorch's node name of the (first float) output."""

    name: str
    fn: Callable[..., Any]
    ref: Callable[..., Any] | None
    samples: tuple[tuple[Shape, ...], ...]
    grad_fn: str | None = None
    domain: str | tuple[str, ...] = "real"
    differentiable: bool = True
    twice: bool = True
    gradcheck: bool = True  # False where samples sit on kinks on purpose (ties)
    rtol: float = 1e-5  # float32 tolerances; float64 uses 1e-10 / 1e-12
    atol: float = 1e-6

    def ours(self, *xs: Any) -> Any:
        """The op on autograd_gpu tensors."""
        return self.fn(ag, *xs)

    def theirs(self, *xs: Any) -> Any:
        """The op on torch tensors."""
        import torch

        return self.fn(torch, *xs)

    def domains(self, n: int) -> tuple[str, ...]:
        return (self.domain,) * n if isinstance(self.domain, str) else self.domain


# ---- input domains ---------------------------------------------------------------------------

def _distinct(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    n = int(np.prod(shape))
    vals = (rng.permutation(n) - n / 2.0 + 0.5) * 0.29 + 0.013  # no value near 0, ±0.5, ±1
    return vals.reshape(shape)


def _ties(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    return rng.integers(-1, 2, size=shape).astype(np.float64)


def _zeros(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    """Normal values with zeros: the first row/element once, the last twice (prod, norm)."""
    x = rng.standard_normal(shape)
    flat = x.reshape(-1) if x.ndim else x.reshape(1)
    flat[::3] = 0.0
    return x


DOMAINS: dict[str, Callable[[np.random.Generator, Shape], np.ndarray]] = {
    "real": lambda rng, s: rng.standard_normal(s),
    "positive": lambda rng, s: rng.uniform(0.5, 2.0, s),
    "nonzero": lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.3, 2.0, s),
    "unit": lambda rng, s: rng.uniform(-0.9, 0.9, s),
    "distinct": _distinct,
    "ties": _ties,
    "zeros": _zeros,
    "allzero": lambda rng, s: np.zeros(s),
}


def sample_arrays(op: OpInfo, shapes: tuple[Shape, ...], seed: int = 0) -> list[np.ndarray]:
    """float64 inputs of ``shapes`` from the op's domains (deterministic per seed)."""
    rng = np.random.default_rng(seed)
    return [np.asarray(DOMAINS[d](rng, s), dtype=np.float64)
            for d, s in zip(op.domains(len(shapes)), shapes)]


def float_outputs(out: Any) -> list[Any]:
    """The floating-point tensors among an op's outputs (tuples flattened)."""
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    return [o for o in outs if o.dtype.is_floating_point]


# ---- sample shapes ---------------------------------------------------------------------------

def _const(m: Any, like: Any, shape: Shape) -> Any:
    """A fixed operand that needs no gradient, built by ``m`` (autograd_gpu, torch or numpy)."""
    n = int(np.prod(shape))
    if m is np:
        return (np.arange(n, dtype=like.dtype) / n - 0.4).reshape(shape)
    return (m.arange(n, dtype=like.dtype, device=like.device) / n - 0.4).reshape(shape)


UNARY = (((),), ((0,),), ((1,),), ((3, 5),), ((2, 3, 4),))
BINARY = (((), ()), ((3, 5), (3, 5)), ((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((0,), (0,)),
          ((1,), (3,)), ((2, 0, 3), (3,)), ((), (3, 5)), ((3, 5), ()))
TERNARY = (((), (), ()), ((3, 5), (3, 5), (3, 5)), ((3, 1), (1, 4), (3, 4)), ((2, 3, 4), (4,), ()),
           ((0,), (0,), (0,)))
RED_ALL = (((),), ((1,),), ((3, 5),), ((2, 3, 4),))
RED_DIM = (((1,),), ((3, 5),), ((2, 3, 4),), ((3, 0),))
RED_DIM_NZ = (((1,),), ((3, 5),), ((2, 3, 4),))  # no size-0 reduced dim (max/min need elements)
MAT = (((3, 5),), ((2, 3, 4),))
IDX = (((3, 5),), ((3, 4, 2),))
SOFTMAX = (((),), ((1,),), ((3, 5),), ((2, 3, 4),), ((0, 3),))

OPS: list[OpInfo] = [
    # ---- arithmetic: tensor-tensor and Python scalars, reflected forms --------------------------
    OpInfo("add", lambda m, x, y: x + y, np.add, BINARY, "AddBackward0"),
    OpInfo("add_alpha", lambda m, x, y: m.add(x, y, alpha=2), lambda x, y: x + 2 * y, BINARY,
           "AddBackward0"),
    OpInfo("add_scalar", lambda m, x: x + 2.5, lambda x: x + 2.5, UNARY, "AddBackward0"),
    OpInfo("radd_scalar", lambda m, x: 2 + x, lambda x: 2 + x, UNARY, "AddBackward0"),
    OpInfo("sub", lambda m, x, y: x - y, np.subtract, BINARY, "SubBackward0"),
    OpInfo("sub_alpha", lambda m, x, y: m.sub(x, y, alpha=0.5), lambda x, y: x - 0.5 * y, BINARY,
           "SubBackward0"),
    OpInfo("sub_scalar", lambda m, x: x - 2, lambda x: x - 2, UNARY, "SubBackward0"),
    OpInfo("rsub_scalar", lambda m, x: 2 - x, lambda x: 2 - x, UNARY, "RsubBackward1"),
    OpInfo("mul", lambda m, x, y: x * y, np.multiply, BINARY, "MulBackward0"),
    OpInfo("mul_scalar", lambda m, x: x * 1.5, lambda x: x * 1.5, UNARY, "MulBackward0"),
    OpInfo("rmul_scalar", lambda m, x: 3 * x, lambda x: 3 * x, UNARY, "MulBackward0"),
    OpInfo("div", lambda m, x, y: x / y, np.divide, BINARY, "DivBackward0",
           domain=("real", "nonzero")),
    OpInfo("div_scalar", lambda m, x: x / 4, lambda x: x / 4, UNARY, "DivBackward0"),
    OpInfo("rdiv_scalar", lambda m, x: 2 / x, lambda x: 2 / x, UNARY, "MulBackward0",
           domain="nonzero"),
    OpInfo("pow", lambda m, x, y: x ** y, np.power, BINARY, "PowBackward1",
           domain=("positive", "real")),
    OpInfo("pow_2", lambda m, x: x ** 2, lambda x: x ** 2, UNARY, "PowBackward0"),
    OpInfo("pow_3", lambda m, x: x ** 3, lambda x: x ** 3, UNARY, "PowBackward0"),
    OpInfo("pow_half", lambda m, x: x ** 0.5, np.sqrt, UNARY, "PowBackward0", domain="positive"),
    OpInfo("pow_neg", lambda m, x: x ** -1.5, lambda x: x ** -1.5, UNARY, "PowBackward0",
           domain="positive"),
    OpInfo("pow_0", lambda m, x: x ** 0, lambda x: x ** 0, UNARY, "PowBackward0"),
    OpInfo("rpow_scalar", lambda m, x: 2 ** x, lambda x: 2 ** x, UNARY, "PowBackward2"),
    OpInfo("rpow_float", lambda m, x: 0.5 ** x, lambda x: 0.5 ** x, UNARY, "PowBackward2"),
    OpInfo("square", lambda m, x: m.square(x), np.square, UNARY, "PowBackward0"),
    # ---- unary ----------------------------------------------------------------------------------
    OpInfo("neg", lambda m, x: -x, np.negative, UNARY, "NegBackward0"),
    OpInfo("abs", lambda m, x: x.abs(), np.abs, UNARY, "AbsBackward0", domain="nonzero"),
    OpInfo("exp", lambda m, x: x.exp(), np.exp, UNARY, "ExpBackward0"),
    OpInfo("log", lambda m, x: x.log(), np.log, UNARY, "LogBackward0", domain="positive"),
    OpInfo("log1p", lambda m, x: x.log1p(), np.log1p, UNARY, "Log1PBackward0", domain="positive"),
    OpInfo("expm1", lambda m, x: x.expm1(), np.expm1, UNARY, "Expm1Backward0"),
    OpInfo("sqrt", lambda m, x: x.sqrt(), np.sqrt, UNARY, "SqrtBackward0", domain="positive"),
    OpInfo("rsqrt", lambda m, x: x.rsqrt(), lambda x: 1 / np.sqrt(x), UNARY, "RsqrtBackward0",
           domain="positive"),
    OpInfo("reciprocal", lambda m, x: x.reciprocal(), lambda x: 1 / x, UNARY,
           "ReciprocalBackward0", domain="nonzero"),
    OpInfo("sin", lambda m, x: x.sin(), np.sin, UNARY, "SinBackward0"),
    OpInfo("cos", lambda m, x: x.cos(), np.cos, UNARY, "CosBackward0"),
    OpInfo("tanh", lambda m, x: x.tanh(), np.tanh, UNARY, "TanhBackward0"),
    OpInfo("sigmoid", lambda m, x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), UNARY,
           "SigmoidBackward0"),
    OpInfo("relu", lambda m, x: x.relu(), lambda x: np.maximum(x, 0), UNARY, "ReluBackward0",
           domain="nonzero"),
    OpInfo("relu_at_zero", lambda m, x: m.relu(x), lambda x: np.maximum(x, 0), UNARY,
           "ReluBackward0", domain="ties", gradcheck=False),
    OpInfo("abs_at_zero", lambda m, x: m.abs(x), np.abs, UNARY, "AbsBackward0", domain="ties",
           gradcheck=False),
    # ---- clamp / maximum / minimum / where ------------------------------------------------------
    OpInfo("clamp", lambda m, x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), UNARY,
           "ClampBackward1", domain="distinct"),
    OpInfo("clamp_min", lambda m, x: m.clamp(x, min=0.1), lambda x: np.maximum(x, 0.1), UNARY,
           "ClampBackward1", domain="distinct"),
    OpInfo("clamp_max", lambda m, x: m.clamp(x, max=0.2), lambda x: np.minimum(x, 0.2), UNARY,
           "ClampBackward1", domain="distinct"),
    OpInfo("clip", lambda m, x: m.clip(x, -1, 1), lambda x: np.clip(x, -1, 1), UNARY,
           "ClampBackward1", domain="distinct"),
    OpInfo("clamp_at_bounds", lambda m, x: x.clamp(-1, 1), lambda x: np.clip(x, -1, 1), UNARY,
           "ClampBackward1", domain="ties", gradcheck=False),
    OpInfo("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi),
           lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi), TERNARY, "ClampBackward0"),
    OpInfo("clamp_tensor_min", lambda m, x, lo: x.clamp(min=lo), np.maximum, BINARY,
           "ClampBackward0"),
    OpInfo("maximum", lambda m, x, y: m.maximum(x, y), np.maximum, BINARY, "MaximumBackward0"),
    OpInfo("minimum", lambda m, x, y: m.minimum(x, y), np.minimum, BINARY, "MinimumBackward0"),
    OpInfo("maximum_ties", lambda m, x, y: m.maximum(x, y), np.maximum, BINARY,
           "MaximumBackward0", domain="ties", gradcheck=False),
    OpInfo("minimum_ties", lambda m, x, y: m.minimum(x, y), np.minimum, BINARY,
           "MinimumBackward0", domain="ties", gradcheck=False),
    OpInfo("where", lambda m, x, y: m.where(x > y, x, y * 2), lambda x, y: np.where(x > y, x, y * 2),
           BINARY, "WhereBackward0"),
    OpInfo("where_scalar", lambda m, x: m.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0),
           UNARY, "WhereBackward0"),
    OpInfo("masked_fill", lambda m, x: x.masked_fill(x > 0, 0.5),
           lambda x: np.where(x > 0, 0.5, x), UNARY, "MaskedFillBackward0"),
    OpInfo("masked_fill_tensor", lambda m, x, y: x.masked_fill(y > 0, y.sum()),
           lambda x, y: np.where(y > 0, y.sum(), x), BINARY, "MaskedFillBackward1"),
    # ---- comparisons (no gradient) --------------------------------------------------------------
    OpInfo("lt", lambda m, x, y: x < y, np.less, BINARY, differentiable=False, domain="ties"),
    OpInfo("le", lambda m, x, y: x <= y, np.less_equal, BINARY, differentiable=False,
           domain="ties"),
    OpInfo("gt_scalar", lambda m, x: x > 0, lambda x: x > 0, UNARY, differentiable=False,
           domain="ties"),
    OpInfo("ge", lambda m, x, y: x >= y, np.greater_equal, BINARY, differentiable=False,
           domain="ties"),
    OpInfo("eq", lambda m, x, y: x == y, np.equal, BINARY, differentiable=False, domain="ties"),
    OpInfo("ne", lambda m, x, y: x != y, np.not_equal, BINARY, differentiable=False, domain="ties"),
    # ---- reductions -----------------------------------------------------------------------------
    OpInfo("sum", lambda m, x: x.sum(), np.sum, UNARY, "SumBackward0"),
    OpInfo("sum_dim", lambda m, x: x.sum(-1), lambda x: x.sum(-1), RED_DIM, "SumBackward1"),
    OpInfo("sum_dims_keepdim", lambda m, x: m.sum(x, (0, -1), keepdim=True),
           lambda x: x.sum((0, -1), keepdims=True), MAT + (((0, 3),),), "SumBackward1"),
    OpInfo("mean", lambda m, x: x.mean(), np.mean, RED_ALL, "MeanBackward0"),
    OpInfo("mean_dim", lambda m, x: x.mean(0), lambda x: x.mean(0), RED_DIM_NZ, "MeanBackward1"),
    OpInfo("mean_dims_keepdim", lambda m, x: x.mean((0, -1), keepdim=True),
           lambda x: x.mean((0, -1), keepdims=True), MAT, "MeanBackward1"),
    OpInfo("var", lambda m, x: x.var(), lambda x: x.var(ddof=1), MAT + (((2,),),),
           "VarBackward0", rtol=1e-4),
    OpInfo("var_dim", lambda m, x: x.var(-1), lambda x: x.var(-1, ddof=1), MAT, "VarBackward0",
           rtol=1e-4),
    OpInfo("var_keepdim_c0", lambda m, x: x.var(0, keepdim=True, correction=0),
           lambda x: x.var(0, keepdims=True), MAT + (((1,),),), "VarBackward0", rtol=1e-4),
    OpInfo("std", lambda m, x: x.std(), lambda x: x.std(ddof=1), MAT, "StdBackward0", rtol=1e-4),
    OpInfo("std_dim", lambda m, x: m.std(x, (0, -1), keepdim=True),
           lambda x: x.std((0, -1), ddof=1, keepdims=True), MAT, "StdBackward0", rtol=1e-4),
    OpInfo("std_at_zero", lambda m, x: x.std(0, correction=0), lambda x: x.std(0), MAT,
           "StdBackward0", domain="allzero", twice=False),
    OpInfo("prod", lambda m, x: x.prod(), np.prod, RED_ALL + (((0,),),), "ProdBackward0"),
    OpInfo("prod_dim", lambda m, x: x.prod(1), lambda x: x.prod(1), MAT, "ProdBackward1"),
    OpInfo("prod_dim_keepdim", lambda m, x: x.prod(-1, keepdim=True),
           lambda x: x.prod(-1, keepdims=True), ((((1,),),) + MAT), "ProdBackward1"),
    OpInfo("prod_zeros", lambda m, x: x.prod(), np.prod, ((((5,),),) + MAT), "ProdBackward0",
           domain="zeros"),
    OpInfo("prod_dim_zeros", lambda m, x: x.prod(0), lambda x: x.prod(0), ((((3,),),) + MAT),
           "ProdBackward1", domain="zeros"),
    OpInfo("max", lambda m, x: x.max(), np.max, RED_ALL, "MaxBackward1", domain="distinct"),
    OpInfo("min", lambda m, x: m.min(x), np.min, RED_ALL, "MinBackward1", domain="distinct"),
    OpInfo("max_ties", lambda m, x: x.max(), np.max, RED_ALL, "MaxBackward1", domain="ties",
           gradcheck=False),
    OpInfo("max_dim", lambda m, x: x.max(dim=-1), lambda x: (x.max(-1), x.argmax(-1)), RED_DIM_NZ,
           "MaxBackward0", domain="distinct"),
    OpInfo("min_dim_keepdim", lambda m, x: m.min(x, 0, keepdim=True),
           lambda x: (x.min(0, keepdims=True), x.argmin(0, keepdims=True)), RED_DIM_NZ,
           "MinBackward0", domain="distinct"),
    OpInfo("max_dim_ties", lambda m, x: x.max(1), lambda x: (x.max(1), x.argmax(1)), MAT,
           "MaxBackward0", domain="ties", gradcheck=False),
    OpInfo("max_dim_0d", lambda m, x: x.max(0), lambda x: (x, np.zeros((), np.int64)), (((),),),
           "MaxBackward0"),
    OpInfo("amax", lambda m, x: x.amax(), np.max, RED_ALL, "AmaxBackward0", domain="distinct"),
    OpInfo("amax_dims", lambda m, x: m.amax(x, (0, -1), keepdim=True),
           lambda x: x.max((0, -1), keepdims=True), MAT, "AmaxBackward0", domain="distinct"),
    OpInfo("amin_dim", lambda m, x: x.amin(1), lambda x: x.min(1), MAT, "AminBackward0",
           domain="distinct"),
    OpInfo("amax_ties", lambda m, x: x.amax(-1), lambda x: x.max(-1), MAT, "AmaxBackward0",
           domain="ties", gradcheck=False),
    OpInfo("argmax", lambda m, x: x.argmax(), np.argmax, RED_ALL, differentiable=False,
           domain="distinct"),
    OpInfo("argmax_dim", lambda m, x: m.argmax(x, -1, keepdim=True),
           lambda x: x.argmax(-1, keepdims=True), RED_DIM_NZ, differentiable=False,
           domain="distinct"),
    OpInfo("argmin_dim", lambda m, x: x.argmin(0), lambda x: x.argmin(0), RED_DIM_NZ,
           differentiable=False, domain="distinct"),
    OpInfo("argmax_ties", lambda m, x: x.argmax(1), lambda x: x.argmax(1), MAT,
           differentiable=False, domain="ties"),
    OpInfo("logsumexp", lambda m, x: x.logsumexp(-1), lambda x: np.log(np.exp(x).sum(-1)),
           RED_DIM_NZ, "LogsumexpBackward0"),
    OpInfo("logsumexp_keepdim", lambda m, x: m.logsumexp(x, (0, 1), keepdim=True),
           lambda x: np.log(np.exp(x).sum((0, 1), keepdims=True)), MAT, "LogsumexpBackward0"),
    OpInfo("norm", lambda m, x: x.norm(), lambda x: np.sqrt((x * x).sum()), RED_ALL,
           "LinalgVectorNormBackward0"),
    OpInfo("norm_dim", lambda m, x: x.norm(dim=-1), lambda x: np.sqrt((x * x).sum(-1)), MAT,
           "LinalgVectorNormBackward0"),
    OpInfo("norm_p1", lambda m, x: m.norm(x, p=1), lambda x: np.abs(x).sum(), RED_ALL,
           "LinalgVectorNormBackward0", domain="nonzero"),
    OpInfo("norm_p3_keepdim", lambda m, x: x.norm(p=3, dim=0, keepdim=True),
           lambda x: (np.abs(x) ** 3).sum(0, keepdims=True) ** (1 / 3), MAT,
           "LinalgVectorNormBackward0", domain="nonzero", rtol=1e-4),
    OpInfo("norm_inf", lambda m, x: x.norm(p=float("inf"), dim=1),
           lambda x: np.abs(x).max(1), MAT, "LinalgVectorNormBackward0", domain="distinct"),
    OpInfo("norm_p_half_zeros", lambda m, x: x.norm(p=0.5, dim=-1),
           lambda x: (np.abs(x) ** 0.5).sum(-1) ** 2, MAT, "LinalgVectorNormBackward0",
           domain="zeros", gradcheck=False, twice=False),
    OpInfo("norm_p3_zeros", lambda m, x: x.norm(p=3), lambda x: (np.abs(x) ** 3).sum() ** (1 / 3),
           MAT, "LinalgVectorNormBackward0", domain="zeros", rtol=1e-4),
    OpInfo("norm_at_zero", lambda m, x: x.norm(), lambda x: np.sqrt((x * x).sum()), RED_ALL,
           "LinalgVectorNormBackward0", domain="allzero", twice=False),
    OpInfo("norm_dim_zero_rows", lambda m, x: x.norm(dim=0), lambda x: np.sqrt((x * x).sum(0)),
           MAT, "LinalgVectorNormBackward0", domain="zeros", gradcheck=False, twice=False),
    # ---- matrix products ------------------------------------------------------------------------
    OpInfo("mm", lambda m, x, y: x.mm(y), np.matmul, (((3, 4), (4, 2)), ((1, 1), (1, 1)),
           ((3, 0), (0, 2)), ((0, 3), (3, 2))), "MmBackward0", rtol=1e-4),
    OpInfo("bmm", lambda m, x, y: m.bmm(x, y), np.matmul, (((2, 3, 4), (2, 4, 5)),
           ((1, 1, 1), (1, 1, 1))), "BmmBackward0", rtol=1e-4),
    OpInfo("mv", lambda m, x, v: m.mv(x, v), np.matmul, (((3, 4), (4,)), ((1, 1), (1,))),
           "MvBackward0", rtol=1e-4),
    OpInfo("dot", lambda m, x, y: m.dot(x, y), np.dot, (((4,), (4,)), ((1,), (1,))),
           "DotBackward0", rtol=1e-4),
    OpInfo("addmm", lambda m, c, x, y: m.addmm(c, x, y), lambda c, x, y: c + x @ y,
           (((3, 5), (3, 4), (4, 5)), ((5,), (3, 4), (4, 5)), ((), (2, 2), (2, 3))),
           "AddmmBackward0", rtol=1e-4),
    OpInfo("addmm_beta_alpha", lambda m, c, x, y: m.addmm(c, x, y, beta=0.5, alpha=2),
           lambda c, x, y: 0.5 * c + 2 * (x @ y), (((3, 5), (3, 4), (4, 5)),), "AddmmBackward0",
           rtol=1e-4),
    OpInfo("matmul_1d_1d", lambda m, x, y: x @ y, np.matmul, (((4,), (4,)),), "DotBackward0",
           rtol=1e-4),
    OpInfo("matmul_2d_1d", lambda m, x, y: x @ y, np.matmul, (((3, 4), (4,)),), "MvBackward0",
           rtol=1e-4),
    OpInfo("matmul_1d_2d", lambda m, x, y: x @ y, np.matmul, (((4,), (4, 3)),), "SqueezeBackward4",
           rtol=1e-4),
    OpInfo("matmul_2d_2d", lambda m, x, y: m.matmul(x, y), np.matmul, (((3, 4), (4, 2)),),
           "MmBackward0", rtol=1e-4),
    OpInfo("matmul_3d_2d", lambda m, x, y: x @ y, np.matmul, (((2, 3, 4), (4, 5)),),
           "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_3d_1d", lambda m, x, y: x @ y, np.matmul, (((2, 3, 4), (4,)),),
           "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_1d_3d", lambda m, x, y: x @ y, np.matmul, (((4,), (2, 4, 3)),),
           "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_1d_3d_const", lambda m, y: _const(m, y, (4,)) @ y,
           lambda y: _const(np, y, (4,)) @ y, (((2, 4, 3),),), "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_3d_3d", lambda m, x, y: x @ y, np.matmul, (((2, 3, 4), (2, 4, 5)),),
           "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_broadcast", lambda m, x, y: x @ y, np.matmul,
           (((2, 1, 3, 4), (5, 4, 2)), ((2, 3, 4), (1, 1, 4, 2))), "UnsafeViewBackward0",
           rtol=1e-4),
    OpInfo("matmul_2d_3d", lambda m, x, y: x @ y, np.matmul, (((3, 4), (2, 4, 5)),),
           "CloneBackward0", rtol=1e-4),
    OpInfo("matmul_2d_3d_const", lambda m, y: _const(m, y, (3, 4)) @ y,
           lambda y: _const(np, y, (3, 4)) @ y, (((2, 4, 5),),), "UnsafeViewBackward0",
           rtol=1e-4),
    OpInfo("matmul_batch_one", lambda m, x, y: x @ y, np.matmul, (((1, 3, 4), (2, 4, 2)),),
           "CloneBackward0", rtol=1e-4),
    OpInfo("matmul_batch_one_rhs", lambda m, x, y: x @ y, np.matmul, (((2, 3, 4), (1, 4, 2)),),
           "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("matmul_empty", lambda m, x, y: x @ y, np.matmul,
           (((2, 0, 4), (4, 3)), ((2, 3, 0), (2, 0, 5))), "UnsafeViewBackward0", rtol=1e-4),
    OpInfo("mT_matmul", lambda m, x, y: x.mT @ y, lambda x, y: np.swapaxes(x, -1, -2) @ y,
           (((4, 3), (4, 2)),), "MmBackward0", rtol=1e-4),
    # ---- shape ----------------------------------------------------------------------------------
    OpInfo("reshape", lambda m, x: x.reshape(5, 3), lambda x: x.reshape(5, 3), (((3, 5),),),
           "ViewBackward0"),
    OpInfo("reshape_infer", lambda m, x: x.reshape(-1), lambda x: x.reshape(-1),
           UNARY, "ViewBackward0"),
    OpInfo("reshape_noncontig", lambda m, x: x.t().reshape(-1), lambda x: x.T.reshape(-1),
           (((3, 5),),), "UnsafeViewBackward0"),
    OpInfo("view", lambda m, x: x.view(2, -1), lambda x: x.reshape(2, -1), (((2, 3, 4),),),
           "ViewBackward0"),
    OpInfo("flatten", lambda m, x: x.flatten(), lambda x: x.reshape(-1), (((),), ((3, 5),),
           ((2, 3, 4),)), "ViewBackward0"),
    OpInfo("flatten_dims", lambda m, x: m.flatten(x, 1), lambda x: x.reshape(x.shape[0], -1),
           (((2, 3, 4),), ((2, 0, 3),)), "ViewBackward0"),
    OpInfo("squeeze", lambda m, x: x.squeeze(), np.squeeze, (((1,),), ((3, 1, 5),), ((1, 1),)),
           "SqueezeBackward0"),
    OpInfo("squeeze_dim", lambda m, x: x.squeeze(1), lambda x: x.squeeze(1), (((3, 1, 5),),),
           "SqueezeBackward1"),
    OpInfo("squeeze_dims", lambda m, x: m.squeeze(x, (0, 1)), lambda x: x.squeeze(0),
           (((1, 3, 5),),), "SqueezeBackward2"),
    OpInfo("unsqueeze", lambda m, x: x.unsqueeze(-1), lambda x: x[..., None], UNARY,
           "UnsqueezeBackward0"),
    OpInfo("expand", lambda m, x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)),
           (((3, 1),), ((1, 4),), ((),)), "ExpandBackward0"),
    OpInfo("expand_keep", lambda m, x: x.expand(4, -1), lambda x: np.broadcast_to(x, (4, 3)),
           (((1, 3),),), "ExpandBackward0"),
    OpInfo("transpose", lambda m, x: x.transpose(0, -1), lambda x: np.swapaxes(x, 0, -1),
           MAT, "TransposeBackward0"),
    OpInfo("permute", lambda m, x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
           (((2, 3, 4),),), "PermuteBackward0"),
    OpInfo("t", lambda m, x: x.t(), lambda x: x.T, (((3, 5),), ((4,),)), "TBackward0"),
    OpInfo("T", lambda m, x: x.T, lambda x: x.T, (((3, 5),),), "PermuteBackward0"),
    OpInfo("mT", lambda m, x: x.mT, lambda x: np.swapaxes(x, -1, -2), MAT, "TransposeBackward0"),
    OpInfo("repeat", lambda m, x: x.repeat(2, 3), lambda x: np.tile(x, (2, 3)),
           (((3,),), ((2, 1),), ((),)), "RepeatBackward0"),
    OpInfo("repeat_more_dims", lambda m, x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2)),
           (((3, 5),),), "RepeatBackward0"),
    # ---- indexing -------------------------------------------------------------------------------
    OpInfo("index_int", lambda m, x: x[1], lambda x: x[1], IDX, "SelectBackward0"),
    OpInfo("index_neg_int", lambda m, x: x[-1, 2], lambda x: x[-1, 2], IDX, "SelectBackward0"),
    OpInfo("index_slice", lambda m, x: x[1:3], lambda x: x[1:3], IDX, "SliceBackward0"),
    OpInfo("index_slice_step", lambda m, x: x[:, ::2], lambda x: x[:, ::2], IDX, "SliceBackward0"),
    OpInfo("index_slice_offset_step", lambda m, x: x[1::2, 1:4:2],
           lambda x: x[1::2, 1:4:2], IDX, "SliceBackward0"),
    OpInfo("index_none", lambda m, x: x[None], lambda x: x[None], UNARY, "UnsqueezeBackward0"),
    OpInfo("index_ellipsis", lambda m, x: x[..., 0], lambda x: x[..., 0], IDX, "SelectBackward0"),
    OpInfo("index_mixed_basic", lambda m, x: x[:, None, 1:], lambda x: x[:, None, 1:], IDX,
           "SliceBackward0"),
    OpInfo("index_neg_slice", lambda m, x: x[-2:, :-1], lambda x: x[-2:, :-1], IDX,
           "SliceBackward0"),
    OpInfo("index_empty_slice", lambda m, x: x[2:1], lambda x: x[2:1], IDX, "SliceBackward0"),
    OpInfo("index_ellipsis_none_step", lambda m, x: x[..., None, ::2],
           lambda x: x[..., None, ::2], IDX, "SliceBackward0"),
    OpInfo("index_full_slice", lambda m, x: x[:], lambda x: x[:], IDX, "SliceBackward0"),
    OpInfo("index_full_slices", lambda m, x: x[:, :], lambda x: x[:, :], IDX, "AliasBackward0"),
    OpInfo("index_alias", lambda m, x: x[...], lambda x: x[...], UNARY, "AliasBackward0"),
    OpInfo("index_empty_tuple", lambda m, x: x[()], lambda x: x[()], (((),),), "AliasBackward0"),
    OpInfo("index_0d_tensor", lambda m, x: x[m.tensor(1)], lambda x: x[1], IDX,
           "SelectBackward0"),
    OpInfo("index_chained", lambda m, x: x[0][1], lambda x: x[0][1], IDX, "SelectBackward0"),
    OpInfo("index_empty_list", lambda m, x: x[[]], lambda x: x[np.array([], np.int64)], IDX,
           "IndexBackward0"),
    OpInfo("index_tensor", lambda m, x: x[m.tensor([0, 2, 1])], lambda x: x[[0, 2, 1]], IDX,
           "IndexBackward0"),
    OpInfo("index_tensor_repeated", lambda m, x: x[m.tensor([0, 2, 2, 0, 2])],
           lambda x: x[[0, 2, 2, 0, 2]], IDX, "IndexBackward0"),
    OpInfo("index_tensor_2d", lambda m, x: x[m.tensor([[0, 1], [1, 1]])],
           lambda x: x[np.array([[0, 1], [1, 1]])], IDX, "IndexBackward0"),
    OpInfo("index_list", lambda m, x: x[[1, 1, 0]], lambda x: x[[1, 1, 0]], IDX,
           "IndexBackward0"),
    OpInfo("index_bool_mask", lambda m, x: x[x > 0], lambda x: x[x > 0], UNARY, "IndexBackward0"),
    OpInfo("index_bool_rows", lambda m, x: x[m.tensor([True, False, True])],
           lambda x: x[np.array([True, False, True])], (((3, 5),), ((3, 2, 2),)),
           "IndexBackward0"),
    OpInfo("index_mixed_adv", lambda m, x: x[m.tensor([0, 2, 2]), 1:],
           lambda x: x[[0, 2, 2], 1:], IDX, "IndexBackward0"),
    OpInfo("index_int_and_tensor", lambda m, x: x[1, m.tensor([0, 0, 2])],
           lambda x: x[1, [0, 0, 2]], IDX, "IndexBackward0"),
    OpInfo("index_two_tensors", lambda m, x: x[m.tensor([0, 1, 1]), m.tensor([2, 0, 2])],
           lambda x: x[[0, 1, 1], [2, 0, 2]], IDX, "IndexBackward0"),
    OpInfo("gather", lambda m, x: m.gather(x, 1, m.tensor([[0, 0], [1, 0], [2, 2]],
                                                         device=x.device)),
           lambda x: np.take_along_axis(x, np.array([[0, 0], [1, 0], [2, 2]]), 1),
           (((3, 5),),), "GatherBackward0"),
    # NOTE: an index smaller than the input outside dim covers the leading positions only
    OpInfo("gather_partial_dim0", lambda m, x: m.gather(x, 0, m.tensor([[2], [0]],
                                                                     device=x.device)),
           lambda x: x[[[2], [0]], [[0], [0]]], (((3, 5),),), "GatherBackward0"),
    OpInfo("gather_partial_dim1", lambda m, x: m.gather(x, 1, m.tensor([[4, 4, 0], [1, 3, 1]],
                                                                     device=x.device)),
           lambda x: x[[[0], [1]], [[4, 4, 0], [1, 3, 1]]], (((3, 5),),), "GatherBackward0"),
    OpInfo("gather_partial_3d", lambda m, x: m.gather(x, 2, m.tensor([[[1]], [[0]]],
                                                                   device=x.device)),
           lambda x: x[[[[0]], [[1]]], [[[0]], [[0]]], [[[1]], [[0]]]], (((3, 4, 2),),),
           "GatherBackward0"),
    OpInfo("index_select", lambda m, x: x.index_select(0, m.tensor([0, 2, 2], device=x.device)),
           lambda x: x[[0, 2, 2]], IDX, "IndexSelectBackward0"),
    # ---- joining and splitting ------------------------------------------------------------------
    OpInfo("cat", lambda m, x, y: m.cat([x, y], 0), lambda x, y: np.concatenate([x, y], 0),
           (((3, 5), (2, 5)), ((1,), (3,)), ((0, 2), (3, 2))), "CatBackward0"),
    OpInfo("cat_last", lambda m, x, y: m.cat((x, y), -1), lambda x, y: np.concatenate([x, y], -1),
           (((3, 5), (3, 2)), ((2, 3, 1), (2, 3, 4))), "CatBackward0"),
    OpInfo("stack", lambda m, x, y: m.stack([x, y], 1), lambda x, y: np.stack([x, y], 1),
           (((3, 5), (3, 5)), ((0,), (0,))), "StackBackward0"),
    OpInfo("stack_0d", lambda m, x, y: m.stack([x, y]), lambda x, y: np.stack([x, y]),
           (((), ()),), "StackBackward0"),
    OpInfo("split", lambda m, x: x.split(2), lambda x: tuple(np.split(x, [2, 4])),
           (((5, 3),),), "SplitBackward0"),
    OpInfo("split_sizes", lambda m, x: m.split(x, [1, 4], 1),
           lambda x: tuple(np.split(x, [1], 1)), (((3, 5),),), "SplitWithSizesBackward0"),
    OpInfo("chunk", lambda m, x: x.chunk(2, 1), lambda x: tuple(np.split(x, [3], 1)),
           (((3, 5),),), "SplitBackward0"),
    OpInfo("unbind", lambda m, x: x.unbind(1), lambda x: tuple(np.moveaxis(x, 1, 0)), MAT,
           "UnbindBackward0"),
    # ---- softmax --------------------------------------------------------------------------------
    OpInfo("softmax", lambda m, x: x.softmax(-1),
           lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True) if x.ndim else np.ones(()),
           SOFTMAX, "SoftmaxBackward0"),
    OpInfo("log_softmax", lambda m, x: m.log_softmax(x, 0),
           lambda x: x - np.log(np.exp(x).sum(0, keepdims=True)) if x.ndim else np.zeros(()),
           SOFTMAX, "LogSoftmaxBackward0"),
]

OPS_BY_NAME = {op.name: op for op in OPS}
assert len(OPS_BY_NAME) == len(OPS), "duplicate op names in the table"


def cases(pred: Callable[[OpInfo], bool] = lambda op: True) -> list[Any]:
    """``pytest.param(op, shapes)`` for every sample of every op satisfying ``pred``."""
    import pytest

    return [pytest.param(op, shapes, id=f"{op.name}-{_shape_id(shapes)}")
            for op in OPS if pred(op) for shapes in op.samples]


def _shape_id(shapes: tuple[Shape, ...]) -> str:
    return ",".join("(" + "x".join(map(str, s)) + ")" for s in shapes)
