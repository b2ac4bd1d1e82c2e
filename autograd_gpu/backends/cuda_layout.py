"""The elementwise launchers' layouts (``cuda_elementwise``): broadcasting, the order of a new
result (PyTorch's TensorIterator's), the collapsed shape/stride arguments of the ``*_strided``
kernels, aliasing between ``out=`` and the operands, and ``_into``, which works a launch out
from all of that on every call (the reference the kept plans of ``cuda_elementwise`` are
tested against, and what serves the layouts plans do not cover).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .composite import broadcast_strides, inverse_perm, iter_order
from .cuda_kernels import _MAX_DIMS, _cupy, _launch


def _broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max(len(s) for s in shapes)
    out = [1] * ndim
    for s in shapes:
        for k, size in enumerate(s, ndim - len(s)):
            if size != 1:
                if out[k] not in (1, size):
                    raise ValueError(f"shapes {shapes} cannot be broadcast together")
                out[k] = size
    return tuple(out)


def _element_strides(a: Any, shape: tuple[int, ...]) -> list[int]:
    """``a``'s strides in elements within the broadcast frame ``shape`` (0 where broadcast)."""
    strides = [0] * len(shape)
    first, itemsize = len(shape) - a.ndim, a.itemsize
    for k, (size, stride) in enumerate(zip(a.shape, a.strides)):
        if size != 1:
            strides[first + k] = stride // itemsize
    return strides


