"""``Optimizer``: the base class of every optimizer, with PyTorch's parameter groups and state.

A subclass fills ``defaults`` in ``__init__`` and implements ``step``; this class owns the
bookkeeping: ``param_groups`` (dicts of ``params`` plus per-group options), ``state`` (one dict per
parameter, keyed by the tensor itself), ``zero_grad``, ``add_param_group`` and the
``state_dict``/``load_state_dict`` round trip (state keyed by integer parameter index).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

from ..autograd.grad_mode import enable_grad, no_grad
from ..tensor import Tensor

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class _RequiredParameter:
    """Singleton marking a default that every parameter group must set itself."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    """``torch.typename``: ``torch.FloatTensor`` for tensors, the class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    return type(obj).__qualname__ if type(obj).__module__ == "builtins" else \
        f"{type(obj).__module__}.{type(obj).__qualname__}"


def _scalar(x: Any) -> Any:
    """A hyper-parameter as a Python number (a 1-element tensor ``lr`` becomes its value)."""
    return x.item() if isinstance(x, Tensor) else x


def _group_lr(group: dict[str, Any]) -> Any:
    """The group's ``lr`` for its update: a number, except that a ``capturable`` group keeps a
    tensor ``lr`` a (0-d) tensor, read on its device by the update (PyTorch's ``_to_scalar``):
    a CUDA graph then replays with the value it holds at each replay, no host read."""
    lr = group["lr"]
    if not (group.get("capturable") and isinstance(lr, Tensor)):
        return _scalar(lr)
    return lr.reshape(()) if lr.dim() else lr


def _no_grad_step(step: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``step`` with grad mode off (the update is not part of any graph)."""

    @functools.wraps(step)
    def wrapper(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            return step(self, *args, **kwargs)

    return wrapper


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of tensors, or of dicts (parameter groups) each holding ``params``
            and any per-group options that override ``defaults``.
        defaults: the default value of every option (``required`` marks one that each group
            must give).

    Example:
        >>> opt = SGD([w], lr=0.1)
        >>> loss.backward(); opt.step(); opt.zero_grad()
    """

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {_typename(params)}"
            )
        self.state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups: list[Any] = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        # NOTE: as PyTorch's, groups after the first are preceded by an empty line.
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n"
            text += "".join(f"    {key}: {group[key]}\n" for key in sorted(group)
                            if key != "params")
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``params`` and optional per-group options).

        Raises:
            ValueError: a parameter is already in another group, or a required option is missing.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
        param_group["params"] = [p[1] if isinstance(p, tuple) else p
                                 for p in param_group["params"]]
        if names:
            if len(names) != len(param_group["params"]):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in param_group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(param_group["params"]) != len(set(param_group["params"])):
            import warnings

            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this "
                "will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information", UserWarning, stacklevel=3)
        seen: set[Tensor] = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors.

        Args:
            set_to_none: set ``.grad`` to None (the default) instead of filling it with zeros; a
                parameter whose grad is None is then skipped by ``step``.
        """
        for group in self.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step (subclasses implement it with ``_update``)."""
        raise NotImplementedError

    def _closure_loss(self, closure: Callable[[], Any] | None) -> Any:
        """Re-evaluate the loss with grad mode on, as PyTorch's step does before updating."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _with_grad(self, group: dict[str, Any]) -> list[tuple[Tensor, Tensor]]:
        """``(param, grad)`` for the group's parameters that have a gradient, as it is."""
        return [(p, p.grad) for p in group["params"] if p.grad is not None]

    def _grads(self, group: dict[str, Any]) -> list[tuple[Tensor, Tensor]]:
        """``(param, grad)`` for the group's parameters that have a gradient (the others are
        skipped), the gradient negated when the group has ``maximize`` set."""
        pairs = []
        for p in group["params"]:
            grad: Tensor | None = p.grad
            if grad is not None:
                pairs.append((p, -grad if group.get("maximize") else grad))
        return pairs

    # ---- (de)serialization ------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state as ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are replaced by their position across all groups, in order; the per-parameter
        state dicts are the optimizer's own (not copies), as in PyTorch.
        """
        index: dict[int, int] = {}
        start = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                index.setdefault(id(p), i)
            packed["params"] = [index[id(p)] for p in group["params"]]
            start += len(packed["params"])
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (from this or an identically shaped optimizer).

        State tensors are cast to their parameter's dtype and device, except ``step``.
        """
        groups = self.param_groups
        saved_groups = _deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        # NOTE: as PyTorch, a saved group's ``capturable`` moves its ``step`` to the parameter's
        # device (PyTorch does so for ``fused`` too; our fused path keeps ``step`` on the CPU)
        capturable = {i for g in saved_groups if g.get("capturable") for i in g["params"]}
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = _cast(id_map[k], v, on_device=k in capturable)
            else:
                state[k] = v
        for group, saved in zip(groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})


def _cast(param: Tensor, value: Any, key: Any = None, on_device: bool = False) -> Any:
    """A copy of a loaded state value with tensors moved to ``param``'s device (and float state to
    its dtype); ``step`` is kept as it is, as in PyTorch, unless ``on_device`` (a capturable
    group's): then a float32 tensor on ``param``'s device."""
    if isinstance(value, Tensor):
        if key == "step":
            if on_device:
                from ..dtypes import float32

                return value.to(dtype=float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)
    if isinstance(value, dict):
        return {k: _cast(param, v, k, on_device) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, v) for v in value)
    return value


