"""Property test: random programs of 2-4 differentiable steps on random float64 shapes, each run
by PyTorch (the oracle, on the CPU) and by us (on the device under test).

A step is an op of the table (``op_db.OPS``: unary and reduction ops wherever PyTorch accepts the
current shape, broadcasting binary and ternary ops with a fresh operand of a random broadcastable
shape, fixed-shape ops where the shape fits) or one of the families the table holds only at fixed
shapes: reductions over random dims with keepdim (ties included), gather with an index smaller
than the input outside ``dim``, index_select and advanced indexing with random (repeated,
negative) indices and masks, masked_fill/where, random views (permute, reshape, expand, narrow,
...), cat/stack, matmul with a fresh operand, and in-place ops on views of a clone
(``y[1:].mul_(2)``, ``y.transpose(0, -1).add_(z)``, ``y[..., :1] = z``) or on the current tensor
itself (which PyTorch may refuse: then we must refuse with the same exception type).

Checked: the output's values, shape and dtype, the gradients of every leaf (all equal to
PyTorch's), no floating-point warning from us, and, where the program is smooth at its inputs
(real-valued data, finite moderate values), the gradients against central finite differences.
No step may create a NaN (PyTorch's gradients through one follow no rule worth pinning).

Profiles (registered in ``tests/conftest.py``): ``ci`` (the default: 500 examples per device,
derandomized) and ``long`` (10 000 per device, random): ``pytest tests/ops/test_compose.py
--hypothesis-profile=long`` or ``AUTOGRAD_GPU_HYPOTHESIS=long``.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, broadcastable_shapes

import autograd_gpu as ag
from tests.conftest import DEVICES
from tests.ops import op_db
from tests.ops.op_db import OPS, OpInfo

Shape = tuple[int, ...]
StepFn = Callable[[Any, Any, list[Any], str], Any]  # (module, current, extra leaves, device)

# ---- steps ------------------------------------------------------------------------------------


@dataclass
class Step:
    """One step: ``fn(m, cur, extras, dev)`` with ``extras`` fresh float64 leaves made from
    ``arrays`` (index arrays live in the closure)."""

    name: str
    fn: StepFn
    arrays: list[np.ndarray] = field(default_factory=list)


@dataclass
class Program:
    x0: np.ndarray
    steps: list[Step]
    smooth: bool
    seed: int

    def __repr__(self) -> str:
        return (f"Program(x0 shape {self.x0.shape}, seed {self.seed}, smooth {self.smooth}: "
                + " -> ".join(s.name for s in self.steps) + ")")


def run(m: Any, prog: Program, dev: str, arrays: list[np.ndarray] | None = None,
        grad: bool = True) -> tuple[list[Any], Any]:
    """The program's leaves and output under ``m`` (torch or autograd_gpu) on ``dev``."""
    kw = {"device": dev} if m is ag else {}
    arrays = arrays if arrays is not None else [prog.x0] + [a for s in prog.steps for a in s.arrays]
    leaves = [m.tensor(a, dtype=m.float64, requires_grad=grad, **kw) for a in arrays]
    cur, k = leaves[0], 1
    for step in prog.steps:
        extras = leaves[k:k + len(step.arrays)]
        k += len(step.arrays)
        cur = step.fn(m, cur, extras, dev)
    return leaves, cur


def _pick(out: Any, k: int) -> Any:
    """The ``k``-th floating-point output (modulo their number) of a table op."""
    outs = op_db.float_outputs(out)
    return outs[k % len(outs)]


# Adapters: PyTorch-identical maps into an op's input domain (op_db.DOMAINS), so that any
# intermediate value can feed any op.
ADAPT: dict[str, Callable[[Any], Any]] = {
    "positive": lambda t: t * t + 0.5,
    "nonzero": lambda t: t * t + 0.3,
    "unit": lambda t: t.tanh() * 0.9,
}


def _adapt(t: Any, domain: str) -> Any:
    return ADAPT[domain](t) if domain in ADAPT else t


@functools.cache
def _accepts(name: str, shape: Shape) -> bool:
    """Whether PyTorch runs the single-input table op ``name`` on a tensor of ``shape``."""
    op = op_db.OPS_BY_NAME[name]
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = op_db.float_outputs(op.fn(torch, x))
    except Exception:  # noqa: BLE001
        return False
    return bool(outs) and all(o.requires_grad for o in outs)


