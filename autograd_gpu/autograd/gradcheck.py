"""``gradcheck`` / ``gradgradcheck``: analytical Jacobians (from backward) against central finite
differences, with PyTorch's defaults (eps 1e-6, atol 1e-5, rtol 1e-3) and error type."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .api import grad as autograd_grad
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` when analytical and numerical gradients disagree."""


def _tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _diff_inputs(inputs: tuple[Any, ...]) -> list[int]:
    from ..tensor import Tensor

    return [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]


def _outputs(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    from ..tensor import Tensor

    return tuple(o for o in _tuple(fn(*inputs)) if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _numerical(fn: Callable[..., Any], inputs: tuple[Any, ...], idx: list[int], eps: float) -> list[list[Any]]:
    """``jac[i][j]``: (numel of input j) x (numel of output i) arrays by central differences."""
    # NOTE: fn runs with grad mode as the caller has it: gradgradcheck's fn calls autograd.grad.
    outs = _outputs(fn, inputs)
    be = inputs[idx[0]].backend
    jac = [[be.zeros((inputs[j].numel(), o.numel()), "float64") for j in idx] for o in outs]
    for jj, j in enumerate(idx):
        x = inputs[j]
        flat = x._data.reshape(-1) if x._data.flags.c_contiguous else None
        if flat is None:
            raise GradcheckError(f"gradcheck needs contiguous inputs (input {j} is not)")
        for k in range(flat.size):
            orig = flat[k].item()
            flat[k] = orig + eps
            plus = [_flat64(o) for o in _outputs(fn, inputs)]
            flat[k] = orig - eps
            minus = [_flat64(o) for o in _outputs(fn, inputs)]
            flat[k] = orig
            for i in range(len(outs)):
                jac[i][jj][k] = (plus[i] - minus[i]) / (2 * eps)
    return jac


def _flat64(t: Any) -> Any:
    with no_grad():
        return t.detach().double()._data.reshape(-1).copy()


def _analytical(outs: tuple[Any, ...], inputs: tuple[Any, ...], idx: list[int]) -> list[list[Any]]:
    from ..creation import zeros

    be = inputs[idx[0]].backend
    jac = [[be.zeros((inputs[j].numel(), o.numel()), "float64") for j in idx] for o in outs]
    diff = [inputs[j] for j in idx]
    for i, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for k in range(o.numel()):
            # NOTE: C-contiguous (zeros_like keeps a permuted o's layout), so that reshape(-1)
            # is a view the 1 is written through.
            go = zeros(o.shape, dtype=o.dtype, device=o.device)
            go._data.reshape(-1)[k] = 1
            grads = autograd_grad(o, diff, go, retain_graph=True, allow_unused=True)
            for jj, g in enumerate(grads):
                if g is not None:
                    jac[i][jj][:, k] = g.detach().double()._data.reshape(-1)
    return jac


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, fast_mode: bool = False, **_: Any) -> bool:
    """True when backward's Jacobian matches central finite differences for every input that
    requires grad (use float64 inputs)."""
    inputs = _tuple(inputs)
    idx = _diff_inputs(inputs)
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have requires_grad=True.")
    for j in idx:
        if inputs[j].dtype.name not in ("float64", "complex128"):
            import warnings

            warnings.warn(
                f"Input #{j} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point. ", UserWarning, stacklevel=2,
            )
    func, inputs = _as_real(func, inputs)
    outs = _outputs(func, inputs)
    analytical = _analytical(outs, inputs, idx)
    numerical = _numerical(func, inputs, idx, eps)
    be = inputs[idx[0]].backend
    for i in range(len(outs)):
        for jj, j in enumerate(idx):
            a, n = analytical[i][jj], numerical[i][jj]
            if not bool(be.all(be.abs(a - n) <= atol + rtol * be.abs(n))):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {i} with respect to input {j},\n"
                        f"numerical:{n!r}\nanalytical:{a!r}\n"
                    )
                return False
    return True


def _as_real(func: Callable[..., Any], inputs: tuple[Any, ...]
             ) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``func`` and ``inputs`` over real numbers: each complex input becomes a real leaf with a
    last dim of 2 (``view_as_real``) and each complex output is viewed as real, so the checked
    Jacobian is that of the real and imaginary parts (PyTorch checks the same derivatives)."""
    from ..functions.complex import view_as_complex, view_as_real
    from ..tensor import Tensor

    cplx = [isinstance(t, Tensor) and t.dtype.is_complex for t in inputs]

    def real_func(*xs: Any) -> tuple[Any, ...]:
        zs = [view_as_complex(x) if c else x for x, c in zip(xs, cplx)]
        return tuple(view_as_real(o) if isinstance(o, Tensor) and o.dtype.is_complex else o
                     for o in _tuple(func(*zs)))

    real_inputs = tuple(
        view_as_real(t.detach()).clone().requires_grad_(t.requires_grad) if c else t
        for t, c in zip(inputs, cplx))
    return real_func, real_inputs


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Sequence[Any] | None = None, *,
                  eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, **_: Any) -> bool:
    """``gradcheck`` of the backward itself: second derivatives against finite differences of
    first derivatives, for random (fixed) output gradients."""
    from ..random import Generator, randn

    inputs = _tuple(inputs)
    idx = _diff_inputs(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        g = Generator().manual_seed(0)
        # NOTE: drawn on the CPU generator (the same numbers on every device), then moved to
        # the output's device: backward needs gradients where the outputs live.
        grad_outputs = tuple(
            randn(tuple(o.shape), dtype=o.dtype, generator=g).to(o.device).requires_grad_()
            for o in outs
        )
    n_in = len(inputs)
    grad_outputs = tuple(grad_outputs)

    def first_grads(*args: Any) -> tuple[Any, ...]:
        xs, gos = args[:n_in], args[n_in:]
        o = _outputs(func, xs)
        diff = [xs[j] for j in idx]
        gs = autograd_grad(o, diff, gos, create_graph=True, allow_unused=True)
        from ..creation import zeros_like

        return tuple(zeros_like(d) if gr is None else gr for d, gr in zip(diff, gs))

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
