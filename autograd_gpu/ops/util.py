"""Helpers shared by op backwards."""

from __future__ import annotations

from typing import Any


def reduce_grad(grad: Any, shape: tuple[int, ...] | None) -> Any:
    """``grad`` summed over the dimensions that broadcasting added or stretched, so that it has
    ``shape`` again (``None``: the input was a Python scalar and gets no gradient)."""
    if shape is None or grad.shape == shape:
        return grad
    if hasattr(grad, "sum_to_size"):
        return grad.sum_to_size(shape)
    # NOTE: a bare array (the raw backward path): the same reduction.
    lead = grad.ndim - len(shape)
    leading = tuple(range(lead))
    stretched = tuple(lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1)
    if not stretched and shape:
        # NOTE: only leading dims (a bias's gradient; shapes differ, so there is one): reduced
        # straight to ``shape``, an array that owns its buffer, which ``.grad`` takes uncopied.
        return grad.sum(axis=leading)
    return grad.sum(axis=leading + stretched, keepdims=True).reshape(shape)


def normalize_dim(dim: int, ndim: int) -> int:
    """A dimension index in ``[0, ndim)``, with PyTorch's error for one out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def normalize_dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """A sorted tuple of dimensions; ``None`` or ``()`` means all of them."""
    if dim is None or dim == () or dim == []:
        return tuple(range(ndim))
    if ndim == 0:  # NOTE: a 0-d tensor accepts dim 0 / -1 and has nothing to reduce
        for d in (dim,) if isinstance(dim, int) else dim:
            normalize_dim(d, 0)
        return ()
    if isinstance(dim, int):
        return (normalize_dim(dim, ndim),)
    dims = tuple(sorted(normalize_dim(d, ndim) for d in dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return dims


def c_order(b: Any, out: Any) -> Any:
    """``out`` C-contiguous, a copy only when it is not: the layout PyTorch gives the results of
    reductions and softmax whatever the input's (NumPy's follow a permuted input's order).

    NOTE: ``ascontiguousarray`` would make a 0-d array 1-d, hence the ``ndim`` test."""
    return out if out.ndim < 2 or out.flags.c_contiguous else b.ascontiguousarray(out)
