"""``functional_call`` and ``stack_module_state``: a module as a function of its state.

``functional_call(model, params, x)`` runs ``model(x)`` with its parameters and buffers swapped,
for this one call, for the tensors in ``params`` (by dotted name, as in ``state_dict``); the
originals come back afterwards, even when the call raises. Gradients then flow to the given
tensors, so ``grad(lambda p: loss(functional_call(model, p, x)))(params)`` differentiates a
model with no ``.grad`` bookkeeping, and ``vmap`` over it gives per-sample gradients or, with
``stack_module_state``, runs an ensemble of models at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Iterator

from ..nn.module import Module
from ..tensor import Tensor

_MISSING: Any = object()  # the module had no attribute of that name


def functional_call(module: Module, parameter_and_buffer_dicts: Any, args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call ``module`` with its parameters and buffers replaced by the given tensors.

    Names are dotted paths into submodules (``'layer1.weight'``); names not given keep the
    module's own tensors. If the module assigns a new tensor to a buffer during the call (or
    updates one in place), the change lands in the given dict (or tensor), not in the module.

    Args:
        module: the module to call.
        parameter_and_buffer_dicts: a dict ``{name: tensor}``, or a tuple/list of dicts with
            distinct keys (e.g. ``(params, buffers)``).
        args: the positional argument(s) of the call; a non-tuple is one argument.
        kwargs: the keyword arguments of the call.
        tie_weights: tensors the module shares under several names (tied weights) stay tied:
            a value given for one name is used for all of them (different values for one tied
            tensor are an error). With False, each name is replaced on its own.
        strict: the given names must be exactly the module's parameters and buffers.

    Returns:
        Whatever ``module(*args, **kwargs)`` returns.

    Example:
        >>> model = Linear(3, 1)
        >>> params = {k: v.detach() for k, v in model.named_parameters()}
        >>> grad(lambda p, x: functional_call(model, p, x).sum())(params, x)
        {'weight': tensor(...), 'bias': tensor(...)}
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        state = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        state = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize(module, state, tie_weights, strict):
        return module(*args, **kwargs)


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and the buffers of ``models`` (same class), stacked along a new dim 0.

    For ensembling with ``vmap``: ``vmap(lambda p, b, x: functional_call(models[0], (p, b), x),
    in_dims=(0, 0, None))(params, buffers, x)`` runs every model on ``x`` at once. The stacked
    parameters are new leaves (they require grad when the originals do), unrelated to the
    models' own, so an optimizer can train them directly.

    Returns:
        ``(params, buffers)``: dicts by name, each tensor ``(len(models), *shape)``.
    """
    from ..functions import stack

    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def stacked(tables: list[dict[str, Tensor]]) -> dict[str, Tensor]:
        out = {}
        for name in tables[0]:
            ts = [t[name] for t in tables]
            grads = {t.requires_grad for t in ts}
            if len(grads) != 1:
                raise RuntimeError(f"Expected {name} from each model to have the same "
                                   ".requires_grad")
            s = stack(ts).detach()
            out[name] = s.requires_grad_() if grads.pop() else s
        return out

    params = stacked([dict(m.named_parameters()) for m in models])
    buffers = stacked([dict(m.named_buffers()) for m in models])
    return params, buffers


# ---- swapping tensors in and out ---------------------------------------------------------------

@contextlib.contextmanager
def _reparametrize(module: Module, state: dict[str, Any], tie_weights: bool,
                   strict: bool) -> Iterator[None]:
    new = _untie(module, state) if tie_weights else state
    if strict:
        valid = set(_all_names(module))
        unexpected = sorted(set(new) - valid)
        missing = sorted(valid - set(new))
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(errors))
    originals = _swap_all(module, new)
    try:
        yield
    finally:
        current = _swap_all(module, originals)
        # NOTE: a module that assigns a new buffer during the call (``self.n = self.n + 1``)
        # leaves it in the caller's dict, as in PyTorch.
        state.update({k: current[k] for k in state if k in current})


def _all_names(module: Module) -> dict[str, Any]:
    """Every parameter and buffer by name, tied ones under each of their names."""
    named: dict[str, Any] = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module: Module, state: dict[str, Any]) -> dict[str, Any]:
    """``state`` plus, for each given name of a tied tensor, its other names (same value)."""
    groups: dict[int, set[str]] = {}
    for name, t in _all_names(module).items():
        groups.setdefault(id(t), set()).add(name)
    tied = {n: g for g in groups.values() if len(g) > 1 for n in g}
    given = [n for n in state if n in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and len(
                {id(state[n]) for n in names if n in state}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(state)
    for name in given:
        for other in tied[name]:
            out[other] = state[name]
    return out


def _swap_all(module: Module, values: dict[str, Any]) -> dict[str, Any]:
    """Put each of ``values`` in place; returns what was there (``_MISSING`` if nothing).
    All or nothing: on an error, the swaps made so far are undone."""
    old: dict[str, Any] = {}
    memo: dict[str, Module] = {}
    try:
        for name, value in values.items():
            old[name] = _swap(_submodule(module, name.rpartition(".")[0], memo),
                              name.rpartition(".")[2], value)
    except Exception:
        for name, value in old.items():
            _swap(_submodule(module, name.rpartition(".")[0], memo), name.rpartition(".")[2],
                  value)
        raise
    return old


def _submodule(module: Module, path: str, memo: dict[str, Module]) -> Module:
    if not path:
        return module
    if path in memo:
        return memo[path]
    prefix, _, attr = path.rpartition(".")
    parent = _submodule(module, prefix, memo)
    try:
        sub = getattr(parent, attr)
    except AttributeError:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from None
    if not isinstance(sub, Module):
        raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
    memo[path] = sub
    return sub


def _swap(module: Module, name: str, value: Any) -> Any:
    """Replace tensor attribute ``name`` of ``module`` (not its submodules) by ``value``."""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    d = module.__dict__
    for table in ("_parameters", "_buffers"):
        if name in d[table]:
            old = d[table][name]
            if value is _MISSING:
                del d[table][name]
            else:
                # NOTE: straight into the table: a plain tensor may stand in for a Parameter.
                d[table][name] = value
            return old
    old = getattr(module, name, _MISSING)
    if old is not _MISSING and old is not None and not isinstance(old, Tensor):
        raise TypeError(f"attribute `{name}`: {old} is not an instance of torch.Tensor")
    if value is not _MISSING:
        setattr(module, name, value)
    elif old is not _MISSING:
        delattr(module, name)
    return old