# NOTE: the table's sample groups say which ops broadcast (BINARY, TERNARY); ops on a single
# tensor are tried on the current shape; other multi-input ops join when a sample shape fits.
TABLE = [op for op in OPS if op.differentiable]
SINGLE = [op for op in TABLE if len(op.samples[0]) == 1]
BROADCAST = [op for op in TABLE if op.samples in (op_db.BINARY, op_db.TERNARY)]
FIXED = [op for op in TABLE if len(op.samples[0]) > 1 and op not in BROADCAST]
KINK_DOMAINS = ("ties", "zeros", "allzero")


def _table_single(op: OpInfo, k: int) -> Step:
    dom = op.domains(1)[0]
    return Step(op.name, lambda m, c, e, d: _pick(op.fn(m, _adapt(c, dom)), k))


def _table_multi(op: OpInfo, slot: int, shapes: list[Shape], rng: np.random.Generator) -> Step:
    doms = op.domains(len(shapes) + 1)

    def fn(m: Any, c: Any, e: list[Any], d: str) -> Any:
        args = list(e)
        args.insert(slot, c)
        return _pick(op.fn(m, *[_adapt(a, dom) for a, dom in zip(args, doms)]), 0)

    return Step(f"{op.name}[{slot}]", fn, [rng.standard_normal(s) for s in shapes])


REDUCE: dict[str, Callable[[Any, Any, tuple[int, ...], bool], Any]] = {
    "sum": lambda m, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda m, x, d, k: x.mean(d, keepdim=k),
    "amax": lambda m, x, d, k: x.amax(d, keepdim=k),
    "amin": lambda m, x, d, k: m.amin(x, d, keepdim=k),
    "max_dim": lambda m, x, d, k: x.max(d[0], keepdim=k)[0],
    "min_dim": lambda m, x, d, k: m.min(x, d[0], k).values,
    "logsumexp": lambda m, x, d, k: m.logsumexp(x, d, keepdim=k),
    "var": lambda m, x, d, k: x.var(d, keepdim=k),
    "std": lambda m, x, d, k: x.std(d, keepdim=k, correction=0),
    "norm2": lambda m, x, d, k: x.norm(dim=d, keepdim=k),
    "norm1": lambda m, x, d, k: m.norm(x, 1, d, keepdim=k),
    "norm3": lambda m, x, d, k: x.norm(p=3, dim=d, keepdim=k),
    "norm_inf": lambda m, x, d, k: x.norm(p=math.inf, dim=d, keepdim=k),
    "prod": lambda m, x, d, k: x.prod(d[0], keepdim=k),
}


@functools.cache
def _reduce_ok(kind: str, shape: Shape, dims: tuple[int, ...], keepdim: bool) -> bool:
    x = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            REDUCE[kind](torch, x, dims, keepdim)
    except Exception:  # noqa: BLE001
        return False
    return True


def _uniform(rng: np.random.Generator, items: list[Any]) -> Any:
    """One of ``items``, uniformly. NOTE: ops are chosen by the example's seeded generator, not
    drawn: Hypothesis favours the first entries of a list, and the table is long."""
    return items[int(rng.integers(len(items)))]


def _index(m: Any, a: np.ndarray, dev: str) -> Any:
    return m.tensor(a, device=dev) if m is ag else torch.tensor(a)


