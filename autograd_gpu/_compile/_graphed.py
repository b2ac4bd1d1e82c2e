"""``compile`` on CUDA tensors: the step captured as one CUDA graph and replayed with one launch
(PyTorch's ``mode="reduce-overhead"``, on ``cuda.graph``).

Per signature: the first call runs eagerly (it warms up: optimizer state, gradients, cuBLAS
handles). The second captures one call on static copies of the tensor arguments
(``cuda.graph``: on a GPU the captured work does not run, and what the call changed on the host,
Python counters among them, is undone), replays the graph once, keeps what that left (state
arrays, gradients, the result), undoes it, runs eagerly and compares the two bit for bit: a step
whose host-side work changes from call to call (Adam's bias corrections from a step count on the
CPU, a learning rate a scheduler changes inside the step) differs there and stays eager, with
one warning. From the third call on: the arguments are copied into the static inputs, the graph
is launched, the gradients the capture made are put back on their parameters and the result is
returned as copies of the static outputs (the next launch overwrites those).

What the graph reads by address must still be there: a parameter whose array was replaced, or
a gradient replaced by another tensor, makes the gradient's values copied into the captured
one's memory (a gradient) or the signature record again (an array). Learning rates and other
hyper-parameters of the optimizers are part of the CUDA signature, since the graph holds them as
constants (a schedule with a new value every step therefore runs eagerly past
``cache_size_limit``, as PyTorch's recompiles). Host reads and random draws during the capture
are refused by ``cuda.graph`` and make the signature eager with a warning naming them.
"""

from __future__ import annotations

from typing import Any, Callable

from ..tensor import Tensor
from . import _state


def hypers(found: _state.Found) -> tuple[Any, ...]:
    """The optimizers' hyper-parameters a graph holds as constants (part of the signature)."""
    return tuple(tuple(sorted((k, _state._hyper(v)) for k, v in g.items() if k != "params"))
                 for opt in found.optimizers for g in opt.param_groups)


