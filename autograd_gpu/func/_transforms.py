"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian``.

Each transform differentiates through fresh aliases of its inputs (a view node, or a new leaf
for inputs that do not require grad), so nested transforms never confuse each other's
perturbations: ``autograd.grad`` w.r.t. an alias counts only the paths through it. Results
stay on the graph (``create_graph``) only when something outside can still differentiate them:
an enclosing transform, or an input that requires grad.

``jvp`` is forward mode by double-vjp: ``g(u) = vjp(f, x)(u)`` is linear in ``u``, so the vjp
of ``g`` at any ``u`` with cotangent ``v`` is exactly ``J v`` (no finite differences; two
backward passes instead of a forward-mode pass). Inside ``vmap``, aliases are batched at every
active level first, so gradients w.r.t. unbatched arguments are per-sample too.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..autograd import api as _api
from ..autograd.grad_mode import STATE, enable_grad
from ..tensor import Tensor
from . import _pytree as tree
from ._batched import LEVELS, chain, lift, map_physical
from ._vmap import vmap


# ---- shared machinery --------------------------------------------------------------------------

def _alias(t: Any) -> Tensor:
    if not isinstance(t, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(t)}")
    return map_physical(lift(t), _alias_plain)


def _alias_plain(p: Tensor) -> Tensor:
    if p.requires_grad:
        return p.view(p.shape)
    a = p.detach()
    a.requires_grad_()
    return a


class _Transform:
    """Counts the transforms in progress (``STATE.func_depth``) and keeps grad mode on inside
    them, as ``torch.func`` does; remembers whether the caller can differentiate results."""

    def __init__(self, inputs: list[Any]) -> None:
        self.grad_mode = STATE.grad_enabled
        self.outer = self.grad_mode and (
            STATE.func_depth > 0 or any(isinstance(t, Tensor) and t.requires_grad for t in inputs))

    def see(self, outputs: list[Any], aliases: list[Tensor]) -> None:
        """After ``func`` ran: results must stay differentiable also when ``func`` closed over
        a tensor that requires grad (the graph reaches a leaf that is not one of ``aliases``)."""
        if self.outer or not self.grad_mode:
            return
        own = {id(chain(a)[0]) for a in aliases}
        stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
        seen: set[int] = set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node._is_accumulator:
                if id(node.variable) not in own:
                    self.outer = True
                    return
                continue
            stack.extend(n for n, _ in node.next_functions if n is not None)

    def __enter__(self) -> _Transform:
        STATE.func_depth += 1
        self._grad = enable_grad()
        self._grad.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._grad.__exit__(*exc)
        STATE.func_depth -= 1

    def done(self, x: Any) -> Any:
        """``x`` (a structure of tensors) as handed back to the caller."""
        if self.outer:
            return x
        flat, spec = tree.flatten(x)
        return tree.unflatten([t.detach() if isinstance(t, Tensor) else t for t in flat], spec)


def _check_aux(aux: Any) -> None:
    for a in tree.flatten(aux)[0]:
        if not isinstance(a, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")


def _grads(outputs: list[Tensor], inputs: list[Tensor], cotangents: list[Any] | None,
           create_graph: bool, retain_graph: bool | None = None) -> list[Tensor]:
    """``autograd.grad`` with unused inputs (and outputs that need no grad) giving zeros."""
    pairs = [(o, None if cotangents is None else c) for i, (o, c) in
             enumerate(zip(outputs, cotangents or [None] * len(outputs))) if o.requires_grad]
    result: list[Any] = [None] * len(inputs)
    if pairs:
        outs, cots = zip(*pairs)
        result = list(_api.grad(outs, inputs, grad_outputs=None if cotangents is None else cots,
                                retain_graph=retain_graph, create_graph=create_graph,
                                allow_unused=True))
    from ..creation import zeros_like

    return [zeros_like(t) if r is None else r for t, r in zip(inputs, result)]


def _argnums(argnums: Any, n: int) -> tuple[int, ...] | int:
    def one(a: Any) -> int:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if 0 <= a < n:
            return a
        if -n <= a < 0:
            return a + n
        raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")

    if isinstance(argnums, int) and not isinstance(argnums, bool):
        return one(argnums)
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(one(a) for a in argnums)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _select(args: tuple[Any, ...], argnums: tuple[int, ...] | int) -> Any:
    return args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)