def merge_dims(shape: tuple[int, ...], per: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """``shape`` with size-1 dims dropped and neighbours merged where every operand's strides
    (``per``: one list per operand) allow: (sizes, per-operand strides), enumerating the same
    elements in C order."""
    sizes: list[int] = []
    cols: list[list[int]] = [[] for _ in per]
    for k, size in enumerate(shape):
        if size == 1:
            continue
        if sizes and all(c[-1] == s[k] * size for c, s in zip(cols, per)):
            sizes[-1] *= size
            for c, s in zip(cols, per):
                c[-1] = s[k]
        else:
            sizes.append(size)
            for c, s in zip(cols, per):
                c.append(s[k])
    return sizes, cols


def _layout(shape: tuple[int, ...], operands: list[Any]) -> tuple[Any, ...] | None:
    """Kernel args ``nd, d0..d5, <6 strides per operand>`` for a C-contiguous output of
    ``shape``, dims of size 1 dropped and neighbours merged where every operand allows; None if
    more than 6 dims remain. A None operand (a scalar) gets stride 0."""
    per_operand = [[0] * len(shape) if a is None else _element_strides(a, shape) for a in operands]
    dims, cols = merge_dims(shape, per_operand)
    if len(dims) > _MAX_DIMS:
        return None
    if not dims:
        dims, cols = [1], [[0] for _ in operands]
    pad = _MAX_DIMS - len(dims)
    args: list[Any] = [np.int32(len(dims))]
    args += [np.int64(d) for d in [1] * pad + dims]
    for c in cols:
        args += [np.int64(s) for s in [0] * pad + c]
    return tuple(args)


def _span(a: Any) -> tuple[int, int]:
    """The bytes ``a`` reaches, as offsets [lo, hi) from ``a.data.ptr``."""
    lo = hi = 0
    for size, stride in zip(a.shape, a.strides):
        if size > 1:
            if stride < 0:
                lo += (size - 1) * stride
            else:
                hi += (size - 1) * stride
    return lo, hi + a.itemsize


def _extent(a: Any) -> tuple[int, int]:
    lo, hi = _span(a)
    ptr = a.data.ptr
    return ptr + lo, ptr + hi


def _unsafe_alias(out: Any, a: Any, shape: tuple[int, ...]) -> bool:
    """True when writing ``out`` element by element could change what is later read from ``a``:
    they overlap and ``a`` is not read at exactly the element being written."""
    lo, hi = _extent(out)
    a_lo, a_hi = _extent(a)
    if hi <= a_lo or a_hi <= lo:
        return False
    return not (a.data.ptr == out.data.ptr
                and _element_strides(a, shape) == _element_strides(out, shape))


def _is_flat(operands: list[Any], shape: tuple[int, ...]) -> bool:
    return all(a is None or (a.shape == shape and a.flags.c_contiguous) for a in operands)


def _run(kernel: str, dtype: str, out: Any, operands: list[Any], params: tuple[Any, ...],
         flat: bool | None = None) -> None:
    """Launch ``kernel`` (all operands C-contiguous with the output's shape: ``flat``, found
    here when None) or ``kernel_strided`` writing the C-contiguous ``out``; None operands are
    scalars in params."""
    n = out.size
    if flat is None:
        flat = _is_flat(operands, out.shape)
    if flat:
        _launch(kernel, dtype, n, (*operands, out, np.int64(n), *params))
        return
    layout = _layout(out.shape, operands)
    if layout is None:  # over 6 dims even after merging: materialise the operands (rare)
        cp = _cupy()
        operands = [None if a is None else cp.ascontiguousarray(cp.broadcast_to(a, out.shape))
                    for a in operands]
        _launch(kernel, dtype, n, (*operands, out, np.int64(n), *params))
        return
    _launch(kernel + "_strided", dtype, n, (*operands, out, np.int64(n), *params, *layout))


def _views(operands: list[Any], outer: tuple[int, ...] | None,
           shape: tuple[int, ...]) -> list[Any]:
    """The operands viewed in the order ``outer`` of the result of ``shape`` (None: as they
    are)."""
    if outer is None:
        return operands
    cp = _cupy()
    return [None if a is None else cp.broadcast_to(a, shape).transpose(outer) for a in operands]


def _run_in_order(kernel: str, dtype: str, dest: Any, outer: tuple[int, ...] | None,
                  shape: tuple[int, ...], operands: list[Any], params: tuple[Any, ...]) -> None:
    """``_run`` into the C-contiguous ``dest``, which holds the result of ``shape`` with its
    dimensions permuted to ``outer`` (None: not permuted): the operands are viewed the same way,
    so the kernel writes its output in order whatever layout the result has."""
    _run(kernel, dtype, dest, _views(operands, outer, shape), params)


def _iter_outer(shape: tuple[int, ...], operands: list[Any]) -> tuple[int, ...] | None:
    """The dimensions of a new result, outermost first, as PyTorch's TensorIterator lays it out
    over ``operands`` (``composite.iter_order``); None for C order."""
    if all(a is None or a.flags.c_contiguous for a in operands):
        return None
    order = iter_order(shape, [broadcast_strides(a, shape) for a in operands if a is not None])
    outer = tuple(order[::-1])
    return None if outer == tuple(range(len(shape))) else outer


def _dense_outer(out: Any) -> tuple[int, ...] | None:
    """The permutation that makes the dense, non-overlapping ``out`` C-contiguous (its
    dimensions by decreasing stride), or None when there is none (``out`` overlaps or has
    gaps)."""
    outer = tuple(sorted(range(out.ndim), key=lambda d: -out.strides[d]))
    return outer if out.transpose(outer).flags.c_contiguous else None


def _check_out(shape: tuple[int, ...], out_dtype: Any, out: Any) -> tuple[int, ...]:
    """The shape of the result written into ``out`` (NumPy's out= rules), or ValueError."""
    full = _broadcast_shape(shape, tuple(out.shape))
    if full != tuple(out.shape):
        raise ValueError(f"non-broadcastable output operand with shape {tuple(out.shape)} "
                         f"doesn't match the broadcast shape {full}")
    if out.dtype != out_dtype:
        raise ValueError(f"out has dtype {out.dtype}; this op makes {np.dtype(out_dtype)}")
    return full


def _into(kernel: str, dtype: str, shape: tuple[int, ...], out_dtype: Any, operands: list[Any],
          params: tuple[Any, ...], out: Any = None) -> Any:
    """Run an elementwise kernel into ``out`` (or a new array) of ``shape`` and ``out_dtype``.

    As with NumPy's ``out=``, the operands broadcast to ``out``'s shape, never ``out`` to theirs.
    A new array is laid out as PyTorch's TensorIterator lays it out (C order for C-contiguous
    operands; else the first operand that tells two dimensions apart orders them), so
    ``(x.t() * 2).t()`` is C-contiguous as in PyTorch.
    """
    cp = _cupy()
    if out is not None:
        shape = _check_out(shape, out_dtype, out)
    if math.prod(shape) == 0:
        return out if out is not None else cp.empty(shape, out_dtype)
    if out is None:
        if _is_flat(operands, shape):
            dest = cp.empty(shape, out_dtype)  # NOTE: the common case: one flat launch
            _run(kernel, dtype, dest, operands, params, flat=True)
            return dest
        outer = _iter_outer(shape, operands)
        if outer is None:
            dest = cp.empty(shape, out_dtype)
            _run(kernel, dtype, dest, operands, params)
            return dest
        dest = cp.empty(tuple(shape[d] for d in outer), out_dtype)
        _run_in_order(kernel, dtype, dest, outer, shape, operands, params)
        return dest.transpose(inverse_perm(outer))
    # NOTE: an out overlapping an input other than element for element (x += x.T), or one with
    # gaps or overlaps, is computed into a fresh array and copied, as NumPy buffers such cases.
    if not any(a is not None and _unsafe_alias(out, a, shape) for a in operands):
        if out.flags.c_contiguous:
            _run(kernel, dtype, out, operands, params)
            return out
        outer = _dense_outer(out)
        if outer is not None:  # a permuted dense out: written in its own order, in place
            _run_in_order(kernel, dtype, out.transpose(outer), outer, shape, operands, params)
            return out
    dest = cp.empty(shape, out_dtype)
    _run(kernel, dtype, dest, operands, params)
    cp.copyto(out, dest)
    return out
