"""Backend entries of the scatter family (``functions/scatter.py``, ``ops/scatter.py``), written once
for NumPy and CuPy through ``self.xp`` (the backend's array module; ``self.name`` tells them
apart where they differ). Mixed into both backends.

Every write goes through ``scatter_reduce_into``: ``out[key] op= values`` with repeated positions
combining (``key`` is an advanced-indexing key: index arrays, possibly with full slices).

- NumPy: the ufuncs' ``at`` (``add``, ``multiply``, ``maximum``, ``minimum``), sequential in
  index order, as PyTorch's CPU kernels are.
- CuPy: ``cupy.add.at`` for a sum in the dtypes CuPy's atomic add takes (int32, uint32, uint64,
  float16, float32, float64); every other reduction and dtype (int64, int8, bool, products,
  max/min) sorts the positions and combines each run of equal ones with a log-step segmented
  scan, so no dtype is refused and no atomic is needed.
"""

from __future__ import annotations

from typing import Any

from . import cuda_support

Array = Any

_UFUNCS = {"sum": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}
# NOTE: the dtypes of CuPy's atomicAdd (cupy.add.at / cupyx.scatter_add); others are refused.
_MASKED = ("a result shaped by a mask's values (masked_select, masked_scatter, ...: the count is "
           "read back to the host)")
_ATOMIC_ADD = {"int32", "uint32", "uint64", "float16", "float32", "float64"}


class Determinism:
    """``torch.use_deterministic_algorithms``'s mode, as the backends read it: when on, CuPy's
    float sums into repeated positions (``index_add``) take the sorted runs instead of atomic
    adds, whose order (and so the rounding) varies from run to run."""

    on = False