def _replace(args: tuple[Any, ...], argnums: tuple[int, ...] | int, new: Any) -> tuple[Any, ...]:
    if isinstance(argnums, int):
        return args[:argnums] + (new,) + args[argnums + 1:]
    out = list(args)
    for a, v in zip(argnums, new):
        out[a] = v
    return tuple(out)


# ---- grad --------------------------------------------------------------------------------------

def grad_and_value(func: Callable[..., Any], argnums: Any = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """Like ``grad``, but the function returns ``(gradients, value)`` (``(gradients, (value,
    aux))`` with ``has_aux``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        diff = _select(args, nums)
        flat, spec = tree.flatten(diff)
        with _Transform(flat) as tr:
            aliases = [_alias(t) for t in flat]
            output = func(*_replace(args, nums, tree.unflatten(aliases, spec)), **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(output, tuple) and len(output) == 2):
                    raise RuntimeError(
                        "grad_and_value(f)(*args): output of function f should be a tuple: "
                        "(output, aux) if has_aux is True")
                output, aux = output
                _check_aux(aux)
            if not isinstance(output, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(output)}")
            if output.dim() != 0:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                    f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                    "APIs instead?")
            tr.see([output], aliases)
            grads = _grads([output], aliases, None, create_graph=tr.outer)
        result = tr.done(tree.unflatten(grads, spec))
        value = tr.done(output)
        if has_aux:
            return result, (value, tr.done(aux))
        return result, value

    return wrapper


def grad(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function w.r.t. its ``argnums`` argument(s).

    ``grad(f)(x)`` is ``autograd.grad(f(x), x)`` as a function: it composes with itself
    (``grad(grad(f))``), with ``vmap`` (per-sample gradients: ``vmap(grad(f))``) and the other
    transforms.

    Args:
        func: returns a 0-dim tensor (or ``(tensor, aux)`` with ``has_aux``).
        argnums: which positional argument(s) to differentiate: an int or a tuple of ints.
            Each may be a tensor or a container (tuple, list, dict) of tensors.
        has_aux: ``func`` also returns auxiliary data, handed back untouched.

    Returns:
        A function returning gradients shaped like the chosen arguments (and aux).

    Example:
        >>> grad(lambda x: (x ** 3).sum())(tensor([1.0, 2.0]))
        tensor([ 3., 12.])
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = grad_and_value(func, argnums, has_aux)(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---- vjp ---------------------------------------------------------------------------------------

def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``func(*primals)`` and a function that maps cotangents (shaped like the output) to
    vector-Jacobian products (one per primal).

    Example:
        >>> out, vjp_fn = vjp(torch.sin, x)
        >>> vjp_fn(ones_like(out))  # (cos(x),)
    """
    flat, spec = tree.flatten(primals)
    with _Transform(flat) as tr:
        aliases = [_alias(t) for t in flat]
        output = func(*tree.unflatten(aliases, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError("vjp(f, *primals): output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = output
            _check_aux(aux)
        outs, out_spec = tree.flatten(output)
        _check_outputs(outs, "vjp(f, *primals)")
        for o in outs:
            if not o.dtype.is_floating_point:
                raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
        tr.see(outs, aliases)
    outer = tr.outer

    def vjp_fn(cotangents: Any, retain_graph: bool = True,
               create_graph: bool | None = None) -> tuple[Any, ...]:
        cots, cot_spec = tree.flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {tree.describe(cot_spec)}, primal output: "
                f"{tree.describe(out_spec)}")
        if create_graph is None:
            create_graph = STATE.grad_enabled and (
                outer or STATE.func_depth > 0 or any(c.requires_grad for c in cots))
        with enable_grad():
            grads = _grads(outs, aliases, cots, create_graph=create_graph,
                           retain_graph=retain_graph)
        if not create_graph:
            grads = [g.detach() for g in grads]
        return tuple(tree.unflatten(grads, spec))

    out = tr.done(output)
    if has_aux:
        return out, vjp_fn, tr.done(aux)
    return out, vjp_fn


def _check_outputs(outs: list[Any], api: str) -> None:
    if not outs:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           "(got output = ())")
    for o in outs:
        if not isinstance(o, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(o)}")


# ---- jvp (forward mode by double-vjp) ---------------------------------------------------------

def jvp(func: Callable[..., Any], primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> Any:
    """``(func(*primals), J @ tangents)``: the Jacobian-vector product (forward mode).

    Computed exactly by double-vjp (see the module notes): one forward, two backward passes.

    Args:
        func: takes ``*primals``, returns a tensor or a structure of tensors.
        primals: a tuple of arguments (tensors or containers of tensors).
        tangents: shaped like ``primals``.

    Returns:
        ``(output, jvp_out)`` (and aux with ``has_aux``).
    """
    api = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat, spec = tree.flatten(primals)
    flat_t, t_spec = tree.flatten(tangents)
    if spec != t_spec:
        raise RuntimeError(
            f"{api}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {tree.describe(spec)} and tangents with structure "
            f"{tree.describe(t_spec)}")
    if not flat:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    for p, t in zip(flat, flat_t):
        if not isinstance(p, Tensor) or not isinstance(t, Tensor):
            raise RuntimeError(f"{api}: Expected primals and tangents to only contain Tensors, "
                               f"got {type(p if not isinstance(p, Tensor) else t)}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is of "
                               f"size {list(p.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")
    with _Transform(flat + flat_t) as tr:
        aliases = [_alias(t) for t in flat]
        output = func(*tree.unflatten(aliases, spec))
        aux = None
        if has_aux:
            if not (isinstance(output, tuple) and len(output) == 2):
                raise RuntimeError(f"{api}: output of function f should be a tuple: "
                                   "(output, aux) if has_aux is True")
            output, aux = output
            _check_aux(aux)
        outs, out_spec = tree.flatten(output)
        _check_outputs(outs, api)
        tr.see(outs, aliases)
        # NOTE: u is a dummy cotangent; g(u) = u^T J is linear in u, so d<g(u), t>/du = J t.
        us = [map_physical(o, _dummy_cotangent) for o in outs]
        gs = _grads(outs, aliases, us, create_graph=True)
        pairs = [(g, t) for g, t in zip(gs, flat_t) if g.requires_grad]
        if pairs:
            g_used, t_used = zip(*pairs)
            tangents_out = _grads(list(g_used), us, list(t_used), create_graph=tr.outer)
        else:
            from ..creation import zeros_like

            tangents_out = [zeros_like(o) for o in outs]
    result = (tr.done(output), tr.done(tree.unflatten(tangents_out, out_spec)))
    return result + (tr.done(aux),) if has_aux else result


def _dummy_cotangent(p: Tensor) -> Tensor:
    from ..creation import zeros

    return zeros(tuple(p.shape), dtype=p.dtype, device=p.device, requires_grad=True)


# ---- Jacobians ---------------------------------------------------------------------------------

def _pieces(t: Tensor, sizes: list[int], dim: int) -> list[Tensor]:
    """``t`` cut along ``dim`` into ``sizes``.

    NOTE: by ``split`` (whose backward is a ``cat``), not by slicing: an outer transform
    differentiates these cuts under ``vmap``, and one piece needs no cut at all.
    """
    return [t] if len(sizes) == 1 else list(t.split(sizes, dim))


def _basis(flat: list[Tensor]) -> list[Tensor]:
    """Rows of the identity over all of ``flat``'s elements, split per tensor:
    tensor ``i`` gets ``(total, *flat[i].shape)``."""
    from ..creation import eye

    sizes = [t.numel() for t in flat]
    total = sum(sizes)
    e = eye(total, dtype=flat[0].dtype, device=flat[0].device)
    return [p.reshape(total, *t.shape) for p, t in zip(_pieces(e, sizes, 1), flat)]


def _split_rows(rows: Tensor, flat: list[Tensor], lead: tuple[int, ...]) -> list[Tensor]:
    """``rows`` (``total`` first, then ``lead``) cut per tensor of ``flat`` and reshaped to
    ``(*lead, *flat[i].shape)``: ``flat``'s dims last."""
    out = []
    nd = len(lead)
    for block, t in zip(_pieces(rows, [t.numel() for t in flat], 0), flat):  # (n, *lead)
        block = block.movedim(0, nd) if nd else block  # (*lead, n)
        out.append(block.reshape(*lead, *t.shape))
    return out


def jacrev(func: Callable[..., Any], argnums: Any = 0, *, has_aux: bool = False,
           chunk_size: int | None = None, _preallocate_and_copy: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``func`` w.r.t. argument(s) ``argnums`` by reverse mode: one vjp per
    output element, batched with ``vmap`` (``chunk_size`` rows at a time).

    Returns ``J`` with shape ``(*output.shape, *input.shape)`` (nested like the outputs, then
    like ``argnums``).

    Example:
        >>> jacrev(torch.sin)(x)  # diag(cos(x))
    """
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        diff = _select(args, nums)

        def f(*d: Any) -> Any:
            return func(*_replace(args, nums, d[0] if isinstance(nums, int) else d), **kwargs)

        primals = (diff,) if isinstance(nums, int) else diff
        res = vjp(f, *primals, has_aux=has_aux)
        output, vjp_fn = res[0], res[1]
        outs, out_spec = tree.flatten(output)
        flat_in, in_spec = tree.flatten(primals)
        basis = _basis(outs)
        rows = vmap(lambda *cots: vjp_fn(tree.unflatten(list(cots), out_spec)),
                    chunk_size=chunk_size)(*basis)
        rows_flat = tree.flatten(rows)[0]  # per input: (total_out, *in.shape)
        per_out: list[list[Tensor]] = [[] for _ in outs]
        for r, x in zip(rows_flat, flat_in):
            for j, (piece, o) in enumerate(zip(_pieces(r, [o.numel() for o in outs], 0), outs)):
                per_out[j].append(piece.reshape(*o.shape, *x.shape))
        jac = [tree.unflatten(p, in_spec) for p in per_out]
        jac = [j[0] if isinstance(nums, int) else j for j in jac]
        result = tree.unflatten(jac, out_spec)
        return (result, res[2]) if has_aux else result

    return wrapper


def jacfwd(func: Callable[..., Any], argnums: Any = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian of ``func`` by forward mode: one jvp per input element, batched with
    ``vmap``. Same result and layout as ``jacrev``; cheaper when inputs are few."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args))
        diff = _select(args, nums)
        primals = (diff,) if isinstance(nums, int) else diff
        flat_in, in_spec = tree.flatten(primals)
        basis = _basis(flat_in)
        aux_box: list[Any] = []

        def f(*d: Any) -> Any:
            return func(*_replace(args, nums, d[0] if isinstance(nums, int) else d), **kwargs)

        def push(*tangent_flat: Any) -> Any:
            level = LEVELS.stack[-1][0]
            LEVELS.no_lift.add(level)  # NOTE: the basis level: f never sees it but via tangents
            try:
                res = jvp(f, primals, tree.unflatten(list(tangent_flat), in_spec),
                          has_aux=has_aux)
            finally:
                LEVELS.no_lift.discard(level)
            if has_aux:
                aux_box.append(res[2])
            return res[0], res[1]

        outputs, cols = vmap(push, out_dims=(None, 0), randomness=randomness)(*basis)
        outs, out_spec = tree.flatten(outputs)
        cols_flat = tree.flatten(cols)[0]  # per output: (total_in, *out.shape)
        jac = []
        for c, o in zip(cols_flat, outs):
            parts = _split_rows(c, flat_in, tuple(o.shape))
            p = tree.unflatten(parts, in_spec)
            jac.append(p[0] if isinstance(nums, int) else p)
        result = tree.unflatten(jac, out_spec)
        return (result, aux_box[0]) if has_aux else result

    return wrapper


def hessian(func: Callable[..., Any], argnums: Any = 0) -> Callable[..., Any]:
    """The Hessian of a scalar function: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)