def _deepcopy(value: Any) -> Any:
    """``copy.deepcopy`` that clones tensors (a tensor ``lr`` in a saved group, say)."""
    if isinstance(value, Tensor):
        return value.detach().clone()
    if isinstance(value, dict):
        return {k: _deepcopy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_deepcopy(v) for v in value)
    return deepcopy(value)


def _check_lr(lr: Any) -> None:
    """PyTorch's learning-rate checks: a tensor ``lr`` holds one element, and ``lr >= 0``."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_differentiable(differentiable: bool) -> None:
    """``differentiable=True`` (an update recorded in the graph) is not supported."""
    if differentiable:
        raise NotImplementedError("autograd_gpu.optim does not support differentiable=True")


def _check_fused(fused: Any, foreach: Any, differentiable: bool) -> None:
    """PyTorch's checks of ``fused=True`` (after the parameter groups are added), then the
    refusal of ``differentiable=True``."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    _check_differentiable(differentiable)


_FUSED_DEVICES = ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _check_fused_param(p: Tensor) -> None:
    """PyTorch's check of a parameter's first ``fused=True`` step: a floating-point tensor on a
    device with fused kernels."""
    if p.device.type not in _FUSED_DEVICES or not p.is_floating_point():
        raise RuntimeError(
            "`fused=True` requires all the params to be floating point Tensors of supported "
            f"devices: {_FUSED_DEVICES} but {p.dtype} and {p.device.type}")


def _step_tensor(value: float = 0.0, device: Any = None, fused: bool = False) -> Tensor:
    """A 0-d state scalar (``step``, ``mu_product``, ...), on the CPU unless ``device``, of
    PyTorch's ``_get_scalar_dtype``: float64 while the default dtype is float64 (not for a
    ``fused`` group), else float32.

    NOTE: PyTorch keeps these on the CPU (unless ``capturable``: then on the parameter's device)
    and reads them with ``item()``, so bias corrections are Python-float arithmetic on
    float32-rounded values; a capturable step computes them with 0-d tensor ops instead.
    """
    from ..creation import full, tensor
    from ..dtypes import float32, float64, get_default_dtype

    dtype = float64 if get_default_dtype() is float64 and not fused else float32
    if device is not None and device.type != "cpu":
        return full((), value, dtype=dtype, device=device)  # NOTE: a fill, no host copy
    return tensor(value, dtype=dtype, device=device)


def _check_adam_args(eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """PyTorch's checks of the Adam family's ``eps``, ``betas`` and ``weight_decay``."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _zero_state(state: dict[str, Any], p: Tensor, *names: str, capturable: bool = False,
                fused: bool = False) -> tuple[Tensor, ...]:
    """``p``'s state tensors ``names``: on first use ``step`` (0; on ``p``'s device when
    ``capturable``, else on the CPU; see ``_step_tensor`` for ``fused``) then zeros shaped as
    ``p``, in that order (PyTorch's state-dict layout); always returned in ``names``' order."""
    if not state:
        from ..creation import zeros_like

        state["step"] = _step_tensor(0.0, p.device if capturable else None, fused)
        for name in names:
            state[name] = zeros_like(p)
    return tuple(state[name] for name in names)


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]


def _check_capturable(p: Tensor, *scalars: Tensor, what: str = "params and state_steps",
                      xla: bool = True) -> None:
    """PyTorch's check of a ``capturable=True`` update: ``p`` and its state scalars (``step``,
    ...; ``what`` names them in the message) on one device type that can capture graphs
    (``xla``: whether XLA is one, as for all but Adadelta)."""
    devices = _CAPTURABLE_DEVICES if xla else _CAPTURABLE_DEVICES[:-1]
    kind = p.device.type
    if kind not in devices or any(s.device.type != kind for s in scalars):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                             f"{devices}.")


def _capture_health_check(opt: Optimizer) -> None:
    """PyTorch's ``_accelerator_graph_capture_health_check`` (Adam, AdamW, Adamax, NAdam, ASGD
    and Adadelta call it first in ``step``): with CUDA available, a step captured into a CUDA
    graph needs ``capturable=True`` in every group, and a capturable step run eagerly warns once
    per optimizer. Without CuPy (or a GPU) it does nothing, as PyTorch without an accelerator."""
    from ..backends import cuda_support

    if cuda_support._cupy() is None or not cuda_support.is_available():
        return
    from ..cuda_graphs import is_current_stream_capturing

    capturing = is_current_stream_capturing()
    every = all(group["capturable"] for group in opt.param_groups)
    if capturing and not every:
        raise RuntimeError(f"Attempting CUDA graph capture of step() for an instance of "
                           f"{type(opt).__name__} but param_groups' capturable is False.")
    if every and not capturing and not getattr(opt, "_warned_capturable_if_run_uncaptured",
                                               False):
        import warnings

        warnings.warn(
            "This instance was constructed with capturable=True or some of all the param_groups "
            "came with capturable=True, but step() is running without CUDA graph capture. If "
            "you never intend to graph-capture this instance, capturable=True can impair "
            "performance, and you should set capturable=False.", stacklevel=4)
        opt._warned_capturable_if_run_uncaptured = True  # type: ignore[attr-defined]
