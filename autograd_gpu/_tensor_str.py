"""``repr(tensor)`` in PyTorch's exact format: ``tensor([1., 2.], requires_grad=True)``.

The rules follow PyTorch 2.13's printer: one formatter per tensor chooses integer mode (every
finite value is whole: ``1.``), scientific mode (max/min ratio over 1000, max over 1e8 or min
under 1e-4) or fixed mode (``precision`` decimals), and a common width from the nonzero finite
values only. Rows wrap at ``linewidth``; tensors with more than ``threshold`` elements show
``edgeitems`` items at each end of every dimension around ``...``.

Printing runs on host data (``backend.to_host``) with plain Python numbers, so it needs no array
library and gives the same digits PyTorch gets from ``Tensor.item()``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Iterator


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

_PROFILES: dict[str, dict[str, float]] = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision: int | None = None, threshold: float | None = None,
                     edgeitems: int | None = None, linewidth: int | None = None,
                     profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print (``torch.set_printoptions``).

    Args:
        precision: digits after the point in fixed and scientific mode (default 4).
        threshold: element count above which tensors are summarized with ``...`` (default 1000).
        edgeitems: items shown at each end of a summarized dimension (default 3).
        linewidth: characters per line before a row wraps (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` presets; other arguments override it.
        sci_mode: force scientific notation on (True) or off (False); None chooses per tensor.

    Example:
        >>> set_printoptions(precision=2)
        >>> tensor([1.12345])
        tensor([1.12])
        >>> set_printoptions(profile="default")
    """
    if profile is not None:
        for k, v in _PROFILES[profile].items():
            setattr(PRINT_OPTS, k, v)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # NOTE: as in PyTorch, every call resets sci_mode (None unless given).
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Chooses one notation and width for all elements of a tensor, from ``values`` (the
    elements that will be shown, as Python numbers)."""

    def __init__(self, values: list[Any], floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(str(v)))
            return
        # NOTE: only nonzero finite values decide the mode and the width; zeros, inf and nan
        # are then padded to that width (or overflow it), exactly as PyTorch does.
        vals = [v for v in values if v != 0 and math.isfinite(v)]
        if not vals:
            return
        absmin = min(abs(v) for v in vals)
        absmax = max(abs(v) for v in vals)
        self.int_mode = all(v == math.ceil(v) for v in vals)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = absmax / absmin > 1000.0 or absmax > 1.0e8 or absmin < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        if self.sci_mode:
            widths = (len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in vals)
        else:
            widths = (len(f"{v:.{p}f}") for v in vals)
        self.max_width = max(self.max_width, max(widths))

    def format(self, v: Any) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                s = f"{v:{self.max_width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if math.isfinite(v):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return s.rjust(self.max_width)


class _ComplexFormatter:
    """PyTorch's complex print: the real parts with one formatter (padded to its width), then
    the imaginary parts with another, signed and unpadded, then ``j`` (``1.0000+2.j``)."""

    def __init__(self, real: _Formatter, imag: _Formatter) -> None:
        self.real, self.imag = real, imag
        self.max_width = real.max_width + imag.max_width + 1

    def format(self, v: Any) -> str:
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return self.real.format(v.real) + ("" if imag[0] in "+-" else "+") + imag


def _summarized_values(arr: Any, summarize: bool) -> Iterator[Any]:
    """The elements a summarized print shows (PyTorch's ``get_summarized_data``)."""
    if not summarize:
        yield from arr.reshape(-1).tolist()
        return
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edge:
            # NOTE: arr[-0:] is the whole array; PyTorch has the same quirk for edgeitems=0.
            yield from arr[:edge].tolist()
            yield from arr[-edge:].tolist()
        else:
            yield from arr.tolist()
        return
    if not edge:
        return
    n = arr.shape[0]
    rows = [*range(edge), *range(n - edge, n)] if n > 2 * edge else list(range(n))
    for i in rows:
        yield from _summarized_values(arr[i], summarize)


def _vector_str(arr: Any, indent: int, summarize: bool, fmt: Any) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in arr[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(arr: Any, indent: int, summarize: bool, fmt: Any) -> str:
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_array_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                  + [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        slices = [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def array_str(arr: Any, floating: bool, indent: int) -> str:
    """The bracketed body of a tensor's repr for the host array ``arr``."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    fmt: Any
    if arr.dtype.kind == "c":
        fmt = _ComplexFormatter(_Formatter(list(_summarized_values(arr.real, summarize)), True),
                                _Formatter(list(_summarized_values(arr.imag, summarize)), True))
    else:
        fmt = _Formatter(list(_summarized_values(arr, summarize)), floating)
    return _array_str(arr, indent, summarize, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int) -> str:
    parts = [text]
    # NOTE: PyTorch's line-length bookkeeping counts 2 more than the line really has when the
    # text has no newline (rfind gives -1); kept so suffixes wrap at the same places.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t: Any, prefix: str = "tensor(") -> str:
    """PyTorch's ``repr`` of tensor ``t``: body, then device, size, dtype and autograd suffixes."""
    from . import dtypes

    indent = len(prefix)
    suffixes: list[str] = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    dt = t.dtype
    default = dtypes.get_default_dtype()
    if dt.is_complex:
        default = dtypes.get_default_complex_dtype()
    if t._device.type == "meta":  # NOTE: no values: PyTorch shows the size and any dtype
        suffixes.append(f"size={tuple(t.shape)}")
        if dt is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dt!r}")
        body = "..."
    elif t.numel() == 0:
        if t.ndim != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        # NOTE: an empty tensor shows every non-default dtype, int64 and bool included.
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if dt not in (default, dtypes.int64, dtypes.bool):
            suffixes.append(f"dtype={dt!r}")
        if t.device.type == "cuda":
            from .backends import cuda_support

            cuda_support.refuse_during_capture("printing a CUDA tensor (a copy of CUDA memory to "
                                               "the host)")
        body = array_str(t.backend.to_host(t._data), dt.is_floating_point, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rsplit('::', 1)[-1]}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