class Graphed:
    """One CUDA signature's captured step (module docstring): ``capture`` on the second call,
    then ``replay``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.graph: Any = None
        self.statics: list[tuple[tuple[Any, ...], Tensor]] = []
        self.out: Any = None
        # NOTE: the gradients when the capture began (the graph may read them: it accumulates
        # into them by address) and when it ended (the graph writes them)
        self.before: list[tuple[Tensor, Tensor]] = []
        self.after: list[tuple[Tensor, Tensor | None]] = []
        self.arrays: list[tuple[Tensor, Any]] = []
        # NOTE: index checks on static inputs, made on the arguments before a launch
        self.hoisted: list[tuple[tuple[Any, ...], int, int]] = []

    def capture(self, found: _state.Found, tensors: list[Tensor], args: tuple[Any, ...],
                kwargs: dict[str, Any], eager: Callable[[], Any]) -> tuple[Any, str | None]:
        """Capture, check one replay against eager (module docstring); (eager's result, None
        when the replay matched, else why not)."""
        from ..cuda_graphs import CUDAGraph, graph

        snap = _state.Snapshot(found, tensors)
        self.before = [(t, t._grad) for t in tensors if t._grad is not None]
        statics = [(path, _static(t)) for path, t in _state.leaves((args, kwargs))
                   if isinstance(t, Tensor)]
        sargs, skw = _rebuild((args, kwargs), dict(statics))
        g = CUDAGraph()
        cause: str | None = None
        try:
            with _noting_backward() as ran, graph(g):
                out = self.fn(*sargs, **skw)
        except Exception as e:  # noqa: BLE001 - any failure of the capture makes it eager
            snap.restore()
            return eager(), f"the CUDA graph capture failed ({type(e).__name__}: {e})"
        if not ran and any(isinstance(t, Tensor) and t._requires_grad and t._grad_fn is not None
                           for _, t in _state.leaves(out)):
            snap.restore()
            return eager(), ("the result needs grad and its backward runs outside the compiled "
                             "function (on CUDA, compile the whole step, or graph the module "
                             "with cuda.make_graphed_callables)")
        self.after = [(t, t._grad) for t in tensors]
        self.hoisted = _hoist(g, statics)
        snap.restore()
        self.arrays = [(t, t._data) for t in tensors]
        self.graph, self.statics, self.out = g, statics, out
        try:
            replayed = self.replay(args, kwargs, copy=False)
            if replayed is EAGER:
                raise RuntimeError("an index argument is out of range")
            after = _state.state_arrays(found, tensors, replayed)
        except Exception as e:  # noqa: BLE001
            cause = f"the replay failed ({type(e).__name__}: {e})"
        snap.restore()
        result = eager()
        if cause is None:
            diff = _state.first_difference(after, _state.state_arrays(found, tensors, result))
            if diff is not None:
                cause = (f"the CUDA graph's {diff} differs from the eager step's (host work "
                         "that changes between calls, such as a step count on the CPU, is "
                         "frozen in a graph)")
        if cause is not None:
            self.graph = self.out = None
            self.statics, self.before, self.after, self.arrays = [], [], [], []
        return result, cause

    def moved(self) -> bool:
        """Whether an array the graph reads by address was replaced since the capture."""
        return any(t._data is not a for t, a in self.arrays)

    def replay(self, args: tuple[Any, ...], kwargs: dict[str, Any], copy: bool = True) -> Any:
        """Arguments into the static inputs, one launch, gradients back on their parameters;
        the result as copies of the static outputs (``copy``) or the static outputs."""
        found = dict(_state.leaves((args, kwargs)))
        for path, lo, hi in self.hoisted:
            t = found[path]
            if t._device.backend.out_of_range(t._data, lo, hi) is not None:
                return EAGER  # NOTE: before anything changed: eager raises its own error
        for path, s in self.statics:
            t = found[path]
            if t is not s:
                s._data[...] = t._data
        for t, g in self.before:
            cur = t._grad
            if cur is not g and cur is not None:
                # NOTE: the graph reads g's memory (a step that accumulates); after a step
                # that sets gradients to None first, a copy nothing reads
                g._data[...] = cur._data
        self.graph.replay()
        for t, a in self.after:
            t._grad = a
        return _copies(self.out) if copy else self.out


EAGER = object()  # NOTE: what ``replay`` returns when the call must run eagerly instead


def _hoist(g: Any, statics: list[tuple[tuple[Any, ...], Tensor]]) -> list[Any]:
    """The graph's deferred index checks (``cuda_graph.Capture.defer``) that read a whole static
    input (the targets of a loss, an embedding's indices): taken out of the graph's list and
    returned as (its path, lo, hi), to be made on the argument before each launch, so that a
    bad index runs the call eagerly (eager's error, nothing changed) instead of being found
    after the update."""
    hoisted, kept = [], []
    for check in g._checks:
        index = check[4]
        path = next((p for p, s in statics if _whole_view(index, s._data)), None)
        if path is None:
            kept.append(check)
        else:
            hoisted.append((path, check[2], check[3]))
    g._checks = kept
    return hoisted


def _whole_view(a: Any, base: Any) -> bool:
    """Whether ``a`` is ``base`` or a view of all of it (a reshape)."""
    if a.size != base.size:
        return False
    while a is not None:
        if a is base:
            return True
        a = getattr(a, "base", None)
    return False


class _noting_backward:  # noqa: N801  (a context manager, named as one)
    """While active, notes whether a backward ran (the value of ``with ... as ran`` is truthy
    after one did)."""

    def __enter__(self) -> _Ran:
        from ..autograd import api

        self.ran = _Ran()
        self.orig = orig = api.run_backward
        ran = self.ran

        def noting(*args: Any, **kwargs: Any) -> Any:
            ran.value = True
            return orig(*args, **kwargs)

        api.run_backward = noting
        return self.ran

    def __exit__(self, *exc: object) -> None:
        from ..autograd import api

        api.run_backward = self.orig


class _Ran:
    value = False

    def __bool__(self) -> bool:
        return self.value


def _static(t: Tensor) -> Tensor:
    """A static input: a copy of ``t`` the graph reads by address."""
    s = Tensor._make(t._data.copy(), t._device)
    s._requires_grad = t._requires_grad
    return s


def _rebuild(obj: Any, new: dict[tuple[Any, ...], Any], path: tuple[Any, ...] = ()) -> Any:
    """``obj`` with the leaves at the paths of ``new`` replaced (``_state.leaves``'s paths)."""
    if path in new:
        return new[path]
    if isinstance(obj, (tuple, list)):
        items = [_rebuild(o, new, path + (i,)) for i, o in enumerate(obj)]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    if isinstance(obj, dict):
        return {k: _rebuild(v, new, path + (k,)) for k, v in obj.items()}
    return obj


def _copies(obj: Any) -> Any:
    """``obj`` with every tensor in it copied (a device copy: the next launch overwrites the
    static outputs)."""
    if isinstance(obj, Tensor):
        return Tensor._make(obj._data.copy(), obj._device)
    if type(obj) in (tuple, list):
        return type(obj)(_copies(o) for o in obj)
    if type(obj) is dict:
        return {k: _copies(v) for k, v in obj.items()}
    return obj
