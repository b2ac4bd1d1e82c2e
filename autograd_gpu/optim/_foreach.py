"""The optimizers' multi-tensor fast path (PyTorch's ``foreach``): SGD, Adam/AdamW, RMSprop and
Adagrad updates straight on the backend arrays.

Each optimizer's single-tensor path (Tensor ops, in ``sgd.py``, ``adam.py``, ...) rounds after
every operation the way PyTorch's single-tensor CPU kernels do. The functions here run the same
ufunc sequence, operation for operation and with the same scalars (a Python float meeting a
float32 array is rounded to float32 in both), on ``p._data``, ``grad._data`` and the state
tensors' ``_data``: in place, or with ``out=`` into scratch buffers the optimizer keeps. So a step
makes no Tensor, node or temporary array, and its results are the slow path's bit for bit. The
version counters move as the slow path's in-place ops move them (one bump per in-place op on
param, state buffer and ``step``; the slow path's temporaries are not visible).

Which path a parameter takes: ``path`` (per group) and ``route`` (per parameter). The slow path
serves ``foreach=False``, ``capturable``, ``differentiable``, a tensor ``lr``, hyper-parameters
that are not Python numbers (a NumPy float64 would promote a float32 array: other numbers) and
every parameter whose param, grad or state is not a plain float32/float64 array of one array type,
shape and dtype: float16/bfloat16 (their ops compute in float32 and round differently), complex,
the meta device, vmap's BatchedTensors, inference tensors, a grad or state on another device,
non-dense (strided or overlapping) params and state, a ``step`` that is not a CPU float scalar.
On CUDA the default (``foreach`` and ``fused`` unset) and ``fused=True`` update a group with one
fused kernel launch (``_fused.py``; ``fused=True`` also takes float16, computed in float32);
``foreach=True``, or a parameter the kernel cannot take, runs these sequences with CuPy's ufuncs.
Adam's sequence also runs once over a whole CPU group whose state is laid out flat (``_flat``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.node import user_frame
from ..backends import cuda_support
from ..ops.elementwise import preserve_format_copy
from ..tensor import Tensor

SLOW, ARRAYS, FUSED = 0, 1, 2
# NOTE: while ``compile`` records a step, HOST[0] records ``host`` calls as one call each, which a
# replay makes again (``_compile/_trace.py``): Python arithmetic on values read from arrays (a
# step count) and Python side effects (version bumps) happen on every replay as in eager.
HOST: list[Any] = [None]


def host(fn: Any, *args: Any) -> Any:
    """``fn(*args)``: work on the host that a recorded step repeats as it is (``HOST``)."""
    hook = HOST[0]
    return fn(*args) if hook is None else hook(fn, args)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_HALF = np.dtype(np.float16)
_UNSET: Any = object()


def path(group: dict[str, Any], *scalars: Any) -> int:
    """The group's path: ``SLOW`` (Tensor ops), ``ARRAYS`` (this module) or ``FUSED`` (one
    kernel launch per group on CUDA, this module elsewhere), from ``foreach``/``fused`` as
    PyTorch reads them; ``scalars``: the hyper-parameters the update multiplies arrays by."""
    fused, foreach = group.get("fused"), group.get("foreach")
    if foreach is False and not fused or group.get("capturable") or group.get("differentiable"):
        return SLOW
    for x in (group["lr"], *scalars):
        if type(x) is not float and type(x) is not int:
            return SLOW  # NOTE: a tensor lr, a NumPy scalar, a bool: the Tensor ops' rules
    return FUSED if fused or (fused is None and foreach is None) else ARRAYS


def route(path: int, p: Tensor, g: Tensor, states: tuple[Tensor, ...], step: Any = None,
          half: bool = False) -> tuple[int, Any]:
    """How parameter ``p`` is updated in a group on ``path``: ``(SLOW, None)``, ``(ARRAYS, xp)``
    or ``(FUSED, None)`` (the kernel serves it), given its grad ``g``, its state tensors and its
    ``step`` tensor (None: the optimizer keeps none). ``half``: the group asked for ``fused=True``,
    which takes CUDA float16 parameters too (computed in float32, as PyTorch's fused kernels;
    otherwise they keep the single-tensor path's float16 rounding)."""
    if not path or step is not None and not step_ok(step):
        return SLOW, None
    xp = arrays(p, g, *states, half=half)
    if xp is None:
        return SLOW, None
    if path is FUSED and xp is not np and cuda_support.CAPTURE[0] is None:
        # NOTE: not while a CUDA graph is captured: the kernel's pointer table is copied from
        # the host, which a capture refuses; the ufunc sequences give the same numbers, and a
        # graph launches them all at once anyway
        from ..backends import cuda_optim  # NOTE: late: CUDA only

        if cuda_optim.usable(p._data, g._data, *(s._data for s in states)):
            return FUSED, None
    if p._data.dtype not in _FLOATS:
        return SLOW, None  # float16 that the kernel cannot take
    return ARRAYS, xp


def arrays(p: Tensor, g: Tensor, *states: Tensor, half: bool = False) -> Any:
    """The array module (NumPy, or CuPy for a CUDA parameter) when param ``p``, its grad ``g``
    and its state tensors can take the fast path, else None (``half``: CUDA float16 too)."""
    d = p._data
    kind = type(d)
    dev = p._device
    if kind is np.ndarray or dev.type == "cpu" and isinstance(d, np.ndarray):
        xp: Any = np  # NOTE: the subclass: compile's recording arrays
    elif dev.type == "cuda":
        xp = dev.backend.xp
        if kind is not xp.ndarray:
            return None
    else:
        return None  # the meta device, ...
    if d.dtype not in _FLOATS and not (half and d.dtype == _HALF and xp is not np) \
            or p._level or p._is_inference or not _dense(d):
        return None
    gd = g._data
    if type(gd) is not kind or gd.dtype != d.dtype or gd.shape != d.shape or g._level \
            or g._device is not dev:
        return None
    for s in states:
        sd = s._data
        if type(sd) is not kind or sd.dtype != d.dtype or sd.shape != d.shape or s._level \
                or s._is_inference or s._device is not dev or not _dense(sd):
            return None
    return xp


def _dense(a: Any) -> bool:
    flags = a.flags
    return bool(flags.c_contiguous or flags.f_contiguous)


def step_ok(step: Any) -> bool:
    """Whether the ``step`` state is a CPU float scalar tensor the fast path may tick."""
    return isinstance(step, Tensor) and step._device.type == "cpu" \
        and isinstance(step._data, np.ndarray) and step._data.size == 1 \
        and step._data.dtype in _FLOATS and not step._is_inference and not step._level


def scratch(opt: Any, p: Tensor, count: int) -> list[Any]:
    """``count`` scratch arrays shaped, typed and laid out as ``p``'s data, kept by ``opt`` (not in
    its ``state``: ``state_dict`` is unchanged) and shared by all its parameters of that layout.

    NOTE: the buffers live as long as the optimizer (PyTorch allocates the temporaries of every
    step anew); CPU ones are counted by ``memory_allocated`` like any tensor's storage.
    """
    pool = opt.__dict__.get("_foreach_scratch")
    if pool is None:
        pool = opt.__dict__["_foreach_scratch"] = {}
    d = p._data
    key = (d.shape, d.strides, d.dtype, p._device)
    bufs = pool.get(key)
    if bufs is None:
        bufs = pool[key] = []
    while len(bufs) < count:
        bufs.append(Tensor._make(p.backend.xp.empty_like(d), p._device)._data)
    return bufs


class Bumps:
    """Version-counter bumps of one ``step()``: the user's ``file:line`` is found once."""

    __slots__ = ("where",)

    def __init__(self) -> None:
        self.where = _UNSET

    def __call__(self, t: Tensor, times: int = 1) -> None:
        if self.where is _UNSET:
            self.where = user_frame()
        c = t._counter()
        c.value += times
        c.where = self.where

    def all(self, rows: Any) -> None:
        """``self(t, times)`` for each ``(t, times)`` of ``rows`` (a group's bumps at once)."""
        if self.where is _UNSET:
            self.where = user_frame()
        where = self.where
        for t, times in rows:
            c = t._counter()
            c.value += times
            c.where = where


def tick(step: Tensor, bumps: Bumps) -> float:
    """``step.add_(1)`` and its new value, as the slow path's ``add_`` and ``item()``.

    NOTE: the sum in Python floats, stored as the step's float32 or float64 (``step_ok``): the
    same bits as NumPy's add (a float32 sum is exact in a float64 while it matters, so it is
    rounded once), for a fraction of a ufunc call (this runs per parameter per step)."""
    a = step._data
    a[()] = a.item() + 1
    bumps(step)
    return a.item()


def effective_grad(xp: Any, p: Any, g: Any, buf: Any, tmp: Any, maximize: bool, wd: Any) -> Any:
    """The grad the update uses: ``-g`` when maximizing, then ``+ p * wd`` (coupled weight decay;
    ``wd`` None: none), as the slow path's ``-grad`` and ``grad.add(p, alpha=wd)``; written into
    ``buf`` (``tmp``: a second scratch array) unless ``g`` is used as it is."""
    if maximize:
        xp.negative(g, out=buf)
        g = buf
    if wd is not None:
        if wd != 1:
            xp.multiply(p, wd, out=tmp)
            p = tmp
        xp.add(g, p, out=buf)
        g = buf
    return g


def _add_scaled(xp: Any, t: Any, x: Any, alpha: Any, tmp: Any) -> None:
    """``t.add_(x, alpha=alpha)``: ``x * alpha`` first (skipped when ``alpha == 1``)."""
    if alpha != 1:
        xp.multiply(x, alpha, out=tmp)
        x = tmp
    xp.add(t, x, out=t)


def lerp(xp: Any, t: Any, end: Any, weight: Any, tmp: Any) -> None:
    """``_ops.lerp_(t, end, weight)``: ``weight`` is ``(True, w)`` for ``t + (end - t) * w`` or
    ``(False, 1 - w)`` for ``end - (end - t) * (1 - w)`` (see ``lerp_weight``)."""
    xp.subtract(end, t, out=tmp)
    low, w = weight
    xp.multiply(tmp, w, out=tmp)
    if low:
        xp.add(t, tmp, out=t)
    else:
        xp.subtract(end, tmp, out=t)


def lerp_weight(weight: float, T: Any) -> tuple[bool, Any]:
    """``lerp``'s scalar for a ``T`` array: PyTorch evaluates weights of 0.5 or more from the
    ``end`` side with ``1 - weight``, taken after rounding ``weight`` to ``T``."""
    if abs(weight) < 0.5:
        return True, T(weight)
    return False, T(1 - float(T(weight)))


# ---- the scalars: each update's, as its single-tensor path rounds them for ``T`` arrays ------


def sgd_scalars(T: Any, lr: Any, momentum: Any, dampening: Any,
                nesterov: bool) -> tuple[Any, ...]:
    """``sgd``'s ``k``."""
    return T(momentum), T(1 - dampening), nesterov, T(-lr)


def adam_scalars(T: Any, step: float, lr: Any, beta1: Any, beta2: Any, eps: Any,
                 decoupled_wd: Any) -> tuple[Any, ...]:
    """``adam``'s ``k`` at ``step``, from the same Python-float arithmetic as Adam's
    single-tensor path (``decoupled_wd``: the weight decay when decoupled, else 0)."""
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    step_size = lr / (1 - beta1**step)
    return (T(1 - lr * decoupled_wd) if decoupled_wd != 0 else None,
            lerp_weight(1 - beta1, T), T(beta2), T(1 - beta2), T(bias_correction2_sqrt), T(eps),
            T(-step_size))


def rmsprop_scalars(T: Any, lr: Any, alpha: Any, eps: Any, momentum: Any) -> tuple[Any, ...]:
    """``rmsprop``'s ``k``."""
    return (T(alpha), T(1 - alpha), lerp_weight(1 - alpha, T), T(eps), T(momentum), T(-lr),
            T(-1))


# ---- the updates: each is its optimizer's single-tensor step, ufunc for ufunc ----------------


def sgd(xp: Any, p: Any, g: Any, buf: Any, s: list[Any], k: tuple[Any, ...],
        first: bool = False) -> None:
    """One SGD update (``g``: the effective grad; ``buf``: the momentum buffer, None without
    momentum, on the ``first`` step the clone of ``g``). ``k``: ``(momentum, 1 - dampening,
    nesterov, -lr)`` as ``T``."""
    momentum, undamped, nesterov, neg_lr = k
    if buf is not None:
        if not first:
            xp.multiply(buf, momentum, out=buf)
            _add_scaled(xp, buf, g, undamped, s[1])
        if nesterov:
            if momentum != 1:
                xp.multiply(buf, momentum, out=s[1])
            xp.add(g, s[1] if momentum != 1 else buf, out=s[0])
            g = s[0]
        else:
            g = buf
    _add_scaled(xp, p, g, neg_lr, s[1])


def sgd_first(p: Tensor, g: Any) -> Tensor:
    """The momentum buffer of the first step: a clone of the effective grad ``g``."""
    return Tensor._make(preserve_format_copy(p.backend, g), p._device)


def adam(xp: Any, p: Any, g: Any, m: Any, v: Any, vmax: Any, s: list[Any],
         k: tuple[Any, ...]) -> None:
    """One Adam update (``g``: the effective grad, ``vmax``: None without amsgrad). ``k``:
    ``(decay, lerp weight, beta2, 1 - beta2, sqrt(bias_correction2), eps, -step_size)`` as ``T``
    (``decay``: ``1 - lr * weight_decay``, or None)."""
    if k[0] is not None:
        xp.multiply(p, k[0], out=p)
    adam_moments(xp, g, m, v, vmax, s, k)
    xp.add(p, s[1], out=p)


def adam_moments(xp: Any, g: Any, m: Any, v: Any, vmax: Any, s: list[Any],
                 k: tuple[Any, ...]) -> None:
    """``adam`` but its first (the decoupled decay) and last (``p += s[1]``) operations, which
    read or write ``p``: the moments, and the update into ``s[1]`` (``_flat`` runs it once for a
    whole group)."""
    _, weight, beta2, one_minus_beta2, bc2_sqrt, eps, neg_step = k
    lerp(xp, m, g, weight, s[1])
    xp.multiply(v, beta2, out=v)
    xp.multiply(g, one_minus_beta2, out=s[2])
    xp.multiply(s[2], g, out=s[2])
    xp.add(v, s[2], out=v)
    if vmax is not None:
        xp.maximum(vmax, v, out=vmax)
        v = vmax
    denom = s[2]
    xp.sqrt(v, out=denom)
    xp.true_divide(denom, bc2_sqrt, out=denom)
    xp.add(denom, eps, out=denom)
    xp.multiply(m, neg_step, out=s[1])
    xp.true_divide(s[1], denom, out=s[1])


def rmsprop(xp: Any, p: Any, g: Any, sq: Any, grad_avg: Any, buf: Any, s: list[Any],
            k: tuple[Any, ...]) -> None:
    """One RMSprop update (``g``: the effective grad; ``grad_avg``/``buf``: None unless centered /
    with momentum). ``k``: ``(alpha, 1 - alpha, lerp weight, eps, momentum, -lr, -1)`` as ``T``."""
    alpha, one_minus_alpha, weight, eps, momentum, neg_lr, minus_one = k
    xp.multiply(sq, alpha, out=sq)
    if one_minus_alpha != 1:
        xp.multiply(g, one_minus_alpha, out=s[1])
        xp.multiply(s[1], g, out=s[1])
    else:
        xp.multiply(g, g, out=s[1])
    xp.add(sq, s[1], out=sq)
    avg = s[2]
    if grad_avg is not None:
        lerp(xp, grad_avg, g, weight, s[1])
        xp.multiply(grad_avg, minus_one, out=avg)  # NOTE: not negative: a NaN keeps its sign
        xp.multiply(avg, grad_avg, out=avg)
        xp.add(sq, avg, out=avg)
        xp.sqrt(avg, out=avg)
    else:
        xp.sqrt(sq, out=avg)
    xp.add(avg, eps, out=avg)
    if buf is not None:
        xp.multiply(buf, momentum, out=buf)
        xp.true_divide(g, avg, out=s[1])  # NOTE: addcdiv's value 1: g * 1 is g
        xp.add(buf, s[1], out=buf)
        _add_scaled(xp, p, buf, neg_lr, s[1])
    else:
        _addcdiv(xp, p, g, avg, neg_lr, s[1])


def adagrad(xp: Any, p: Any, g: Any, total: Any, s: list[Any], k: tuple[Any, ...]) -> None:
    """One Adagrad update (``g``: the effective grad). ``k``: ``(eps, -clr)`` as ``T``."""
    eps, neg_clr = k
    xp.multiply(g, g, out=s[1])  # NOTE: addcmul's value 1: g * 1 is g
    xp.add(total, s[1], out=total)
    std = s[2]
    xp.sqrt(total, out=std)
    xp.add(std, eps, out=std)
    _addcdiv(xp, p, g, std, neg_clr, s[1])


def _addcdiv(xp: Any, t: Any, x: Any, y: Any, value: Any, tmp: Any) -> None:
    """``_ops.addcdiv_(t, x, y, value)``: ``t + (x * value) / y``."""
    xp.multiply(x, value, out=tmp)
    xp.true_divide(tmp, y, out=tmp)
    xp.add(t, tmp, out=t)
