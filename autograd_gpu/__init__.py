"""autograd_gpu: PyTorch-style tensors and autograd on NumPy (CPU) and CuPy (CUDA).

``import autograd_gpu as torch`` runs PyTorch autograd programs unchanged. This module lists the
public surface explicitly; it never imports ``torch`` or ``cupy``.
"""

from __future__ import annotations

from . import autograd, cuda, dtypes, memory, return_types
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .creation import (
    arange, as_tensor, asarray, empty, empty_like, eye, from_dlpack, from_numpy, full, full_like,
    linspace, ones, ones_like, tensor, zeros, zeros_like,
)
from ._tensor_str import get_printoptions, set_printoptions
from .backends.base import OutOfMemoryError
from .device import device
from .dtypes import (
    bool, can_cast, cdouble, cfloat, complex64, complex128, double, dtype, float, float16,
    float32, float64, get_default_dtype, half, int,
    int8, int16, int32, int64, long, promote_types, set_default_dtype, short, uint8,
)
from .memory import (
    max_memory_allocated, memory_allocated, memory_stats, memory_summary, reset_peak_memory_stats,
)
from .functions import (
    abs, add, addmm, all, allclose, amax, amin, any, argmax, argmin, bitwise_and, bitwise_not,
    bitwise_or, bitwise_xor, bmm, broadcast_shapes, cat,
    chunk, clamp, clip, clone, concat, concatenate, cos, div, divide, dot, eq, equal, exp, expm1,
    flatten, floor, floor_divide, gather, ge, gt, index_select, isclose, isfinite, isinf, isnan, le, log,
    log1p, log_softmax, movedim, moveaxis, narrow, select, logical_and, logical_not, logical_or, logical_xor, logsumexp, lt,
    masked_fill, matmul, max, maximum, mean, min, minimum, mm, mul, multiply, mv, ne, neg,
    negative, nonzero, norm, permute, pow, prod, reciprocal, relu, remainder, reshape, rsqrt, rsub, sigmoid,
    sign, sin, softmax, split, sqrt, square, squeeze, stack, std, sub, subtract, sum, swapaxes,
    t, tanh, transpose, true_divide, unbind, unflatten, unsqueeze, var, where,
)
from .random import (
    Generator, get_rng_state, initial_seed, manual_seed, rand, rand_like, randint, randn,
    randn_like, randperm, seed, set_rng_state,
)
from .tensor import Size, Tensor
from .functions.scan import *  # noqa: E402,F401,F403
from .functions.sort import *  # noqa: E402,F401,F403
from .functions.pointwise import *  # noqa: E402,F401,F403
from .functions.manip import *  # noqa: E402,F401,F403
from .functions.scatter import *  # noqa: E402,F401,F403
from .functions.sampling import *  # noqa: E402,F401,F403
from .functions.stats import *  # noqa: E402,F401,F403
from .functions.products import *  # noqa: E402,F401,F403
from .functions.decomp import *  # noqa: E402,F401,F403
from .functions.aliases import *  # noqa: E402,F401,F403
from .functions.factories import *  # noqa: E402,F401,F403
from .functions.settings import *  # noqa: E402,F401,F403
from .functions.tensor_info import *  # noqa: E402,F401,F403
from .functions.bits import *  # noqa: E402,F401,F403
from .functions.calculus import *  # noqa: E402,F401,F403
from .functions.complex import *  # noqa: E402,F401,F403
from .functions.interop import *  # noqa: E402,F401,F403
from .functions.stft import *  # noqa: E402,F401,F403
from .functions.lowrank import *  # noqa: E402,F401,F403
from .functions.householder import *  # noqa: E402,F401,F403
from .functions.nn_aliases import *  # noqa: E402,F401,F403
from .functions.out_variants import *  # noqa: E402,F401,F403  (torch.* names taking out=)
from . import nn  # noqa: E402
from .utils.serialization import load, save
from . import serialization  # noqa: E402  (torch.serialization: save/load, add_safe_globals)
from . import optim
from . import fft, linalg, special  # noqa: E402
from . import func  # noqa: E402
from . import hub, jit, onnx  # noqa: E402  (stand-ins for torch.hub/jit/onnx: #17 runner)
from .func import vmap  # noqa: E402
from ._compile import compile  # noqa: E402,A004  (torch.compile: issue #20)
from . import _dynamo, compiler  # noqa: E402
from . import accelerator, backends, utils  # noqa: E402  (issue #17: the long tail)
from . import amp, cpu  # noqa: E402  (torch.amp.GradScaler, torch.cpu.amp: issue #21)
from .legacy import (  # noqa: E402
    BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor,
    LongTensor, ShortTensor,
)

__version__ = "0.1.0"


def is_tensor(obj: object) -> builtins_bool:
    """True when ``obj`` is a Tensor."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> builtins_int:  # noqa: A002
    return input.numel()


def is_floating_point(input: Tensor) -> builtins_bool:  # noqa: A002
    return input.is_floating_point()


def result_type(tensor: object, other: object) -> dtype:  # noqa: F811  (torch's names)
    """PyTorch's result dtype for an operation on ``tensor`` and ``other`` (tensors or Python
    scalars): dimensioned tensors outrank 0-d tensors, which outrank Python scalars, unless the
    lower group has a higher category (bool < integer < floating < complex).

    Example:
        >>> result_type(tensor([1, 2], dtype=int32), 2.5)
        torch.float32
    """
    groups: tuple[list[dtype], list[dtype], list[dtype]] = ([], [], [])
    for x in (tensor, other):
        if isinstance(x, Tensor):
            groups[0 if x.ndim else 1].append(x.dtype)
        elif isinstance(x, (_builtins.bool, _builtins.int, _builtins.float, _builtins.complex)):
            groups[2].append(dtypes.scalar_type(x))
        else:
            raise TypeError("result_type() received an invalid combination of arguments - got "
                            f"({type(tensor).__name__}, {type(other).__name__}), but expected "
                            "one of:")
    return dtypes.result_type(*groups)


import builtins as _builtins  # noqa: E402

builtins_bool = _builtins.bool
builtins_int = _builtins.int
