"""What a node keeps for its backward: ``save_for_backward`` in ``forward``, packing into
entries that remember the version they were saved at (inputs as Tensors, outputs as bare arrays
with their version counter, constants as they are), the ``saved_tensors_hooks`` around packing
and unpacking, and PyTorch's error when a saved tensor was modified in place. ``Node``
inherits ``SavedTensors``.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable

from . import hooks as hook_checks

Tensor_: Any = None  # the Tensor class, set by tensor.py (it sits a layer above)
track_saved: Any = None  # memory.track_saved(array, device), set by memory.py: counts kept arrays
_INPUT, _OUTPUT, _CONST, _RAW, _HOOKED = 0, 1, 2, 3, 4


class _SavedHooksState(threading.local):
    """The ``(pack, unpack)`` pairs of ``autograd.graph.saved_tensors_hooks``, innermost last,
    and the message of an active ``disable_saved_tensors_hooks`` (per thread, as in PyTorch)."""

    stack: tuple[tuple[Callable[[Any], Any], Callable[[Any], Any]], ...] = ()
    disabled: str | None = None
    packing: tuple[Any, int] | None = None  # (node, entry kind) while a pack hook runs (profiler)


SAVED_HOOKS = _SavedHooksState()


class _RawState(threading.local):
    """The node whose backward runs on bare arrays in this thread (``Node._call_raw``).

    NOTE: per thread, not a flag on the node: threads running backward through a shared graph
    (``retain_graph=True``) may run one node at once, one on arrays and one on Tensors.
    """

    node: Any = None


RAW = _RawState()


class SavedTensors:
    """The saving half of ``Node`` (see the module docstring)."""

    _saved: list[Any] | tuple[()] | None = ()  # None once released
    _to_save: tuple[Any, ...] = ()
    backend: Any = None
    backend_device: Any = None

    def _device(self) -> Any:
        return self.backend_device

    def wrap(self, array: Any) -> Any:
        """A constant (grad-free) Tensor on this node's device."""
        return Tensor_._make(array, self.backend_device)

    # ---- saving for backward ------------------------------------------------------------------
    def save_for_backward(self, *arrays: Any) -> None:
        """Called in ``forward`` with arrays (inputs, outputs or other arrays) that ``backward``
        reads back, in order, as Tensors from ``saved_tensors``."""
        self._to_save = arrays

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        saved = self._saved
        if saved is None:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or if "
                "you need to access saved tensors after calling backward."
            )
        if RAW.node is self:
            return tuple(self._unpack_array(entry) for entry in saved)
        return tuple(self._unpack(entry) for entry in saved)

    def _unpack_array(self, entry: Any) -> Any:
        """A saved value as a bare array (the raw backward path), after the version check."""
        if entry is None:
            return None
        kind, obj, version = entry
        if kind == _RAW or kind == _CONST:
            return obj
        if kind == _OUTPUT:
            data, _, counter, _ = obj
            if counter.value != version:
                self._unpack(entry)  # raises the error with its full message
            return data
        if kind == _HOOKED:
            return self._unpack_hooked(obj, True)
        if obj._version_counter is not None and obj._version_counter.value != version:
            self._unpack(entry)
        return obj._data

    def _pack(self, inputs: tuple[Any, ...], arrays: list[Any], outputs: tuple[Any, ...],
              raw: tuple[Any, ...] = ()) -> None:
        entries: list[Any] = []
        for a in self._to_save:
            entry: Any = None
            if a is None:
                entries.append(None)
                continue
            # NOTE: an input's array, the common case, is looked for first (no hasattr).
            t = None
            i = 0
            for x in arrays:
                if x is a:
                    t = inputs[i]
                    break
                i += 1
            if t is not None and isinstance(t, Tensor_):
                if t._is_inference:
                    raise RuntimeError(_INFERENCE_SAVE)
                counter = t._version_counter
                entry = (_INPUT, t, t._counter().value if counter is None else counter.value)
            else:
                if not hasattr(a, "shape"):  # a Python scalar: handed back as it is
                    entries.append((_RAW, a, 0))
                    continue
                for k, t in enumerate(outputs):
                    # NOTE: ``raw`` matches a 0-d output that forward returned as a NumPy
                    # scalar (Tensor._make wrapped it into a new array).
                    if t._data is a or (k < len(raw) and raw[k] is a):
                        # NOTE: an output is kept without its grad_fn (which is this node):
                        # holding the Tensor would make a reference cycle.
                        counter = t._counter()
                        entry = (_OUTPUT, (t._data, t._output_nr, counter, t._requires_grad),
                                 counter.value)
                        break
                else:
                    entry = (_CONST, a, 0)
                    if track_saved is not None:
                        track_saved(a, self.backend_device)
            entries.append(entry)
        if SAVED_HOOKS.stack:
            entries = self._pack_hooked(entries, outputs)
        self._saved = entries
        self._to_save = ()

    def _pack_hooked(self, entries: list[Any], outputs: Any) -> list[Any]:
        """Hand every saved tensor to the innermost ``saved_tensors_hooks`` pack hook, in saving
        order, and keep what it returns with the unpack hook and the tensor's graph position.

        NOTE: the saved Tensor itself is not kept (that is the point of the hooks: checkpoint and
        ``save_on_cpu`` drop or move it); its grad_fn, or a leaf's AccumulateGrad, is, so the
        unpacked tensor joins the graph as the original did (double backward). As in PyTorch, no
        version check is made on hooked tensors.
        """
        pack, unpack = SAVED_HOOKS.stack[-1]
        T = Tensor_
        hooked: list[Any] = []
        for entry in entries:
            if entry is None or entry[0] == _RAW:
                hooked.append(entry)
                continue
            kind, obj, version = entry
            meta: Any = None
            if kind == _INPUT:
                t = obj
                fn = t.grad_fn
                acc = t._grad_accumulator() if fn is None and t._requires_grad else None
                meta = (fn, t._output_nr, t._requires_grad, acc)
            elif kind == _OUTPUT:
                data, output_nr, _, rg = obj
                for o in outputs:
                    if isinstance(o, T) and o._data is data:
                        t = o
                        break
                else:
                    t = self._unpack(entry)
                meta = (output_nr, rg)
            else:
                t = self.wrap(obj)
            SAVED_HOOKS.packing = (self, kind)
            try:
                packed = pack(t)
            finally:
                SAVED_HOOKS.packing = None
            hooked.append((_HOOKED, (kind, packed, unpack, meta), version))
        return hooked

    def _unpack_hooked(self, obj: Any, raw: bool) -> Any:
        """A hooked saved tensor: ``unpack_hook(packed)``, re-attached to the graph."""
        kind, packed, unpack, meta = obj
        u = unpack(packed)
        T = Tensor_
        if not isinstance(u, T):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {hook_checks.typename(u)}")
        if raw:
            return u._data
        t = T._make(u._data, u._device)
        if kind == _OUTPUT:
            output_nr, rg = meta
            if rg:
                t.grad_fn, t._output_nr, t._requires_grad = self, output_nr, True
        elif kind == _INPUT:
            fn, output_nr, rg, acc = meta
            if fn is not None:
                t.grad_fn, t._output_nr, t._requires_grad = fn, output_nr, rg
            elif rg:
                # NOTE: a saved leaf: gradients reach the original leaf's .grad through its
                # AccumulateGrad.
                t._requires_grad = True
                t._acc_ref = weakref.ref(acc)
        return t

    def _unpack(self, entry: Any) -> Any:
        if entry is None:
            return None
        kind, obj, version = entry
        if kind == _RAW:
            return obj
        if kind == _CONST:
            return self.wrap(obj)
        if kind == _OUTPUT:
            data, output_nr, counter, rg = obj
            t = Tensor_._make(data, self._device())
            t._version_counter = counter
            if rg:
                t.grad_fn, t._output_nr, t._requires_grad = self, output_nr, True
            obj = t
        elif kind == _HOOKED:
            return self._unpack_hooked(obj, False)
        _check_version(obj, version)
        return obj

    def _own_saved_input(self, t: Any) -> None:
        """``t`` is about to be overwritten in place: if this node saved it, keep a copy."""
        saved = self._saved
        if not saved:
            return
        for i, entry in enumerate(saved):
            if entry is not None and entry[0] == _INPUT and entry[1] is t:
                t._data = self.backend.copy(t._data)
                if track_saved is not None:
                    track_saved(t._data, self.backend_device)
                t._version_counter = None
                saved[i] = (_INPUT, t, t._counter().value)

    def _saved_output_is(self, data: Any, t: Any) -> None:
        """An in-place op wrote this node's output ``data`` into ``t``: a saved copy of that
        output is ``t`` now, at its current version.

        NOTE: as in PyTorch, where the in-place op's output *is* ``t``: a later in-place write
        to ``t`` (or a view of it) makes backward refuse instead of reading stale values.
        """
        saved = self._saved
        if not saved:
            return
        for i, entry in enumerate(saved):
            if entry is not None and entry[0] == _OUTPUT and entry[1][0] is data:
                _, output_nr, _, rg = entry[1]
                counter = t._counter()
                saved[i] = (_OUTPUT, (t._data, output_nr, counter, rg), counter.value)


_INFERENCE_SAVE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


def _type_str(t: Any) -> str:
    base = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
    prefix = "torch.cuda." if t._device.type == "cuda" else "torch."
    return f"{prefix}{base[t.dtype.name]}Tensor"


def _check_version(t: Any, expected: int) -> None:
    counter = t._counter()
    if counter.value == expected:
        return
    which = ""
    fn = t.grad_fn
    if fn is not None:
        which = f", which is output {t._output_nr} of {short_name(fn.name())},"
    where = f" The in-place operation that bumped it ran at {counter.where}." if counter.where else ""
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{_type_str(t)} [{', '.join(map(str, t.shape))}]]{which} is at version "
        f"{counter.value}; expected version {expected} instead. Hint: enable anomaly detection to "
        "find the operation that failed to compute its gradient, with "
        f"torch.autograd.set_detect_anomaly(True, check_nan=False).{where}"
    )


def short_name(name: str) -> str:
    """A node's name as PyTorch's errors write it: ``ExpBackward0`` is ``Exp``, ``EluBackward1``
    is ``Elu1``."""
    return name.replace("Backward0", "").replace("Backward", "")
