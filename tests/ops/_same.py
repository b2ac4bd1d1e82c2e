"""One comparison of an op's result with the oracle's, shared by the op-family tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def to_numpy(x: Any) -> np.ndarray:
    """A tensor of either library as a NumPy array (PyTorch's zero tensors, the gradients of
    ``sgn``, ``angle``, ..., as zeros)."""
    if isinstance(x, torch.Tensor):
        if x._is_zerotensor():
            return np.zeros(x.shape, dtype=str(x.dtype).replace("torch.", ""))
        return x.detach().resolve_conj().resolve_neg().numpy()
    return np.asarray(x.detach().cpu().numpy())


def same(ours: Any, theirs: Any, rtol: float = 1e-6, atol: float = 1e-6, strides: bool = True,
         zeros: bool = False) -> None:
    """Tensors (or named tuples of them) equal in dtype, shape, values (NaN == NaN; ``zeros``:
    the signs of zeros too) and, for dims of size > 1 of non-empty tensors, strides."""
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        # NOTE: torch names a named tuple written into out= ``cummax_out``; ours stays ``cummax``
        assert type(ours).__name__ == type(theirs).__name__.replace("_out", ""), (
            type(ours), type(theirs))
        for a, b in zip(ours, theirs):
            same(a, b, rtol, atol, strides, zeros)
        return
    assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
    if strides and theirs.numel():
        big = [i for i, s in enumerate(theirs.shape) if s > 1]
        assert [ours.stride()[i] for i in big] == [theirs.stride()[i] for i in big], (
            ours.stride(), theirs.stride())
    a, b = to_numpy(ours), to_numpy(theirs)
    if a.dtype.kind in "fc":
        wide = "complex128" if a.dtype.kind == "c" else "float64"
        np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=rtol,
                                   atol=atol, equal_nan=True)
        if zeros:
            np.testing.assert_array_equal(np.signbit(a[a == 0]), np.signbit(b[a == 0]))
    else:
        np.testing.assert_array_equal(a, b)
