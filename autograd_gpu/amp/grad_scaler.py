"""``GradScaler``: dynamic loss scaling for mixed-precision training, as ``torch.amp.GradScaler``.

The scale and the growth tracker are 0-d tensors (float32, int32) on the device of the first
scaled output, made by the first ``scale()`` call. Per optimizer and iteration the stage moves
READY -> UNSCALED (``unscale_``) -> STEPPED (``step``); ``update()`` resets every optimizer to
READY. The inf/nan check of an optimizer's gradients is one reduction per (device, dtype) group
over the concatenation of the gradients, and the unscale multiplies the gradients in place; the
found-inf flag stays a device tensor until ``step`` reads it (PyTorch's one host sync there).
``update`` computes the new scale on the device too (no host sync).
"""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum
from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    """Where an optimizer is in the current iteration."""

    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _PerDevice:
    """One master tensor and its copies on other devices, each made once (lazily)."""

    def __init__(self, master: Tensor) -> None:
        self.master = master
        self.copies: dict[Any, Tensor] = {}

    def get(self, dev: Any) -> Tensor:
        if dev == self.master.device:
            self.copies.setdefault(dev, self.master)
        elif dev not in self.copies:
            self.copies[dev] = self.master.to(dev)
        return self.copies[dev]


def _check_and_unscale(grads: list[Tensor], found_inf: Tensor, inv_scale: Tensor) -> None:
    """PyTorch's ``_amp_foreach_non_finite_check_and_unscale_`` on one device and dtype: set
    ``found_inf`` to 1 if any element of ``grads`` is inf/nan (checked before unscaling), and
    multiply every gradient in place by ``inv_scale`` (skipped when it is 1, as PyTorch)."""
    xp = grads[0].backend.xp
    # NOTE: one reduction over the concatenation of all gradients (one pass, one launch on
    # CUDA) rather than one per gradient; the result stays on the device.
    flat = xp.concatenate([xp.ravel(g._data) for g in grads]) if len(grads) > 1 \
        else xp.ravel(grads[0]._data)
    bad = xp.logical_not(xp.all(xp.isfinite(flat)))
    f = found_inf._data
    f[...] = xp.where(bad, xp.asarray(1.0, dtype=f.dtype), f)
    inv = inv_scale.to(grads[0].dtype)
    for g in grads:
        with g.backend.errstate(all="ignore"):
            g.mul_(inv)


class GradScaler:
    """Scale the loss so that small float16 gradients do not underflow, unscale the gradients
    before the optimizer step, skip the steps whose gradients hold inf/nan and adjust the scale:
    times ``backoff_factor`` after a skipped step, times ``growth_factor`` after
    ``growth_interval`` consecutive unskipped steps (PyTorch's rule).

    ``device="cuda"`` without CUDA warns and disables the scaler, as PyTorch; a disabled scaler
    passes everything through (``scale`` returns its input, ``step`` calls ``optimizer.step``).

    Example:
        >>> scaler = GradScaler("cpu", init_scale=1024.0)
        >>> scaler.scale(loss).backward()
        >>> scaler.step(opt)
        >>> scaler.update()
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled:
            from ..backends import cuda_support

            if not cuda_support.is_available():
                warnings.warn(
                    "torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                    "Disabling.", stacklevel=2)
                self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict[int, dict[str, Any]] = defaultdict(_fresh_state)

    # ---- internals -----------------------------------------------------------------------
    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev: Any) -> None:
        from .. import dtypes
        from ..creation_fill import full

        self._scale = full((), self._init_scale, dtype=dtypes.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dtypes.int32,
                                    device=dev)

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict[Any, Tensor]:
        from .. import dtypes

        inv = _PerDevice(inv_scale)
        found = _PerDevice(found_inf)
        groups: dict[Any, dict[Any, list[Tensor]]] = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    if param.grad is None:
                        continue
                    if not allow_fp16 and param.grad.dtype == dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    groups[param.grad.device][param.grad.dtype].append(param.grad)
            for dev, by_dtype in groups.items():
                for grads in by_dtype.values():
                    _check_and_unscale(grads, found.get(dev), inv.get(dev))
        return found.copies

    # ---- public API ----------------------------------------------------------------------
    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or nested lists/tuples of tensors) times the scale; returned
        unchanged when the scaler is disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            assert self._scale is not None
            return outputs * self._scale.to(outputs.device)
        stash: list[_PerDevice] = []

        def apply(val: Any) -> Any:
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    assert self._scale is not None
                    stash.append(_PerDevice(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                it = map(apply, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(it)
                return it
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale in place (once per iteration) and
        record whether any is inf/nan.

        Raises:
            RuntimeError: called twice for an optimizer since the last ``update()``, or after
                ``step()``.
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        from .. import dtypes
        from ..creation_fill import full

        # NOTE: the reciprocal in float64, rounded to float32, as PyTorch.
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=dtypes.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale ``optimizer``'s gradients if not done yet, then ``optimizer.step(*args,
        **kwargs)`` unless a gradient holds inf/nan. Returns the step's value, or None when
        skipped.

        Raises:
            RuntimeError: a ``closure`` keyword, or a second ``step`` since ``update()``.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """End the iteration: set the scale to ``new_scale`` (a float or a 1-element tensor on
        the scaler's device type) or, without it, back off if any step was skipped, else grow
        after ``growth_interval`` consecutive unskipped iterations."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                with no_grad():
                    scale.copy_(new_scale)
        else:
            infs = [f.to(scale.device) for st in self._per_optimizer_states.values()
                    for f in st["found_inf_per_device"].values()]
            if not infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = infs[0]
            for f in infs[1:]:
                found = found + f
            self._update_scale(scale, tracker, found)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, scale: Tensor, tracker: Tensor, found: Tensor) -> None:
        """PyTorch's ``_amp_update_scale_`` on the device arrays, in place: backoff and tracker
        0 on inf; else tracker + 1, and at ``growth_interval`` the grown scale (kept only if
        finite; computed in float64 and rounded to float32, as PyTorch's CPU kernel) and 0."""
        xp = scale.backend.xp
        s, t, f = scale._data, tracker._data, found._data
        bad = f != 0
        succ = t + 1
        grow = xp.logical_and(xp.logical_not(bad), succ == self._growth_interval)
        s64 = s.astype(np.float64)
        with scale.backend.errstate(all="ignore"):  # an overflowing growth is dropped below
            grown = (s64 * float(self._growth_factor)).astype(np.float32)
            backed = (s64 * float(self._backoff_factor)).astype(np.float32)
        grown = xp.where(xp.isfinite(grown), grown, s)
        new_s = xp.where(bad, backed, xp.where(grow, grown, s))
        new_t = xp.where(xp.logical_or(bad, grow), xp.zeros_like(t), succ).astype(np.int32)
        s[...] = new_s
        t[...] = new_t

    def _get_scale_async(self) -> Tensor | None:
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled; a host sync)."""
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self) -> float:
        """The scale growth factor."""
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        """Set the scale growth factor."""
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        """The scale backoff factor."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        """Set the scale backoff factor."""
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        """The growth interval."""
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        """Set the growth interval."""
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self) -> bool:
        """Whether this scaler is enabled."""
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """``scale``, ``growth_factor``, ``backoff_factor``, ``growth_interval`` and
        ``_growth_tracker`` as Python numbers (PyTorch's keys); empty when disabled."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load what ``state_dict()`` returned (a no-op when disabled).

        Raises:
            RuntimeError: ``state_dict`` is empty (saved from a disabled scaler).
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the beginning "
                                     "of an iteration, or at the end after scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_fresh_state)
