"""``repr(tensor)`` in PyTorch's format: ``tensor([1., 2.], requires_grad=True)``."""

from __future__ import annotations

from typing import Any


def _fmt_array(t: Any) -> str:
    import numpy as np  # NOTE: printing happens on host data; NumPy formats it

    arr = np.asarray(t.backend.to_host(t._data))
    if arr.dtype.kind == "f":
        finite = arr[np.isfinite(arr)]
        ints = finite.size == 0 or bool(np.all(finite == np.round(finite)))
        amax = float(np.abs(finite).max()) if finite.size else 0.0
        nz = np.abs(finite[finite != 0])
        amin = float(nz.min()) if nz.size else 0.0
        sci = finite.size > 0 and (amax >= 1e8 or (amin > 0 and (amin < 1e-4 or amax / amin > 1000)))
        if ints and not sci:
            def fmt(v: float) -> str:
                return f"{v:.0f}." if np.isfinite(v) else str(v)
        elif sci:
            def fmt(v: float) -> str:
                return f"{v:.4e}" if np.isfinite(v) else str(v)
        else:
            def fmt(v: float) -> str:
                return f"{v:.4f}" if np.isfinite(v) else str(v)
        strs = [("-" if v < 0 else "") + fmt(abs(float(v))) if np.isfinite(v) else
                ("-inf" if v < 0 and np.isinf(v) else "inf" if np.isinf(v) else "nan") for v in arr.reshape(-1)]
    elif arr.dtype.kind == "b":
        strs = ["True" if v else "False" for v in arr.reshape(-1)]
    else:
        strs = [str(int(v)) for v in arr.reshape(-1)]
    if arr.ndim == 0:
        return strs[0]
    width = max((len(s) for s in strs), default=0)
    strs = [s.rjust(width) for s in strs]
    return _nest(strs, arr.shape, 0, 7)


def _nest(strs: list[str], shape: tuple[int, ...], start: int, indent: int) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(strs[start:start + shape[0]]) + "]"
    step = 1
    for s in shape[1:]:
        step *= s
    inner = [_nest(strs, shape[1:], start + i * step, indent + 1) for i in range(shape[0])]
    sep = "," + "\n" * (len(shape) - 1) + " " * (indent + 1)
    return "[" + sep.join(inner) + "]"


def tensor_repr(t: Any) -> str:
    body = _fmt_array(t) if t.numel() or t.ndim == 0 else "[]"
    suffix = []
    if t._device.type != "cpu":
        suffix.append(f"device='{t._device}'")
    default = {"float32", "int64", "bool"}
    if t.dtype.name not in default or (t.numel() == 0 and t.dtype.name != "float32"):
        suffix.append(f"dtype={t.dtype!r}")
    if t.numel() == 0 and t.ndim != 1:
        suffix.insert(0, f"size={tuple(t.shape)}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name().split('::')[-1]}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + ", ".join([body] + suffix) + ")"
