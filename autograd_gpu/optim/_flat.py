"""Adam's foreach update over a whole parameter group at once (CPU): ~15 NumPy calls for the group
instead of ``_foreach.adam``'s 13 per parameter.

Elementwise IEEE arithmetic gives each element the same bits whether its array is one
parameter's or a concatenation of many, so when every parameter of a group on the foreach path
has the same dtype and the same step (the same scalars) and its state tensors are views into one
flat buffer per state kind, ``_foreach.adam``'s sequence runs once over the flat buffers:
the effective grads gathered into one flat buffer (one ``concatenate``), the moments and the
update there, then per parameter the decoupled decay (AdamW) and ``p += update`` as
``_foreach.adam`` ends. The results are the per-parameter path's, bit for bit.

The layout is made with the state (``make_state``: a group's first step, when every parameter
with a gradient is a dense C-ordered CPU float32/float64 array of one dtype): each state tensor
holds a C-contiguous view of its slice of the flat buffer, shaped and strided as ``zeros_like(p)``
(PyTorch's state), so ``optimizer.state``, ``state_dict()``, in-place edits and the values are
as before. Anything else (a state replaced by ``load_state_dict`` or by the user, a parameter
without a gradient this step, parameters at different steps) fails ``usable``'s identity checks
and the group takes the per-parameter path, on the same tensors.

NOTE: the flat buffers and the scratch ones sit in the optimizer's ``_foreach_scratch`` pool
(``_foreach.scratch``), so that a compiled step loads the very same arrays on every replay; a
recording's SymArrays stand for plain arrays through their ``_orig``, which the identity checks
read (``_plain``).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from ..tensor import Tensor
from . import _foreach

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_G, _S1, _S2, _FIRST_STATE = 0, 1, 2, 3  # NOTE: the pool list's layout (then the update views)


class Flat:
    """One group's flat layout: its parameters (in order), their state tensors' arrays (per
    parameter, in the state names' order), and ``bufs``, the pool list: flat grad, two flat
    scratch buffers, one flat buffer per state kind, then each parameter's view of the update."""

    __slots__ = ("group", "params", "datas", "bufs", "kinds")

    def __init__(self, group: dict[str, Any], params: tuple[Tensor, ...],
                 datas: tuple[tuple[Any, ...], ...], bufs: list[Any], kinds: int) -> None:
        self.group = group
        self.params = params
        self.datas = datas
        self.bufs = bufs
        self.kinds = kinds


def _plain(a: Any) -> Any:
    """The plain array a compile recording's SymArray stands for (``a`` itself otherwise)."""
    if type(a) is np.ndarray:
        return a
    orig = getattr(a, "_orig", None)
    return a if orig is None else orig


def get(opt: Any, group: dict[str, Any]) -> Flat | None:
    """The group's flat layout, if ``make_state`` made one for it. Layouts of groups the
    optimizer no longer has (``load_state_dict`` replaces them, with the state) are dropped."""
    flats = opt.__dict__.get("_foreach_flat")
    if not flats:
        return None
    flat = flats.get(id(group))
    if flat is not None:
        return flat  # NOTE: ``flat.group`` is ``group``: it holds it, so no other has its id
    groups = opt.param_groups
    for key in [key for key, f in flats.items() if all(f.group is not g for g in groups)]:
        del flats[key]
        opt.__dict__["_foreach_scratch"].pop(("flat", key), None)
    return None


def _c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """NumPy's strides of a new C-ordered array of ``shape`` (no zero in it)."""
    out = []
    for n in reversed(shape):
        out.append(itemsize)
        itemsize *= n
    return tuple(reversed(out))


def make_state(opt: Any, group: dict[str, Any], items: list[tuple[Tensor, Tensor]],
               names: tuple[str, ...], step: Any) -> bool:
    """Make the state of the group's parameters ``items`` (``(p, grad)``, none with state yet)
    in the flat layout, with ``step()`` making each ``step`` tensor; False (nothing made) when
    they do not all qualify: two or more non-empty CPU float32/float64 parameters of one dtype
    with a new C-ordered array's strides (the state's views get the same strides: those of
    ``zeros_like(p)``), with grads as the foreach path takes them."""
    if len(items) < 2:
        return False
    dtype = items[0][0]._data.dtype
    if dtype not in _FLOATS:
        return False
    for p, g in items:
        d = p._data
        if not isinstance(d, np.ndarray) or p._device.type != "cpu" or d.dtype != dtype \
                or not d.size or d.strides != _c_strides(d.shape, d.itemsize) \
                or _foreach.arrays(p, g) is not np:
            return False
    sizes = [p._data.size for p, _ in items]
    total = sum(sizes)
    cuts = [0, *accumulate(sizes)]

    def views(flat: Any) -> list[Any]:
        return [flat[a:b].reshape(p._data.shape) for (p, _), a, b in zip(items, cuts, cuts[1:])]

    dev = items[0][0]._device
    # NOTE: scratch made as ``_foreach.scratch`` makes it: counted by ``memory_allocated``
    bufs = [Tensor._make(np.empty(total, dtype), dev)._data for _ in range(3)]
    state_views = []
    for _ in names:
        flat = np.zeros(total, dtype)
        bufs.append(flat)
        state_views.append(views(flat))
    bufs += views(bufs[_S1])
    states = opt.state
    for i, (p, _) in enumerate(items):
        st = states[p]
        st["step"] = step()
        for name, vs in zip(names, state_views):
            st[name] = Tensor._make(vs[i], dev)
    datas = tuple(tuple(_plain(vs[i]) for vs in state_views) for i in range(len(items)))
    flats = opt.__dict__.setdefault("_foreach_flat", {})
    flats[id(group)] = Flat(group, tuple(p for p, _ in items), datas, bufs, len(names))
    pool = opt.__dict__.setdefault("_foreach_scratch", {})
    pool[("flat", id(group))] = bufs
    return True


def usable(flat: Flat | None, rows: list[Any], ks: list[Any]) -> bool:
    """Whether ``flat`` serves a step over ``rows`` (``(p, grad, state tensors, xp, step)`` of
    the group's parameters on the foreach path) with scalars ``ks``: the same parameters in the
    same order, each state tensor still holding its view of the flat buffers, one scalar tuple."""
    if flat is None or len(rows) != len(flat.params):
        return False
    k0 = ks[0]
    for row, p, datas, k in zip(rows, flat.params, flat.datas, ks):
        if row[0] is not p or k is not k0:
            return False
        for t, a in zip(row[2], datas):
            if _plain(t._data) is not a:
                return False
    return True


def adam(xp: Any, flat: Flat, rows: list[Any], k: tuple[Any, ...], maximize: bool,
         wd: Any, amsgrad: bool) -> None:
    """``_foreach.effective_grad`` and ``_foreach.adam`` for all of ``rows`` at once (``wd``:
    the coupled weight decay as the arrays' type, or None)."""
    bufs = flat.bufs
    g, s2 = bufs[_G], bufs[_S2]
    n = flat.kinds
    m, v = bufs[_FIRST_STATE], bufs[_FIRST_STATE + 1]
    vmax = bufs[_FIRST_STATE + 2] if amsgrad else None
    xp.concatenate([row[1]._data for row in rows], axis=None, out=g)
    if wd is not None:
        # NOTE: the params gathered into s2, which effective_grad scales in place (its tmp)
        xp.concatenate([row[0]._data for row in rows], axis=None, out=s2)
    _foreach.effective_grad(xp, s2, g, g, s2, maximize, wd)
    _foreach.adam_moments(xp, g, m, v, vmax, bufs, k)
    decay = k[0]
    for row, upd in zip(rows, bufs[_FIRST_STATE + n:]):
        d = row[0]._data
        if decay is not None:
            xp.multiply(d, decay, out=d)
        xp.add(d, upd, out=d)
