"""The backward engine: one walk over the graph, without recursion.

1. Count, for every node reachable from the roots, how many edges lead into it.
2. Run nodes from a heap ordered by creation (newest first, as PyTorch), each once its count
   reaches zero, i.e. after all its consumers; gradients arriving along several edges add up.
3. Leaves' ``AccumulateGrad`` adds into ``.grad`` (``backward``) or the gradient is captured and
   returned (``grad``). Saved tensors are released after a node runs unless ``retain_graph``.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections import deque
from typing import Any, Sequence

from . import anomaly
from .hooks import check_grad, check_grads
from .grad_mode import STATE
from .accumulate import AccumulateGrad
from .node import Node


def run_backward(
    roots: Sequence[tuple[Node, int, Any]],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    allow_unused: bool = False,
    accumulate: bool = True,
) -> list[Any] | None:
    """Propagate ``(node, output_nr, grad)`` roots backward.

    With ``accumulate`` gradients land in leaves' ``.grad`` (only those of ``inputs`` when given);
    without it the gradients of ``inputs`` are returned in order (``autograd.grad``).
    """
    deps: dict[Node, int] = {}
    stack = []
    for node, _, _ in roots:
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)

    captures: dict[tuple[Node, int], int] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            key = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (t._grad_accumulator(), 0)
            captures.setdefault(key, i)
        targets = {node for node, _ in captures}
        found = _needed_nodes(deps, targets, roots)
        needed: set[Node] | None = found
        wanted: set[Node] | None = found | targets
    else:
        needed = wanted = None
    results: list[Any] = [None] * (len(inputs) if inputs is not None else 0)

    buffers: dict[Node, dict[int, Any]] = {}
    heap: list[tuple[int, int, Node]] = []
    # NOTE: PyTorch runs the ready node created last, and an AccumulateGrad as soon as it is
    # ready; ties run in the order they became ready (e.g. a mul's leaves in next_functions
    # order). Ready accumulators wait in a FIFO that is served before the heap.
    acc_ready: deque[Node] = deque()
    tick = itertools.count()
    for node, nr, grad in roots:
        _add(buffers.setdefault(node, {}), nr, grad, create_graph)
    for node in buffers:
        if deps[node] == 0:
            if node._is_accumulator:
                acc_ready.append(node)
            else:
                heapq.heappush(heap, (-node._seq, next(tick), node))

    prev_mode = STATE.grad_enabled
    STATE.grad_enabled = create_graph
    watch = anomaly.STATE.enabled
    push, pop = heapq.heappush, heapq.heappop
    try:
        while heap or acc_ready:
            node = acc_ready.popleft() if acc_ready else pop(heap)[2]
            grads = buffers.pop(node, None)
            if node._is_accumulator:
                if grads is not None:
                    if node.variable._hooks or node._prehooks:  # type: ignore[attr-defined]
                        grads = _run_prehooks(node, grads)
                    if captures:
                        at = captures.get((node, 0))
                        if at is not None and not accumulate:
                            results[at] = grads.get(0)
                    if needed is None or node in needed:
                        _run_accumulate(node, grads, create_graph, accumulate, inputs, captures)
                continue
            if grads is not None:
                if node._tensor_prehooks or node._retain_grad or node._prehooks:
                    grads = _run_prehooks(node, grads)
                if captures:
                    for nr, g in grads.items():
                        at = captures.get((node, nr))
                        if at is None:
                            continue
                        if not accumulate:
                            results[at] = g
                        else:
                            accumulate_into(inputs[at], g, create_graph)  # type: ignore[index]
                # NOTE: a prehook may have dropped every gradient: only a custom Function
                # still runs then (on materialized zeros), as in PyTorch.
                if (grads or node._is_custom) and (needed is None or node in needed):
                    out = _run_node(node, grads, watch)
                else:
                    out = None
                if not retain_graph and node._saved:
                    node._release()
            else:
                out = None
            k = 0
            for nxt, nr in node.next_functions:
                if nxt is not None:
                    g = out[k] if out is not None else None
                    if g is not None and (wanted is None or nxt in wanted):
                        buf = buffers.get(nxt)
                        if buf is None:
                            buffers[nxt] = {nr: g}
                        else:
                            _add(buf, nr, g, create_graph)
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if left == 0:
                        if nxt._is_accumulator:
                            acc_ready.append(nxt)
                        else:
                            push(heap, (-nxt._seq, next(tick), nxt))
                k += 1
    finally:
        STATE.grad_enabled = prev_mode

    if inputs is None or accumulate:
        return None
    for i, r in enumerate(results):
        if r is None and not allow_unused:
            raise RuntimeError(
                f"The differentiated Tensor at index {i} appears to not have been used in the graph. "
                "Set allow_unused=True if this is the desired behavior."
            )
    return results


def _add(buf: dict[int, Any], nr: int, grad: Any, create_graph: bool) -> None:
    old = buf.get(nr)
    if old is None:
        buf[nr] = grad
    else:
        new = old + grad
        new._owned = True
        buf[nr] = new


def _needed_nodes(deps: dict[Node, int], targets: set[Node], roots: Any) -> set[Node]:
    """Nodes from which a target lies strictly below, and the leaf targets: only they need to run
    when ``inputs`` are given (a non-leaf target's gradient is taken before its node runs)."""
    parents: dict[Node, list[Node]] = {}
    for node in deps:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed: set[Node] = {t for t in targets if isinstance(t, AccumulateGrad)}
    stack = [p for t in targets if t in deps for p in parents.get(t, ())]
    while stack:
        node = stack.pop()
        if node in needed:
            continue
        needed.add(node)
        stack.extend(parents.get(node, ()))
    return needed


_NON_LEAF_LOCK = threading.Lock()


def accumulate_into(t: Any, grad: Any, create_graph: bool) -> None:
    """``t.grad += grad`` for a non-leaf (retain_grad, ``backward(inputs=...)``); the stored
    gradient never aliases one the graph still passes on (under ``create_graph`` it is a clone
    that records CloneBackward0, as PyTorch's). Thread-safe, as leaves are."""
    with _NON_LEAF_LOCK:
        old = t._grad
        if old is None:
            # NOTE: a C-contiguous copy, as PyTorch's retain_grad (clone(contiguous_format))
            g = grad if create_graph else grad.detach()
            c = g.contiguous()
            t._grad = c if c is not g else g.clone()
        elif create_graph:
            t._grad = old + grad
        else:
            t._grad = (old + grad).detach()


def _run_prehooks(node: Node, grads: dict[int, Any]) -> dict[int, Any]:
    if node._tensor_prehooks:
        for nr, hooks in node._tensor_prehooks.items():
            for hook in tuple(hooks.values()):
                g = grads.get(nr)
                if g is None:
                    continue
                g._owned = False  # NOTE: user code may keep it, so it is never stolen now
                new = hook(g)
                if new is not None:
                    check_grad(g, new, hook)
                    grads[nr] = new
    if node._retain_grad:
        for nr, ref in node._retain_grad.items():
            t = ref()
            g = grads.get(nr)
            if t is not None and g is not None:
                accumulate_into(t, g, STATE.grad_enabled)
    if node._prehooks:
        n = max(node._n_outputs, max(grads) + 1 if grads else 0)
        for g in grads.values():
            g._owned = False
        for hook in tuple(node._prehooks.values()):
            old = tuple([grads.get(i) for i in range(n)])
            new = hook(old)
            if new is not None:
                check_grads(old, new, hook)
                grads = {i: g for i, g in enumerate(new) if g is not None}
    return grads


def _run_accumulate(node: Any, grads: dict[int, Any], create_graph: bool, accumulate: bool,
                    inputs: Any, captures: Any) -> None:
    g = grads.get(0)
    if g is not None and accumulate and (inputs is None or (node, 0) in captures):
        # NOTE: a gradient this walk made and nobody else holds is stolen, not copied; the
        # flag is cleared so a second leaf receiving the same tensor copies it.
        node.accumulate(g, g._owned, create_graph)
        g._owned = False
        if node._hooks:
            # NOTE: an accumulator has no gradients to pass on: its hooks see () and may only
            # return None or (), as in PyTorch.
            for hook in tuple(node._hooks.values()):
                new = hook((), (g,))
                if new is not None:
                    check_grads((), new, hook)


def _run_node(node: Node, grads: dict[int, Any], watch: bool) -> tuple[Any, ...]:
    if len(grads) == 1 and 0 in grads:
        args = [grads[0]]
    else:
        args = [grads.get(i) for i in range(max(grads) + 1 if grads else 0)]
    try:
        out = node._call_backward(args)
    except Exception:
        if watch:
            anomaly.warn_forward_stack(node)
        raise
    if watch:
        try:
            anomaly.check_backward(node, out)
        except RuntimeError:
            anomaly.warn_forward_stack(node)
            raise
    if node._hooks:
        for g in out:
            if g is not None:
                g._owned = False  # NOTE: hooks saw it: user code may keep it
        for hook in tuple(node._hooks.values()):
            old = tuple(out)
            new = hook(old, tuple(args))
            if new is not None:
                out = check_grads(old, new, hook)
        return out
    if not node._is_custom:
        for g in out:
            # NOTE: a gradient passed through unchanged keeps its flag: it may be the user's.
            if g is not None and not g._owned:
                for a in args:
                    if g is a:
                        break
                else:
                    g._owned = True
    return out