class ScatterBackend:
    """The scatter family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    def scatter_reduce_into(self: Any, out: Array, key: tuple[Any, ...], values: Array,
                            reduce: str, include_self: bool = True) -> None:
        """``out[key] = values`` (``reduce`` "set") or the reduction ``reduce`` ("sum", "prod",
        "mean", "amax", "amin") of each position's old value (unless ``include_self`` is
        False) and every value sent there, in place. ``values`` broadcasts to ``out[key]``'s
        shape ("mean": ``values`` has that shape). A "mean" divides by the count of values
        combined (floor division for integer dtypes, as PyTorch's); positions that take no
        value keep theirs."""
        if reduce == "set":
            if self.name == "numpy":  # NOTE: sequential: the last of repeated positions wins
                out[key] = values
            else:
                self._set_last(out, key, values)
            return
        if not include_self:
            out[key] = self.reduce_identity(reduce, out.dtype)
        if reduce != "mean":
            self._combine_at(out, key, values, reduce)
            return
        self._combine_at(out, key, values, "sum")
        xp = self.xp
        counts = xp.full(out.shape, 1.0 if include_self else 0.0, dtype="float64")
        if values.size:  # NOTE: counted in float64: exact, and CuPy's atomic add takes it
            self.index_add(counts, key, xp.ones(values.shape, dtype="float64"))
        hit = counts > 0
        if out.dtype.kind == "f":
            mean = out / xp.where(hit, counts, 1.0)
        else:
            mean = xp.floor_divide(out, xp.where(hit, counts, 1.0).astype("int64"))
        out[...] = xp.where(hit, mean, out).astype(out.dtype, copy=False)

    def reduce_identity(self: Any, reduce: str, dtype: Any) -> Any:
        """The value a reduction starts from when a position's own value is left out: 0 for
        sums and means, 1 for products, the dtype's lowest (highest) value for amax (amin)."""
        xp = self.xp
        dtype = xp.dtype(dtype)
        if reduce in ("sum", "mean"):
            return dtype.type(0)
        if reduce == "prod":
            return dtype.type(1)
        if dtype.kind == "b":
            return dtype.type(reduce == "amin")
        if dtype.kind == "f":
            return dtype.type(-xp.inf if reduce == "amax" else xp.inf)
        info = xp.iinfo(dtype)
        return dtype.type(info.min if reduce == "amax" else info.max)

    def _combine_at(self: Any, out: Array, key: tuple[Any, ...], values: Array,
                    reduce: str) -> None:
        xp = self.xp
        if self.name == "numpy":
            getattr(xp, _UFUNCS[reduce]).at(out, key, values)
        elif reduce == "sum" and out.dtype.name in _ATOMIC_ADD:
            self.index_add(out, key, values)
        else:
            self._segment_combine(out, key, values, reduce)

    def _set_last(self: Any, out: Array, key: tuple[Any, ...], values: Array) -> None:
        """``out[key] = values`` where the last value sent to a repeated position wins, as on
        PyTorch's CPU (CuPy's parallel assignment lets any of them win): the positions sorted
        by (position, order sent), the last of each run written."""
        xp = self.xp
        parts = key if isinstance(key, tuple) else (key,)
        if not any(getattr(k, "dtype", None) is not None and k.dtype.kind in "iu" and k.size > 1
                   for k in parts):  # NOTE: slices, masks, one position: nothing repeats
            out[key] = values
            return
        pos = xp.arange(out.size, dtype="int64").reshape(out.shape)[key]
        if not pos.size:
            return
        vals = xp.broadcast_to(xp.asarray(values, dtype=out.dtype), pos.shape).reshape(-1)
        pos = pos.reshape(-1)
        n = pos.size
        order = xp.argsort(pos * n + xp.arange(n, dtype="int64"))  # NOTE: unique keys
        pos = pos[order]
        last = xp.ones(n, dtype="bool")
        last[:-1] = pos[1:] != pos[:-1]
        out[xp.unravel_index(pos[last], out.shape)] = vals[order[last]]

    def _segment_combine(self: Any, out: Array, key: tuple[Any, ...], values: Array,
                         reduce: str) -> None:
        """``_combine_at`` without ``ufunc.at``: the positions ``key`` selects (as flat C-order
        numbers), reduced run by run (``_runs``) and combined into ``out``."""
        xp = self.xp
        pos = xp.arange(out.size, dtype="int64").reshape(out.shape)[key]
        if not pos.size:
            return
        pos, acc = self._runs(pos.reshape(-1), xp.broadcast_to(values, pos.shape).reshape(-1),
                              reduce)
        where = xp.unravel_index(pos, out.shape)
        fn = getattr(xp, _UFUNCS[reduce])
        out[where] = fn(out[where], acc).astype(out.dtype, copy=False)

    def index_add_rows(self: Any, out: Array, index: Array, rows: Array) -> None:
        """``out[index] += rows`` (``index`` 1-d, ``rows`` of shape ``index.shape +
        out.shape[1:]``), repeated rows summed in a fixed order on every device: NumPy's
        ``add.at`` (sequential); on CuPy sorted runs (``_runs``) where float atomics would add
        in any order. PyTorch's embedding backward is deterministic on CUDA too."""
        if self.name != "cupy" or rows.dtype.kind != "f":
            self.index_add(out, index, rows)  # NOTE: integer sums are exact in any order
            return
        if not index.size:
            return
        first, acc = self._runs(index, rows, "sum")
        out[first] += acc.astype(out.dtype, copy=False)

    def _runs(self: Any, pos: Array, vals: Array, reduce: str) -> tuple[Array, Array]:
        """The distinct values of the 1-d ``pos``, ascending, and for each the reduction
        ``reduce`` of its entries of ``vals`` (``vals[i]``: an element or a row sent to
        ``pos[i]``): positions sorted, each run of equal ones reduced by a segmented inclusive
        Hillis-Steele scan (``ceil(log2(longest run))`` whole-array steps), the run's last
        element kept. Deterministic: no atomics."""
        xp = self.xp
        fn = getattr(xp, _UFUNCS[reduce])
        order = xp.argsort(pos)
        pos = pos[order]
        acc = vals[order]
        n = pos.size
        last = xp.ones(n, dtype="bool")
        last[:-1] = pos[1:] != pos[:-1]
        ends = xp.flatnonzero(last)
        longest = int((ends - xp.concatenate((xp.asarray([-1]), ends[:-1]))).max())
        trail = (1,) * (acc.ndim - 1)
        step = 1
        while step < longest:
            # NOTE: the right side is computed in full before the write (Hillis-Steele).
            same = (pos[step:] == pos[:-step]).reshape((-1,) + trail)
            acc[step:] = xp.where(same, fn(acc[step:], acc[:-step]), acc[step:])
            step *= 2
        return pos[last], acc[last]

    def contiguous_copy(self: Any, x: Array) -> Array:
        """A C-contiguous copy of ``x`` (always a new array)."""
        return self.xp.array(x, copy=True, order="C")

    def flat_positions(self: Any, mask: Array) -> Array:
        """The C-order positions where the bool array ``mask`` (any shape, 0-d too) is true."""
        if self.name == "cupy":  # NOTE: CUDA graphs (cuda_graph.py): the count is a host read
            cuda_support.refuse_during_capture(_MASKED)
        return self.xp.flatnonzero(mask)

    def wrap_negative(self: Any, index: Array, n: int) -> Array:
        """``index`` with its entries in ``[-n, 0)`` moved up by ``n`` (a copy only when it has
        any): PyTorch's reading of a negative position in ``take``, ``put`` and ``index_fill``."""
        if not index.size or bool(index.min() >= 0):  # NOTE: one bool read back, not the least
            return index
        return self.xp.where(index < 0, index + n, index)

