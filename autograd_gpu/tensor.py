"""``Tensor``: an array on a device, plus what autograd needs (``requires_grad``, ``grad``,
``grad_fn``, a version counter). Methods are one-line delegates to ``functions/``."""

from __future__ import annotations

import numbers as _numbers
import weakref
from builtins import bool as _bool
from builtins import float as _float
from builtins import int as _int
from typing import Any, Callable

from . import dtypes
from .autograd import node as _node
from .autograd import saved as _saved
from .autograd.api import backward as _run_backward
from .autograd.grad_mode import STATE
from .autograd.accumulate import AccumulateGrad
from .autograd.node import HookDict, RemovableHandle, VersionCounter, add_hook
from .device import CPU, device
from .memory import STATE as _MEMORY
from .memory import track as _track_memory
from . import tensor_methods as _methods
from .tensor_convert import TensorConversions
from .tensor_methods import TensorMethods
from . import tensor_convert as _convert

# NOTE: annotations inside ``Tensor`` below its ``float``/``int``/``bool`` methods use these
# aliases: there the bare names mean the methods (as in PyTorch's own stubs).
_ARRAY_TYPES: set[type] = set()
_DTYPES: dict[Any, dtypes.dtype] = {}


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size({list(self)})"

    # NOTE: slices and concatenations of a Size stay Sizes, as in PyTorch.
    def __getitem__(self, key: Any) -> Any:
        out = tuple.__getitem__(self, key)
        return Size(out) if isinstance(key, slice) else out

    def __add__(self, other: Any) -> Any:
        out = tuple.__add__(self, other)
        return Size(out) if isinstance(other, tuple) else out

    def __radd__(self, other: Any) -> Any:
        return Size(tuple(other) + tuple(self)) if isinstance(other, tuple) else NotImplemented

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


_WARNED_ONCE: set[str] = set()  # PyTorch's TORCH_WARN_ONCE warnings already given


