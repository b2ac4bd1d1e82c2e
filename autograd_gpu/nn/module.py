"""``Module``: the base class of layers and models.

Assigning a ``Parameter``, a ``Module`` or (through ``register_buffer``) a tensor as an attribute
registers it, in order, in ``_parameters``, ``_modules`` or ``_buffers``; ``parameters()``,
``state_dict()``, ``to()`` and ``repr`` walk those tables recursively, as in PyTorch.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..autograd.node import HookDict, RemovableHandle, add_hook
from ..device import as_device
from ..tensor import Tensor
from . import _state_dict
from ._hooks import BackwardHook
from ._state_dict import _IncompatibleKeys
from .parameter import Parameter


def typename(obj: Any) -> str:
    """PyTorch's ``torch.typename``: ``'torch.FloatTensor'`` for tensors, else the class path."""
    if isinstance(obj, Tensor):
        return obj.type()  # type: ignore[no-any-return]
    cls = type(obj)
    if cls.__module__ in ("builtins", "__builtin__"):
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of ``text`` but the first by ``spaces``."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _add_hook(hooks: dict[int, Any], fn: Callable[..., Any], prepend: bool) -> RemovableHandle:
    handle = add_hook(hooks, fn)
    if prepend:
        others = [(k, v) for k, v in hooks.items() if k != handle.id]
        hooks.clear()
        hooks[handle.id] = fn
        hooks.update(others)
    return handle


class Module:
    """Base class for all neural network modules; subclasses define ``forward``.

    Example:
        >>> class Net(Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc = Linear(2, 1)
        ...     def forward(self, x):
        ...         return self.fc(x)
        >>> [name for name, _ in Net().named_parameters()]
        ['fc.weight', 'fc.bias']
    """

    training: bool
    _version = 1
    call_super_init = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        init = object.__setattr__
        init(self, "training", True)
        init(self, "_parameters", {})
        init(self, "_buffers", {})
        init(self, "_non_persistent_buffers_set", set())
        init(self, "_modules", {})
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks",
                     "_backward_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks"):
            init(self, name, HookDict())
        init(self, "_forward_pre_hooks_with_kwargs", {})
        init(self, "_forward_hooks_with_kwargs", {})

    def forward(self, *input: Any) -> Any:  # noqa: A002
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- registration -------------------------------------------------------------------------
    def _check_name(self, kind: str, name: Any, table: str) -> None:
        if table not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in self.__dict__[table]:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register ``tensor`` as buffer ``name``: saved in ``state_dict`` (unless not
        ``persistent``) and moved by ``to()``, but not a parameter."""
        self._check_name("buffer", name, "_buffers")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register ``param`` (a ``Parameter`` or None) as parameter ``name``."""
        self._check_name("parameter", name, "_parameters")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register ``module`` as child ``name`` (attribute assignment does the same)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = module

    register_module = add_module

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            d["_modules"][name] = value
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            d["_modules"][name] = value
        elif name in d.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop ``name`` from the plain attributes and every table but ``keep``."""
        d = self.__dict__
        d.pop(name, None)
        for table in ("_parameters", "_buffers", "_modules"):
            if table != keep:
                d[table].pop(name, None)
        d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if name in d.get(table, ()):
                del d[table][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = [*dir(type(self)), *self.__dict__, *self._parameters, *self._modules,
                *self._buffers]
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ---- traversal ----------------------------------------------------------------------------
    def _named_members(self, get: Callable[[Module], Any], prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for mod_prefix, module in modules:
            for name, value in get(module):
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (mod_prefix + "." if mod_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """``(name, parameter)`` pairs, this module's first, then each child's (dotted names);
        a parameter shared by several modules is listed once unless ``remove_duplicate=False``."""
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                   remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters, in ``named_parameters`` order."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """``(name, buffer)`` pairs, in registration order, recursively."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                   remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """``(name, child)`` for each direct child module (each module once)."""
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set[Any] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """``(name, module)`` for this module (name ``prefix``) and all descendants, depth
        first, each module once unless ``remove_duplicate=False``."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, (prefix + "." if prefix else "") + name,
                                                remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path ``target`` (``''``: this module)."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call ``fn`` on every child (recursively), then on this module; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients --------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (``self.training``) here and in every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``: dropout and similar layers switch to inference behaviour."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # ---- device and dtype -----------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Replace every parameter's and buffer's value by ``fn`` of it, in place: parameters
        stay the same objects (optimizers that hold them keep working)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                param.data = fn(param)
                grad = param._grad
                if grad is not None:
                    grad.data = fn(grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``. A dtype applies to floating-point tensors only."""
        device, dtype = _parse_to(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got "
                            f"desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            return t.to(device=device, dtype=dtype if t.is_floating_point() else None)

        return self._apply(convert)

    def cuda(self, device: Any = None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        return self._apply(lambda t: t.cpu())

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Give parameters and buffers new, uninitialised storage on ``device`` (their values
        are not copied): how a model built on the ``meta`` device gets real memory."""
        from ..creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    # ---- state dict ---------------------------------------------------------------------------
    def state_dict(self, *, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """An ``OrderedDict`` of parameters then persistent buffers, this module's first, then
        each child's under ``'child.'``; values are detached unless ``keep_vars``."""
        return _state_dict.save(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict``'s tensors into the parameters and buffers (in place, without
        recording gradients). Size mismatches always raise; with ``strict`` so do missing and
        unexpected keys. Returns the missing and unexpected keys."""
        return _state_dict.load(self, state_dict, strict, assign)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict`` has
        gathered this module's entries and its children's."""
        return _add_hook(self._state_dict_hooks, hook, False)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """``hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)`` runs before this module loads its entries; it may rewrite ``state_dict``
        (old checkpoint layouts)."""
        return _add_hook(self._load_state_dict_pre_hooks, hook, False)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, assign: bool,
                              missing: list[str], unexpected: list[str],
                              errors: list[str]) -> None:
        """Load this module's own entries (no children); subclasses may override."""
        _state_dict.load_own(self, state_dict, prefix, assign, missing, unexpected, errors)

    # ---- hooks and calling --------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` runs before ``forward``; a non-None result replaces ``args``
        (a non-tuple is wrapped in one). With ``with_kwargs``: ``hook(module, args, kwargs)``
        returning ``(args, kwargs)`` or None."""
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` runs after ``forward``; a non-None result replaces the
        output. With ``with_kwargs``: ``hook(module, args, kwargs, output)``."""
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients w.r.t. the module's outputs are
        known; it may return a replacement ``grad_output`` tuple."""
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients w.r.t. the module's
        positional inputs are computed (``None`` for inputs that are not tensors requiring
        grad); it may return a replacement ``grad_input`` tuple."""
        return _add_hook(self._backward_hooks, hook, prepend)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks
                or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for hook_id, hook in tuple(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = BackwardHook(self, list(self._backward_hooks.values()),
                                   list(self._backward_pre_hooks.values()))
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in tuple(self._forward_hooks.items()):
            if hook_id in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result

    # ---- repr ---------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        body = ""
        if len(extra_lines) == 1 and not child_lines:
            body = extra_lines[0]
        elif lines:
            body = "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``(device, dtype)`` from ``Module.to``'s arguments (either may be None)."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, bool):
            continue  # non_blocking
        elif a is not None:
            device = a
    return (None if device is None else as_device(device)), dtype