@st.composite
def _custom_step(draw: Any, shape: Shape, rng: np.random.Generator) -> Step | None:
    """A step of a family the table holds only at fixed shapes, or None if none fits."""
    nd = len(shape)
    kind = _uniform(rng, [
        "reduce", "gather", "index_select", "adv_index", "mask_index", "masked_fill", "where",
        "permute", "transpose", "reshape", "expand", "unsqueeze", "narrow", "select", "split",
        "cat", "stack", "softmax", "matmul", "view_mul_", "view_t_add_", "setitem",
        "flat_view_sub_", "view_unary_", "inplace_direct",
    ])
    dim = draw(st.integers(-max(nd, 1), max(nd, 1) - 1))
    if kind == "reduce":
        op = _uniform(rng, sorted(REDUCE))
        dims = tuple(draw(st.lists(st.integers(-nd, nd - 1), min_size=1, max_size=max(nd, 1),
                                   unique_by=lambda d: d % nd))) if nd else (0,)
        keep = draw(st.booleans())
        if not _reduce_ok(op, shape, dims, keep):
            return None
        return Step(f"{op}{dims}{'k' if keep else ''}",
                    lambda m, c, e, d: REDUCE[op](m, c, dims, keep))
    if kind == "softmax":
        f = draw(st.sampled_from(["softmax", "log_softmax"]))
        return Step(f"{f}({dim})", lambda m, c, e, d: getattr(c, f)(dim)) if nd or dim in (0, -1) \
            else None
    if kind == "cat" and nd:
        n = draw(st.integers(0, 2))
        other = list(shape)
        other[dim] = n
        first = draw(st.booleans())
        return Step(f"cat({dim})", lambda m, c, e, d: m.cat([c, e[0]] if first else [e[0], c], dim),
                    [rng.standard_normal(other)])
    if kind == "stack":
        sd = draw(st.integers(-nd - 1, nd))
        return Step(f"stack({sd})", lambda m, c, e, d: m.stack([e[0], c], sd),
                    [rng.standard_normal(shape)])
    if kind == "matmul" and nd:
        n = draw(st.integers(1, 3))
        vec = draw(st.booleans())
        other = (shape[-1],) if vec else (shape[-1], n)
        return Step(f"matmul{other}", lambda m, c, e, d: c @ e[0], [rng.standard_normal(other)])
    if kind == "permute" and nd:
        perm = draw(st.permutations(range(nd)))
        return Step(f"permute{tuple(perm)}", lambda m, c, e, d: c.permute(*perm))
    if kind == "transpose" and nd:
        d2 = draw(st.integers(-nd, nd - 1))
        return Step(f"transpose({dim},{d2})", lambda m, c, e, d: c.transpose(dim, d2))
    if kind == "reshape":
        numel = int(np.prod(shape))
        new = _factor(draw, numel)
        if numel and draw(st.booleans()):
            new = new[:0] + (-1,) + new[1:] if new else new
        return Step(f"reshape{new}", lambda m, c, e, d: c.reshape(new))
    if kind == "expand":
        new = tuple(draw(st.integers(1, 2)) if s == 1 else s for s in shape)
        lead = (2,) if draw(st.booleans()) else ()
        return Step(f"expand{lead + new}", lambda m, c, e, d: c.expand(lead + new))
    if kind == "unsqueeze":
        ud = draw(st.integers(-nd - 1, nd))
        return Step(f"unsqueeze({ud})", lambda m, c, e, d: c.unsqueeze(ud))
    if kind in ("narrow", "select", "split") and nd and shape[dim]:
        size = shape[dim]
        if kind == "narrow":
            start = draw(st.integers(0, size - 1))
            length = draw(st.integers(0, size - start))
            return Step(f"narrow({dim},{start},{length})",
                        lambda m, c, e, d: c.narrow(dim, start, length))
        if kind == "select":
            i = draw(st.integers(-size, size - 1))
            return Step(f"select({dim},{i})", lambda m, c, e, d: c.select(dim, i))
        chunk = draw(st.integers(1, size))
        piece = draw(st.integers(0, -(-size // chunk) - 1))
        return Step(f"split({chunk},{dim})[{piece}]",
                    lambda m, c, e, d: c.split(chunk, dim)[piece])
    if kind == "gather" and nd and all(shape):
        gd = dim % nd
        ishape = tuple(draw(st.integers(1, 3)) if i == gd else draw(st.integers(1, s))
                       for i, s in enumerate(shape))
        idx = rng.integers(0, shape[gd], size=ishape)
        return Step(f"gather({dim},{ishape})",
                    lambda m, c, e, d: m.gather(c, dim, _index(m, idx, d)))
    if kind == "index_select" and nd:
        n = shape[dim]
        idx = rng.integers(0, n, size=draw(st.integers(0, 4))) if n else np.zeros(0, np.int64)
        return Step(f"index_select({dim},{idx.tolist()})",
                    lambda m, c, e, d: c.index_select(dim, _index(m, idx, d)))
    if kind == "adv_index" and nd and shape[0]:
        ishape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        idx = rng.integers(-shape[0], shape[0], size=ishape)
        form = draw(st.sampled_from(["first", "then_slice", "pair", "after_slice"]))
        if form in ("pair", "after_slice") and (nd < 2 or not shape[1]):
            form = "first"
        idx2 = rng.integers(-shape[1], shape[1], size=ishape[-1:]) if form == "pair" else None

        def adv(m: Any, c: Any, e: list[Any], d: str) -> Any:
            i = _index(m, idx, d)
            if form == "first":
                return c[i]
            if form == "then_slice":
                return c[i, ..., :1]
            if form == "pair":
                return c[i, _index(m, idx2, d)]
            return c[:, i % shape[1]]

        return Step(f"index[{form},{ishape}]", adv)
    if kind in ("mask_index", "masked_fill", "where"):
        mshape = shape[:draw(st.integers(0, nd))] if kind == "mask_index" else draw(_onto(shape))
        mask = rng.random(mshape) < 0.5
        if kind == "mask_index":
            return Step(f"mask_index{mshape}", lambda m, c, e, d: c[_index(m, mask, d)])
        if kind == "masked_fill":
            value = float(draw(st.sampled_from([0.0, -1.5, 2.0])))
            return Step(f"masked_fill{mshape}",
                        lambda m, c, e, d: c.masked_fill(_index(m, mask, d), value))
        other = draw(_broadcastable(shape))
        return Step(f"where{mshape},{other}",
                    lambda m, c, e, d: m.where(_index(m, mask, d), c, e[0]),
                    [rng.standard_normal(other)])
    if kind == "view_mul_" and nd and shape[0]:
        i = draw(st.integers(0, shape[0] - 1))
        return Step(f"clone[{i}:].mul_", lambda m, c, e, d: _view_inplace(c, lambda y: y[i:].mul_(
            1.5)))
    if kind == "view_t_add_" and nd:
        tshape = shape[-1:] + shape[1:-1] + shape[:1] if nd > 1 else shape
        other = draw(_onto(tshape))
        return Step(f"clone.transpose.add_{other}",
                    lambda m, c, e, d: _view_inplace(c, lambda y: y.transpose(0, -1).add_(e[0])),
                    [rng.standard_normal(other)])
    if kind == "setitem" and nd and shape[-1]:
        other = draw(_onto(shape[:-1] + (1,)))

        def setitem(y: Any, v: Any) -> None:
            y[..., :1] = v

        return Step(f"clone[..., :1] = {other}",
                    lambda m, c, e, d: _view_inplace(c, lambda y: setitem(y, e[0])),
                    [rng.standard_normal(other)])
    if kind == "flat_view_sub_":
        f = draw(st.sampled_from(["view", "reshape"]))
        return Step(f"clone.{f}(-1)[::2].sub_", lambda m, c, e, d: _view_inplace(
            c, lambda y: getattr(y, f)(-1)[::2].sub_(e[0])), [rng.standard_normal(())])
    if kind == "view_unary_" and nd and shape[0]:
        f = draw(st.sampled_from(["relu_", "sigmoid_", "tanh_", "exp_", "neg_"]))
        return Step(f"clone[:1].{f}", lambda m, c, e, d: _view_inplace(
            c, lambda y: getattr(y[:1], f)()))
    if kind == "inplace_direct":
        f = draw(st.sampled_from(["mul_", "add_", "exp_", "sigmoid_"]))
        args = (0.5,) if f in ("mul_", "add_") else ()

        def direct(m: Any, c: Any, e: list[Any], d: str) -> Any:
            return getattr(c, f)(*args)

        return Step(f"cur.{f}", direct)
    return None


def _broadcastable(shape: Shape) -> st.SearchStrategy[Shape]:
    """Shapes that broadcast with ``shape`` (possibly to a larger shape)."""
    return broadcastable_shapes(shape, min_side=0 if 0 in shape else 1,
                                max_side=max((3,) + shape), max_dims=len(shape) + 1)


@st.composite
def _onto(draw: Any, target: Shape) -> Shape:
    """A shape that broadcasts to ``target`` (and no further): some leading dims dropped, some
    dims 1."""
    lead = draw(st.integers(0, len(target)))
    return tuple(draw(st.sampled_from([1, s])) for s in target[lead:])


def _view_inplace(c: Any, edit: Callable[[Any], Any]) -> Any:
    """``edit`` applied to ``c.clone()`` through a view; the clone (the view's base) is the
    result, so the in-place op's gradient flows through CopySlices."""
    y = c.clone()
    edit(y)
    return y


def _factor(draw: Any, n: int) -> Shape:
    """A random shape with ``n`` elements (at most 3 dims)."""
    if n == 0:
        return draw(st.sampled_from([(0,), (0, 2), (2, 0, 1)]))
    dims: list[int] = []
    rest = n
    for _ in range(draw(st.integers(0, 2))):
        divisors = [k for k in range(1, rest + 1) if rest % k == 0]
        k = draw(st.sampled_from(divisors))
        dims.append(k)
        rest //= k
    return tuple(dims) + (rest,)


@st.composite
def programs(draw: Any) -> Program:
    """A random program: a leaf of random shape and data, then 2-4 steps; the shape after each
    step is PyTorch's."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = draw(array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    data = draw(st.sampled_from(["real"] * 6 + list(KINK_DOMAINS)))
    x0 = op_db.DOMAINS[data](rng, shape).astype(np.float64)
    steps: list[Step] = []
    cur: Any = torch.tensor(x0, requires_grad=True)
    leaves = [cur]
    for _ in range(draw(st.integers(2, 4))):
        step = draw(_step(tuple(cur.shape), rng))
        try:
            extras = [torch.tensor(a, requires_grad=True) for a in step.arrays]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                new = step.fn(torch, cur, extras, "cpu")
        except Exception:  # noqa: BLE001
            steps.append(step)  # PyTorch refuses: we must refuse alike; no step after it
            break
        if "std" in step.name and bool((new.abs() < 1e-6).any()) and bool(cur.any()):
            # NOTE: the std of a constant nonzero input is a rounding error of 0, and its
            # gradient 0/0 then depends on how the sum was ordered: no two backends agree.
            continue
        if bool(torch.isnan(new).any()) and not bool(torch.isnan(cur).any()):
            # NOTE: no step makes a NaN (var of one element, 0/0): where a NaN flows, PyTorch's
            # gradients follow no rule worth pinning here (nan or inf, relu passing it on).
            continue
        cur = new
        leaves += extras
        steps.append(step)
    # NOTE: with real-valued data every kink (relu at 0, ties of max, a zero norm) is met only
    # where the function is flat around it or with probability 0, so differences are valid.
    return Program(x0, steps, data == "real", seed)


@st.composite
def _step(draw: Any, shape: Shape, rng: np.random.Generator) -> Step:
    for _ in range(8):
        source = draw(st.sampled_from(["single", "single", "broadcast", "fixed", "custom",
                                       "custom", "custom"]))
        if source == "single":
            op = _uniform(rng, SINGLE)
            if _accepts(op.name, shape):
                return _table_single(op, draw(st.integers(0, 3)))
        elif source == "broadcast":
            op = _uniform(rng, BROADCAST)
            n = len(op.samples[0])
            slot = draw(st.integers(0, n - 1))
            shapes = [draw(_broadcastable(shape)) for _ in range(n - 1)]
            if op.name.startswith("clamp"):
                # NOTE: PyTorch 2.13's ClampBackward0 fails ("output with shape [2] doesn't match
                # the broadcast shape [1, 2]") when the bounds broadcast the input to a larger
                # shape; we return the gradients. Keep the input full-sized.
                shapes = [shape if slot and j == 0 else draw(_onto(shape)) for j in range(n - 1)]
            return _table_multi(op, slot, shapes, rng)
        elif source == "fixed":
            fits = [(op, s, i) for op in FIXED for s in op.samples for i in range(len(s))
                    if s[i] == shape]
            if fits:
                op, s, i = _uniform(rng, fits)
                return _table_multi(op, i, [x for j, x in enumerate(s) if j != i], rng)
        else:
            step = draw(_custom_step(shape, rng))
            if step is not None:
                return step
    return Step("neg", lambda m, c, e, d: -c)


# ---- the check --------------------------------------------------------------------------------

def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu()) if isinstance(t, ag.Tensor) else t.detach().numpy()


def _outcome(m: Any, prog: Program, dev: str) -> tuple[Any, Any, Any]:
    """(leaves, output, loss) or the exception PyTorch/we raised while running or
    differentiating ``prog``."""
    with warnings.catch_warnings():
        # NOTE: as the suite's filter does: a NumPy floating-point warning is an error (PyTorch
        # is silent on inf/nan arithmetic); ops recompute quietly when they get one.
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", RuntimeWarning)
        try:
            leaves, out = run(m, prog, dev)
            w = np.random.default_rng(prog.seed + 1).standard_normal(tuple(out.shape))
            kw = {"device": dev} if m is ag else {}
            loss = (out * m.tensor(w, dtype=m.float64, **kw)).sum()
            loss.backward()
        except RuntimeWarning as e:
            if m is ag:
                raise AssertionError(f"{prog}: floating-point warning {e}") from e
            return e, None, None
        except Exception as e:  # noqa: BLE001
            return e, None, None
    return leaves, out, loss


TOL = {"rtol": 1e-7, "atol": 1e-9}


def check(prog: Program, device: str) -> None:
    theirs = _outcome(torch, prog, "cpu")
    ours = _outcome(ag, prog, device)
    event(f"steps: {len(prog.steps)}")
    if isinstance(theirs[0], Exception):
        event("outcome: both raise")
        assert isinstance(ours[0], type(theirs[0])), \
            f"{prog}: torch raises {type(theirs[0]).__name__}: {theirs[0]}; we give {ours[0]!r}"
        return
    if isinstance(ours[0], Exception):
        raise AssertionError(f"{prog}: torch runs, we raise") from ours[0]
    (t_leaves, t_out, _), (o_leaves, o_out, o_loss) = theirs, ours
    assert tuple(o_out.shape) == tuple(t_out.shape), (prog, o_out.shape, t_out.shape)
    assert repr(o_out.dtype) == repr(t_out.dtype), prog
    np.testing.assert_allclose(_np(o_out), _np(t_out), err_msg=f"{prog}: output", **TOL)
    for i, (a, b) in enumerate(zip(o_leaves, t_leaves)):
        what = f"{prog}: grad of leaf {i}"
        if b.grad is None:
            assert a.grad is None or not np.any(_np(a.grad)), what
            continue
        assert a.grad is not None, what
        np.testing.assert_allclose(_np(a.grad), _np(b.grad), err_msg=what, **TOL)
    fd = prog.smooth and _moderate(o_loss, o_leaves)
    event(f"outcome: {'matches torch and finite differences' if fd else 'matches torch'}")
    if fd:
        _check_finite_differences(prog, device, o_leaves)


def _moderate(loss: Any, leaves: list[Any]) -> bool:
    """Finite differences are meaningful: finite loss and gradients of moderate size."""
    vals = [abs(float(loss))] + [float(np.abs(_np(t.grad)).max(initial=0.0)) for t in leaves
                                 if t.grad is not None]
    return all(math.isfinite(v) and v < 1e4 for v in vals)


def _loss_at(prog: Program, device: str, arrays: list[np.ndarray]) -> float:
    with ag.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, out = run(ag, prog, device, arrays, grad=False)
        w = np.random.default_rng(prog.seed + 1).standard_normal(tuple(out.shape))
        return float((out * ag.tensor(w, dtype=ag.float64, device=device)).sum())


def _check_finite_differences(prog: Program, device: str, leaves: list[Any]) -> None:
    """Each leaf's gradient against central differences (eps 1e-6, then 1e-7: a kink within
    1e-6 of the data can spoil the first, never a wrong formula only the first)."""
    arrays = [_np(t).copy() for t in leaves]
    for i, t in enumerate(leaves):
        analytic = _np(t.grad) if t.grad is not None else np.zeros(arrays[i].shape)
        for eps in (1e-6, 1e-7):
            numeric = np.zeros(arrays[i].shape)
            flat = arrays[i].reshape(-1)
            for j in range(flat.size):
                orig = flat[j]
                flat[j] = orig + eps
                hi = _loss_at(prog, device, arrays)
                flat[j] = orig - eps
                lo = _loss_at(prog, device, arrays)
                flat[j] = orig
                numeric.reshape(-1)[j] = (hi - lo) / (2 * eps)
            if np.allclose(analytic, numeric, rtol=1e-3, atol=1e-5 if eps == 1e-6 else 1e-4):
                break
        else:
            raise AssertionError(f"{prog}: leaf {i}: gradient {analytic} != finite differences "
                                 f"{numeric}")


@pytest.mark.parametrize("device", DEVICES)
@given(prog=programs())
def test_random_programs_match_torch_and_finite_differences(prog: Program, device: str) -> None:
    check(prog, device)
