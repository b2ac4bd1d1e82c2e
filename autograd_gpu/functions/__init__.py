"""The ``torch.*`` functions on tensors: type promotion, scalar handling and shape checks, then
one op (``ops/``). ``Tensor`` methods delegate here (``from . import functions as F``).

The modules, each building on those before it:

- ``arith``: promotion, Python scalars, binary elementwise math; ``unary`` (math, ``relu``,
  ``clamp``) and ``rounding`` (``//``, ``%``, ``floor``) build on it.
- ``checks``: argument checks many entry points share (tensor arguments, matmul dtypes).
- ``compare``: comparisons, logic, ``where``/``masked_fill``, ``nonzero`` (no gradient but
  ``where``).
- ``reduce``: sums, means, variances, max/min, norms, the softmax family.
- ``shape``: reshape/view, squeeze, expand, permute, cat/stack, split, repeat.
- ``linalg``: ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm`` and ``matmul``'s dispatch.
- ``inplace_ops``: ``inplace`` and its machinery (CopySlices, view rebase), ``add_``, ``fill_``,
  ``copy_``, ...
- ``index``: ``t[key]``, ``t[key] = value``, ``index_select``, ``gather``; ``index_key`` reads
  a key as PyTorch does (its checks, several Ellipses) and spells it as a NumPy key.
- ``convert``: ``to`` and ``Storage``.
"""

from __future__ import annotations

import importlib

from ..ops.util import normalize_dim, normalize_dims
from .arith import (
    add, as_tensor_like, bitwise_and, bitwise_and_, bitwise_or, bitwise_or_, bitwise_xor,
    bitwise_xor_, clone, div, divide, maximum, minimum, mul, multiply, pow, rdiv, rpow, rsub, sub,
    subtract, true_divide,
)
from .compare import (
    allclose, bitwise_not, bitwise_not_, eq, equal, ge, gt, invert, isclose, isfinite, isinf,
    isnan, le, logical_and, logical_not, logical_or, logical_xor, lt, masked_fill, masked_fill_,
    ne, nonzero, where,
)
from .convert import Storage, to
from .out import resize_
from .index import gather, getitem, index_select, setitem
from .inplace_ops import (
    _check_inplace_target, add_, clamp_, copy_, div_, fill_, inplace, mul_, pow_, sub_, zero_,
)
from .view_writes import refresh_view_grad_fn, replay_view
from .linalg import addmm, bmm, dot, matmul, mm, mv
from .rounding import floor, floor_divide, floor_divide_, remainder, remainder_, rounding_inplace
from .unary import (
    abs, clamp, clip, cos, exp, expm1, log, log1p, neg, negative, reciprocal, relu, rsqrt, sigmoid,
    sign, sin, sqrt, square, tanh,
)
from .reduce import (
    all, amax, amin, any, argmax, argmin, log_softmax, logsumexp, max, mean, min, norm, prod,
    softmax, std, sum, sum_to_size, var,
)
from .shape import (
    broadcast_shapes, cat, chunk, concat, concatenate, contiguous, expand, flatten, moveaxis,
    movedim, narrow, permute, repeat, reshape, select, split, squeeze, stack, swapaxes, t,
    transpose, unbind, unflatten, unsqueeze, view,
)

# ---- the op families of PyTorch's wider surface: each lists its torch.* names in __all__ and
# its Tensor methods in TENSOR_METHODS (installed on Tensor here) ----------------------------
_FAMILY_NAMES = ("scan", "sort", "pointwise", "manip", "scatter", "sampling", "stats", "products",
                 "decomp", "aliases", "factories", "settings", "tensor_info", "bits", "calculus",
                 "complex", "interop", "stft", "lowrank",
                 "householder", "nn_aliases")
# NOTE: the modules, taken before the star imports below rebind names such as ``sort``
FAMILIES = tuple(importlib.import_module(f".{n}", __name__) for n in _FAMILY_NAMES)
from .scan import *  # noqa: E402,F401,F403
from .sort import *  # noqa: E402,F401,F403
from .pointwise import *  # noqa: E402,F401,F403
from .manip import *  # noqa: E402,F401,F403
from .scatter import *  # noqa: E402,F401,F403
from .sampling import *  # noqa: E402,F401,F403
from .stats import *  # noqa: E402,F401,F403
from .products import *  # noqa: E402,F401,F403
from .decomp import *  # noqa: E402,F401,F403
from .aliases import *  # noqa: E402,F401,F403
from .factories import *  # noqa: E402,F401,F403
from .settings import *  # noqa: E402,F401,F403
from .tensor_info import *  # noqa: E402,F401,F403
from .bits import *  # noqa: E402,F401,F403
from .calculus import *  # noqa: E402,F401,F403
from .complex import *  # noqa: E402,F401,F403
from .interop import *  # noqa: E402,F401,F403
from .stft import *  # noqa: E402,F401,F403
from .lowrank import *  # noqa: E402,F401,F403
from .householder import *  # noqa: E402,F401,F403
from .nn_aliases import *  # noqa: E402,F401,F403


def _install_methods() -> None:
    from ..tensor import Tensor

    for family in FAMILIES:
        for name, method in family.TENSOR_METHODS.items():
            setattr(Tensor, name, method)


_install_methods()