class Tensor(TensorConversions, TensorMethods):
    """A multi-dimensional array on a device that can record a backward graph.

    Create tensors with the factories (``tensor``, ``zeros``, ``randn``, ...); calling the class
    is PyTorch's legacy constructor (``Tensor([1, 2])``, ``Tensor(2, 3)``, see ``legacy.py``).
    """

    _data: Any
    _device: device
    # Defaults live on the class so that creating a tensor sets only what differs.
    _grad: Tensor | None = None
    _grad_fn: Any = None
    _output_nr = 0
    _requires_grad = False
    _version_counter: VersionCounter | None = None
    _base: Tensor | None = None
    _view_fn: tuple[Any, ...] | None = None  # view ops from _base, for replay (see functions)
    _view_version = 0  # the version at which a view's grad_fn was last derived
    _acc_ref: Any = None
    _is_inference = False
    _owned = False
    _hooks: dict[int, Any] | None = None  # a leaf's tensor hooks (read by AccumulateGrad)
    _post_acc_hooks: dict[int, Any] | None = None
    _level = 0  # > 0: a func.vmap BatchedTensor (batched at that vmap level)

    # ---- construction ---------------------------------------------------------------------
    @staticmethod
    def _make(data: Any, dev: device) -> Tensor:
        if type(data) not in _ARRAY_TYPES:
            data = dev.backend.asarray(data)
            _ARRAY_TYPES.add(type(data))
        t = _new(Tensor)
        t._data = data
        t._device = dev
        if dev is CPU and _MEMORY.enabled:
            _track_memory(data)  # NOTE: CUDA storage is counted by the allocator instead
        if STATE.inference:
            t._is_inference = True
        return t

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        """PyTorch's legacy constructor: ``Tensor(data)``, ``Tensor(*sizes)`` (``legacy.py``)."""
        from .legacy import construct_default

        return construct_default(cls, args, kwargs)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # NOTE: __new__ did the work

    # ---- properties -------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[F.normalize_dim(dim, self.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return int(self._data.itemsize)

    @property
    def nbytes(self) -> int:
        return int(self._data.nbytes)

    @property
    def itemsize(self) -> int:
        return int(self._data.itemsize)

    @property
    def dtype(self) -> dtypes.dtype:
        # NOTE: keyed by the backend's dtype object: its ``.name`` is slow Python code in NumPy.
        d = self._data.dtype
        try:
            return _DTYPES[d]
        except KeyError:
            _DTYPES[d] = out = dtypes.from_name(d.name)
            return out

    @property
    def device(self) -> device:
        return self._device

    @property
    def is_cuda(self) -> bool:
        return self._device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self._device.type == "cpu"

    @property
    def is_meta(self) -> bool:
        return self._device.type == "meta"

    def get_device(self) -> int:
        return -1 if self._device.index is None else self._device.index

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    @property
    def backend(self) -> Any:
        return self._device.backend

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and non-leaves that called ``retain_grad``)."""
        g = self._grad
        if g is None and self._grad_fn is not None and not self.retains_grad:
            import warnings

            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                    f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor "
                    "are the same size"
                )
            if value.dtype is not self.dtype:
                names = {"float32": ("float", "Float"), "float64": ("double", "Double"),
                         "float16": ("c10::Half", "Half")}
                got = names.get(value.dtype.name, (value.dtype.name,))[0]
                want = names.get(self.dtype.name, ("", self.dtype.name))[1]
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{got}' to a tensor with "
                    f"grad_dtype '{want}'. The gradient must match the tensor's grad_dtype "
                    "(defaults to the tensor's dtype)."
                )
            if value._device is not self._device:
                raise RuntimeError(
                    f"attempting to assign a gradient located on device with index "
                    f"'{value.get_device()}' to a tensor located on device with index "
                    f"'{self.get_device()}'. Please ensure that the gradient and the tensor are on "
                    "the same device"
                )
        self._grad = value

    @property
    def grad_fn(self) -> Any:
        """The node that made this tensor (None for leaves). A view whose storage was changed in
        place through another alias gets a fresh one (AsStridedBackward0), as in PyTorch."""
        if self._view_fn is not None and self._version_counter.value != self._view_version:  # type: ignore[union-attr]
            F.refresh_view_grad_fn(self)
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, fn: Any) -> None:
        self._grad_fn = fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def requires_grad(self) -> bool:
        if self._view_fn is not None:
            self.grad_fn  # noqa: B018  (refreshes a view whose base changed in place)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None:
            if value:
                return
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if value and self.dtype.category < 2:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        if value and self._is_inference and not STATE.inference:
            raise RuntimeError(
                "Setting requires_grad=True on inference tensor outside InferenceMode is not "
                "allowed."
            )
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if requires_grad and self.grad_fn is None and self.dtype.category < 2:
            # NOTE: PyTorch words this one differently from the attribute setter's.
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    @property
    def is_inference_tensor(self) -> bool:
        return self._is_inference

    def is_inference(self) -> bool:
        return self._is_inference

    @property
    def _version(self) -> int:
        return self._counter().value

    def _counter(self) -> VersionCounter:
        c = self._version_counter
        if c is None:
            c = self._version_counter = VersionCounter()
        return c

    @property
    def data(self) -> Tensor:
        """A grad-free tensor sharing this tensor's storage (but not its version counter)."""
        return Tensor._make(self._data, self._device)

    @data.setter
    def data(self, value: Tensor) -> None:
        self._data = value._data
        self._device = value._device

    @property
    def real(self) -> Tensor:
        return F.real(self)

    @property
    def imag(self) -> Tensor:
        return F.imag(self)

    @property
    def T(self) -> Tensor:  # noqa: N802
        return F.permute(self, tuple(range(self.ndim - 1, -1, -1)), name="PermuteBackward0")

    @property
    def mT(self) -> Tensor:  # noqa: N802
        return self._matrix_transpose("mT")

    def _matrix_transpose(self, name: str) -> Tensor:
        if self.ndim == 0:
            # NOTE: PyTorch returns a 0-d tensor itself, warning once per process; 1-d is refused.
            if name not in _WARNED_ONCE:
                import warnings

                _WARNED_ONCE.add(name)
                warnings.warn(f"Tensor.{name} is deprecated on 0-D tensors. This function is the "
                              "identity in these cases.", UserWarning, stacklevel=3)
            return self
        if self.ndim < 2:
            raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of "
                               f"matrices. Got {self.ndim}-D tensor.")
        return F.transpose(self, -2, -1)

    @property
    def H(self) -> Tensor:  # noqa: N802
        return F.conj(self.T)

    @property
    def mH(self) -> Tensor:  # noqa: N802
        return F.conj(self._matrix_transpose("mH"))

    @property
    def retains_grad(self) -> bool:
        fn = self.grad_fn
        return fn is not None and bool(fn._retain_grad) and self._output_nr in fn._retain_grad

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._tensor_str import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec: str) -> str:
        if self._data.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self) if not spec else format(repr(self), spec)

    def __reduce_ex__(self, proto: Any) -> Any:
        raise TypeError("autograd_gpu tensors are not pickled; use autograd_gpu.save")

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        """A leaf's copy with its own storage, ``requires_grad`` and (copied) ``.grad``."""
        if self._grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                "because of a torch.nn.utils.weight_norm usage, see "
                "https://github.com/pytorch/pytorch/pull/103001"
            )
        out = type(self)._make_copy(self)
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = self._grad.__deepcopy__(memo)
        return out

    @classmethod
    def _make_copy(cls, t: Tensor) -> Tensor:
        out = _new(cls)
        out._data = t.backend.copy(t._data)
        out._device = t._device
        if out._device is CPU and _MEMORY.enabled:
            _track_memory(out._data)
        out._requires_grad = t._requires_grad
        return out

    # ---- autograd ---------------------------------------------------------------------------
    def backward(self, gradient: Tensor | None = None, retain_graph: _bool | None = None,
                 create_graph: _bool = False, inputs: Any = None) -> None:
        """Compute the gradient of this tensor w.r.t. graph leaves, accumulating into ``.grad``."""
        _run_backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing storage (and version counter) with this one, outside the graph."""
        t = Tensor._make(self._data, self._device)
        t._version_counter = self._counter()
        t._is_inference = self._is_inference
        return t

    def detach_(self) -> Tensor:
        if self._base is not None and self._base._requires_grad:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def retain_grad(self) -> None:
        """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves)."""
        fn = self.grad_fn
        if fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if fn._retain_grad is None:
            fn._retain_grad = {}
        fn._retain_grad[self._output_nr] = weakref.ref(self)

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """``hook(grad)`` runs when this tensor's gradient is computed; it may return a new one."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn._register_tensor_prehook(self._output_nr, hook)
        return self._grad_accumulator()._register_tensor_prehook(0, hook)

    def register_post_accumulate_grad_hook(self, hook: Callable[[Tensor], None]) -> RemovableHandle:
        """``hook(tensor)`` runs after ``.grad`` of this leaf has been accumulated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = HookDict()
        return add_hook(self._post_acc_hooks, hook)

    def _grad_accumulator(self) -> AccumulateGrad:
        acc = self._acc_ref() if self._acc_ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc_ref = weakref.ref(acc)
        return acc

_new = object.__new__
_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)
_node.Tensor_ = _saved.Tensor_ = Tensor


def _operand(x: Any) -> _bool:
    """Whether a binary operator takes ``x``: a tensor, a number, or an array."""
    return x.__class__ in _OPERAND_TYPES or isinstance(x, (Tensor, _numbers.Number)) or \
        hasattr(x, "__array__")


_OPERAND_TYPES = frozenset([Tensor, _int, _float])  # NOTE: the common ones, by a set lookup
from . import functions as F  # noqa: E402  (functions/ builds on Tensor)
from . import creation as _C  # noqa: E402  (the factories build on Tensor)
_methods.F, _methods._operand = F, _operand
_convert.F, _convert._C = F, _C
