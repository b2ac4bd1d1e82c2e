"""Complex dtypes against the oracle: creation, printing, promotion, conversions, the conjugate
family (real, imag, conj, angle, view_as_real/complex, polar, complex), arithmetic, and
gradients in PyTorch's convention (the gradient of a real loss is dL/d(conj z))."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

Z = [[1 + 2j, -3 + 0.5j, 0.25 - 1j], [2 - 2j, 0.5 + 0.5j, -1 - 3j]]


def _z(T: Any, dev: str, dtype: Any = None, grad: bool = False) -> Any:
    return T.tensor(Z, dtype=dtype, device=dev, requires_grad=grad)


def _x(T: Any, dev: str) -> Any:
    return T.tensor([[0.5, -1.0, 2.0], [1.5, 3.0, -0.25]], device=dev)


# ---- values: creation, promotion, conversions, the conjugate family ----------------------------

VALUES: dict[str, Callable[[Any, str], Any]] = {
    "tensor": lambda T, d: T.tensor([1 + 2j, 3.5], device=d),
    "tensor_scalar": lambda T, d: T.tensor(1j, device=d),
    "tensor_mixed": lambda T, d: T.tensor([1, 2.5, 1j, True], device=d),
    "tensor_dtype": lambda T, d: T.tensor([1, 2], dtype=T.cdouble, device=d),
    "zeros": lambda T, d: T.zeros(2, 3, dtype=T.complex64, device=d),
    "ones": lambda T, d: T.ones(2, dtype=T.cfloat, device=d),
    "full": lambda T, d: T.full((2,), 1 - 1j, device=d),
    "to_complex": lambda T, d: _x(T, d).to(T.complex128),
    "to_complex64": lambda T, d: T.arange(3, device=d).to(T.complex64),
    "add_float": lambda T, d: _z(T, d) + _x(T, d),
    "add_double_0d": lambda T, d: _z(T, d) + T.tensor(2.0, dtype=T.float64, device=d),
    "add_cdouble_0d": lambda T, d: _x(T, d) + T.tensor(2j, dtype=T.complex128, device=d),
    "mul_scalar": lambda T, d: _x(T, d) * 2j,
    "mul_scalar_double": lambda T, d: _x(T, d).double() * (1 + 1j),
    "int_plus_complex": lambda T, d: T.arange(3, device=d) + 1j,
    "rsub": lambda T, d: 1j - _z(T, d),
    "rdiv": lambda T, d: 1j / _z(T, d),
    "sub": lambda T, d: _z(T, d) - _x(T, d) * 2,
    "mul": lambda T, d: _z(T, d) * _z(T, d).flip(0),
    "div": lambda T, d: _z(T, d) / _z(T, d).flip(1),
    "pow_scalar": lambda T, d: _z(T, d) ** 2,
    "pow_tensor": lambda T, d: _z(T, d) ** _z(T, d).flip(0),
    "exp": lambda T, d: _z(T, d).exp(),
    "log": lambda T, d: _z(T, d).log(),
    "sqrt": lambda T, d: _z(T, d).sqrt(),
    "neg": lambda T, d: -_z(T, d),
    "sum": lambda T, d: _z(T, d).sum(),
    "sum_dim": lambda T, d: _z(T, d).sum(1),
    "mean": lambda T, d: _z(T, d).mean(0),
    "matmul": lambda T, d: _z(T, d) @ _z(T, d).T,
    "abs": lambda T, d: _z(T, d).abs(),
    "angle": lambda T, d: _z(T, d).angle(),
    "angle_real": lambda T, d: T.angle(T.tensor([-1.0, 0.0, 2.0], device=d)),
    "real": lambda T, d: _z(T, d).real,
    "imag": lambda T, d: _z(T, d).imag,
    "real_of_real": lambda T, d: T.real(_x(T, d)),
    "imag_of_real": lambda T, d: T.imag(_x(T, d)),
    "conj": lambda T, d: _z(T, d).conj(),
    "conj_physical": lambda T, d: T.conj_physical(_z(T, d)),
    "resolve_conj": lambda T, d: _z(T, d).conj().resolve_conj(),
    "view_as_real": lambda T, d: T.view_as_real(_z(T, d)),
    "view_as_real_t": lambda T, d: T.view_as_real(_z(T, d).T),
    "view_as_real_of_real": lambda T, d: T.view_as_real(_x(T, d)),
    "view_as_complex": lambda T, d: T.view_as_complex(T.arange(6.0, device=d).reshape(3, 2)),
    "view_as_complex_bad": lambda T, d: T.view_as_complex(T.ones(3, device=d)),
    "view_as_complex_stride": lambda T, d: T.view_as_complex(T.ones(2, 3, device=d).T),
    "complex": lambda T, d: T.complex(_x(T, d), _x(T, d)[0]),
    "complex_double": lambda T, d: T.complex(_x(T, d).double(), _x(T, d).double()),
    "complex_mixed": lambda T, d: T.complex(_x(T, d), _x(T, d).double()),
    "polar": lambda T, d: T.polar(_x(T, d).abs(), _x(T, d)),
    "is_complex": lambda T, d: (_z(T, d).is_complex(), _x(T, d).is_complex(),
                                T.is_complex(_z(T, d))),
    "dtype_props": lambda T, d: (T.complex64.is_complex, T.cdouble.is_floating_point,
                                 T.cfloat.itemsize, T.complex128.to_real()),
    "promote_types": lambda T, d: (T.promote_types(T.complex64, T.float64),
                                   T.promote_types(T.int64, T.complex64),
                                   T.promote_types(T.complex128, T.float32)),
    "result_type": lambda T, d: (T.result_type(_x(T, d), 1j),
                                 T.result_type(T.arange(2, device=d), 1j),
                                 T.result_type(_x(T, d).double(), 1j),
                                 T.result_type(_z(T, d), 2.0)),
    "item": lambda T, d: T.tensor([1 + 2j], device=d).item(),
    "tolist": lambda T, d: _z(T, d).tolist(),
    "backward_complex": lambda T, d: (_z(T, d, grad=True) * 2).sum().backward(),
    "requires_grad": lambda T, d: T.ones(2, dtype=T.cfloat, device=d).requires_grad_().is_leaf,
    "eq": lambda T, d: _z(T, d) == _z(T, d).conj(),
    "setitem": lambda T, d: _z(T, d).index_put_((T.tensor([0], device=d),), T.tensor(5j, device=d)),
    "setitem_scalar": lambda T, d: _z(T, d).__setitem__(0, 5j),
    "fill": lambda T, d: _z(T, d).fill_(3j),
    "fill_real_complex": lambda T, d: _x(T, d).fill_(2 + 0j),
    "fill_real_bad": lambda T, d: _x(T, d).fill_(2 + 1j),
    "masked_fill": lambda T, d: _z(T, d).masked_fill(_x(T, d) > 0, 1j),
    "full_like": lambda T, d: T.full_like(_z(T, d), 2 - 1j),
    "prod": lambda T, d: _z(T, d).prod(1),
    "cumsum": lambda T, d: _z(T, d).cumsum(0),
    "vdot": lambda T, d: T.vdot(_z(T, d)[0], _z(T, d)[1]),
    "dot": lambda T, d: T.dot(_z(T, d)[0], _z(T, d)[1]),
    "mH": lambda T, d: _z(T, d).mH,
    "H": lambda T, d: _z(T, d).H,
    "adjoint": lambda T, d: _z(T, d).adjoint(),
    "norm": lambda T, d: _z(T, d).norm(),
    "var": lambda T, d: _z(T, d).var(),
    "std_dim": lambda T, d: _z(T, d).std(1, keepdim=True),
    "type": lambda T, d: _z(T, d).cpu().type(),
    "typename": lambda T, d: T.typename(_z(T, d).cpu()),
    "pow_neg": lambda T, d: _z(T, d) ** -1,
    "mul_inplace_refused": lambda T, d: _x(T, d).mul_(1j),
    "cat_promote": lambda T, d: T.cat([_z(T, d), _x(T, d)]),
    "stack": lambda T, d: T.stack([_z(T, d), _z(T, d)]),
    "index": lambda T, d: _z(T, d)[T.tensor([1, 0], device=d)],
    "where": lambda T, d: T.where(_x(T, d) > 0, _z(T, d), 0.0),
    "from_numpy": lambda T, d: T.from_numpy(np.array([1j, 2])),
    "numpy_dtype": lambda T, d: str(_z(T, d).cpu().numpy().dtype),
    "allclose": lambda T, d: T.allclose(_z(T, d), _z(T, d) + 1e-9),
    "round": lambda T, d: _z(T, d).round(),  # NOTE: the kernel's name differs on CUDA
    "trace": lambda T, d: _z(T, d)[:, :2].trace(),
    "std_mean": lambda T, d: T.std_mean(_z(T, d), 1),
    "var_mean": lambda T, d: T.var_mean(_z(T, d)),
    "isreal": lambda T, d: (T.isreal(_z(T, d) * T.tensor([1, 0, 1], device=d).bool().logical_not()
                                     .to(T.cfloat) + 1), T.isreal(_x(T, d))),
    "sgn": lambda T, d: (_z(T, d) * T.tensor([1, 0, 1], device=d)).sgn(),
    "sum_dtype": lambda T, d: _x(T, d).sum(dtype=T.cdouble),
    "kron": lambda T, d: T.kron(_z(T, d), _z(T, d)),
    "einsum": lambda T, d: T.einsum("ij,kj->ik", _z(T, d), _z(T, d)),
    "cumprod": lambda T, d: _z(T, d).cumprod(1),
    "sort": lambda T, d: _z(T, d).sort(),  # NOTE: the message names the device
    "argsort": lambda T, d: _z(T, d).argsort(),
    "topk": lambda T, d: _z(T, d).topk(1),
    "median_dim": lambda T, d: _z(T, d).median(0),  # NOTE: the kernel name differs on CUDA
    "kthvalue": lambda T, d: _z(T, d).kthvalue(1),
    "linspace": lambda T, d: T.linspace(0, 1j, 5, device=d),
    "linspace_cdouble": lambda T, d: T.linspace(1 + 1j, -2, 4, dtype=T.cdouble, device=d),
    "linspace_real_ends": lambda T, d: T.linspace(0, 1, 3, dtype=T.cfloat, device=d),
    "linspace_one": lambda T, d: T.linspace(2j, 3, 1, device=d),
    "rpow_complex": lambda T, d: (2 + 1j) ** _x(T, d),
    "dist": lambda T, d: T.dist(_z(T, d), _z(T, d).flip(0)),
    "vector_norm": lambda T, d: T.linalg.vector_norm(_z(T, d), 3, dim=1),
    "nansum": lambda T, d: _z(T, d).nansum(),
    "isnan": lambda T, d: (_z(T, d) * float("nan")).isnan(),
}


def _outputs(x: Any) -> list[Any]:
    return list(x) if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values(device: str, name: str) -> None:
    try:
        theirs = VALUES[name](torch, "cpu")
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            VALUES[name](ag, device)
        return
    ours = VALUES[name](ag, device)
    for a, b in zip(_outputs(ours), _outputs(theirs), strict=True):
        if isinstance(b, torch.Tensor):
            same(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert str(a) == str(b), (a, b)


# ---- printing ---------------------------------------------------------------------------------

REPRS = [
    [1 + 2j, 3.5 - 1j], [1e-5 + 2j, 3.5 - 1j], [1e5 + 2e5j], [0j, -0.0 - 0.0j], [1j],
    [[1 + 1j, 2 - 2j], [3.25 + 0j, -4 + 100j]], [float("nan") + 1j, float("inf") - 2j],
]


@pytest.mark.parametrize("data", REPRS, ids=range(len(REPRS)))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_repr(data: Any, dtype: str) -> None:
    assert repr(ag.tensor(data, dtype=getattr(ag, dtype))) == \
        repr(torch.tensor(data, dtype=getattr(torch, dtype)))
    assert repr(ag.tensor(data[0], dtype=getattr(ag, dtype))) == \
        repr(torch.tensor(data[0], dtype=getattr(torch, dtype)))


def test_repr_grad_and_big() -> None:
    z = [complex(i, -i / 3) for i in range(2000)]
    assert repr(ag.tensor(z)) == repr(torch.tensor(z))
    assert repr(ag.tensor(Z, requires_grad=True) * 2) == repr(torch.tensor(Z, requires_grad=True) * 2)


def test_to_real_warns(device: str) -> None:
    with pytest.warns(UserWarning, match="Casting complex values to real discards"):
        ours = _z(ag, device).double()
    with warnings.catch_warnings():  # NOTE: torch warns once per process
        warnings.simplefilter("ignore")
        same(ours, _z(torch, "cpu").double())


def test_default_complex_follows_default_dtype() -> None:
    ag.set_default_dtype(ag.float64)
    try:
        assert ag.tensor([1j]).dtype is ag.complex128
        assert repr(ag.tensor([1j])) == "tensor([0.+1.j])"
        assert (ag.ones(2, dtype=ag.float32) * 1j).dtype is ag.complex64
    finally:
        ag.set_default_dtype(ag.float32)


# ---- gradients: a real loss of complex inputs ---------------------------------------------------

def _loss(y: Any) -> Any:
    """A real loss that weighs real and imaginary parts differently (so conj mistakes show)."""
    if y.is_complex():
        return (y.real * 1.5 + y.imag * -0.75 + y.abs()).sum()
    return (y * 1.25).sum()


GRADS: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b * 2,
    "mul": lambda a, b: a * b,
    "mul_scalar": lambda a, b: a * (2 - 1j),
    "div": lambda a, b: a / b,
    "rdiv": lambda a, b: (1 + 1j) / a,
    "pow": lambda a, b: a ** b,
    "pow_scalar": lambda a, b: a ** 3,
    "pow_scalar_half": lambda a, b: a ** 0.5,
    "exp": lambda a, b: a.exp() * b,
    "log": lambda a, b: a.log(),
    "sqrt": lambda a, b: a.sqrt(),
    "abs": lambda a, b: a.abs() * b.abs(),
    "angle": lambda a, b: a.angle(),
    "real_imag": lambda a, b: a.real * b.imag,
    "conj": lambda a, b: a.conj() * b,
    "conj_physical": lambda a, b: a.conj_physical() * b,
    "view_as_real": lambda a, b: a.view_as_real() if hasattr(a, "view_as_real") else a,
    "sum": lambda a, b: (a * b).sum(0),
    "mean": lambda a, b: (a * b).mean(),
    "matmul": lambda a, b: a @ b.T,
    "mv": lambda a, b: a @ b[0],
    "sin_cos_tanh": lambda a, b: a.sin() * b.cos() + (a * 0.1).tanh() + a.reciprocal(),
    "bmm": lambda a, b: (a.unsqueeze(0) @ b.T.unsqueeze(0)),
    "mixed_real": lambda a, b: a * b.real,
    "rpow": lambda a, b: (2 - 1j) ** a + 3 ** b + (0.5 + 0.5j) ** a.real,
    "pow_complex_scalar": lambda a, b: a.real.abs() ** (1 + 0.5j) * b,
    "vector_norm": lambda a, b: a.norm() * b + (a - b).norm(p=1),
    "hyperbolic": lambda a, b: (a * 0.3).sinh() * b + (a * 0.2).cosh() + (b * 0.1).tan(),
    "inverse_trig": lambda a, b: (a * 0.2).asin() + (a * 0.2).acos() * b + (a * 0.3).atan(),
    "inverse_hyperbolic": lambda a, b: (a * 0.3).asinh() + a.acosh() * b + (a * 0.2).atanh(),
    "log2_log10_exp2": lambda a, b: a.log2() * b + a.log10() + (a * 0.3).exp2(),
    "sgn": lambda a, b: a.sgn() * b,
    "prod": lambda a, b: (a * b).prod(1),
    "cumprod": lambda a, b: (a * b).cumprod(1),
    "logsumexp": lambda a, b: (a * b * 0.1).logsumexp(1),
    "addcmul": lambda a, b: a.addcmul(a, b, value=0.5),
    "vdot": lambda a, b: a[0].vdot(b[1]) if hasattr(a, "vdot") else a,
    "baddbmm": lambda a, b: (a.unsqueeze(0) @ b.T.unsqueeze(0)).baddbmm(
        a.unsqueeze(0), b.T.unsqueeze(0), alpha=0.5),
    "addmv_addr": lambda a, b: a[:, 0].addmv(a, b[0]) + a[:, :2].addr(a[:, 0], b[0, :2]).sum(1),
    "to_complex": lambda a, b: a.real.to(a.dtype) * b,
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_grads(device: str, name: str) -> None:
    res = []
    for T, dev in ((torch, "cpu"), (ag, device)):
        a = _z(T, dev, T.complex128, grad=True)
        b = (_z(T, dev, T.complex128).flip(0) * 0.5).requires_grad_()
        out = GRADS[name](a, b)
        _loss(out).backward()
        res.append((out.detach(), a.grad, b.grad))
    ours, theirs = res[1], res[0]
    for x, y in zip(ours, theirs):
        if y is None:
            assert x is None
        else:
            same(x, y, rtol=1e-6, atol=1e-9, strides=False)


def test_grad_fn_names() -> None:
    for name in ("real", "imag", "conj_physical", "angle", "view_as_real"):
        z = [ag.tensor(Z, requires_grad=True), torch.tensor(Z, requires_grad=True)]
        ours, theirs = (getattr(T, name)(t) for T, t in zip((ag, torch), z))
        assert ours.grad_fn.name() == theirs.grad_fn.name()


def test_gradcheck_complex() -> None:
    a = ag.tensor(Z, dtype=ag.complex128, requires_grad=True)
    b = ag.tensor([[0.5 - 1j, 2 + 0.25j, 1 + 1j]], dtype=ag.complex128, requires_grad=True)
    assert gradcheck(lambda a, b: (a * b / (a + 3)).exp(), (a, b))
    assert gradcheck(lambda a: ag.view_as_real(a.log() @ a.T), (a,))


def test_real_view_writes() -> None:
    z, t = ag.tensor(Z), torch.tensor(Z)
    for x in (z, t):
        x.real.mul_(2)
        x.imag[0] = 7.0
    same(z, t)


CASES: dict[str, Case] = {
    "polar_mixed": lambda T, dev: T.polar(T.ones(2, device=dev), T.ones(2, device=dev).double()),
    "complex_int": lambda T, dev: T.complex(T.ones(2, dtype=T.int64, device=dev),
                                            T.ones(2, dtype=T.int64, device=dev)),
    "complex_broadcast_bad": lambda T, dev: T.complex(T.ones(2, device=dev),
                                                      T.ones(3, device=dev)),
    "lt": lambda T, dev: _z(T, dev) < _z(T, dev),
    "ge_scalar": lambda T, dev: _z(T, dev) >= 1,
    "gt_real_vs_complex_scalar": lambda T, dev: _x(T, dev) > 1j,
    "floor": lambda T, dev: _z(T, dev).floor(),
    "ceil": lambda T, dev: _z(T, dev).ceil(),
    "trunc": lambda T, dev: _z(T, dev).trunc(),
    "sign": lambda T, dev: _z(T, dev).sign(),
    "relu": lambda T, dev: _z(T, dev).relu(),
    "clamp": lambda T, dev: _z(T, dev).clamp(0, 1),
    "clamp_min": lambda T, dev: _z(T, dev).clamp(min=0),
    "max": lambda T, dev: _z(T, dev).max(),
    "min_dim": lambda T, dev: _z(T, dev).min(0),
    "amax": lambda T, dev: _z(T, dev).amax(1),
    "argmin": lambda T, dev: _z(T, dev).argmin(),
    "maximum": lambda T, dev: T.maximum(_z(T, dev), _z(T, dev)),
    "minimum_mixed": lambda T, dev: T.minimum(_x(T, dev), _z(T, dev)),
    "remainder": lambda T, dev: _z(T, dev) % 2,
    "rremainder": lambda T, dev: 2 % _z(T, dev),
    "floor_divide": lambda T, dev: _z(T, dev) // 2,
    "div_trunc": lambda T, dev: T.div(_z(T, dev), 2, rounding_mode="trunc"),
    "abs_": lambda T, dev: _z(T, dev).abs_(),
    "absolute_": lambda T, dev: _z(T, dev).absolute_(),
    "fmod": lambda T, dev: T.fmod(_z(T, dev), 2),
    "unique": lambda T, dev: _z(T, dev).unique(),
    "unique_dim": lambda T, dev: _z(T, dev).unique(dim=0),
    "unique_consecutive": lambda T, dev: T.unique_consecutive(_z(T, dev)),
    "median": lambda T, dev: _z(T, dev).median(),
    "nanmedian": lambda T, dev: _z(T, dev).nanmedian(),
    "linspace_bad_dtype": lambda T, dev: T.linspace(0, 1j, 3, dtype=T.float32, device=dev),
    "view_as_real_real": lambda T, dev: T.view_as_real(T.ones(2, device=dev)),
    "imag_real": lambda T, dev: T.ones(2, device=dev).imag,
    "backward_complex": lambda T, dev: T.ones(2, dtype=T.cfloat, device=dev,
                                              requires_grad=True).sum().backward(),
}

test_misuse = catalogue_test(CASES)


def test_save_load(tmp_path: Any) -> None:
    z = ag.tensor(Z, dtype=ag.complex128).T
    w = ag.ones(2, dtype=ag.cfloat, requires_grad=True)
    path = tmp_path / "c.pt"
    ag.save({"z": z, "w": w, "c": 1j, "n": complex(float("nan"), -2), "d": ag.cfloat}, path)
    out = ag.load(path)
    same(out["z"], torch.tensor(Z, dtype=torch.complex128).T, strides=False)
    assert out["w"].requires_grad and out["w"].dtype is ag.complex64
    assert out["c"] == 1j and out["n"].imag == -2 and out["d"] is ag.cfloat


def test_random_factories(device: str) -> None:
    """randn/rand with complex dtypes: pairs of real draws (normal parts of variance 1/2,
    uniform parts in [0, 1)); the streams differ from PyTorch's, as for float dtypes."""
    z = ag.randn(4000, dtype=ag.cfloat, device=device)
    assert z.dtype is ag.complex64 and z.shape == (4000,)
    assert abs(z.real.var().item() - 0.5) < 0.06 and abs(z.imag.var().item() - 0.5) < 0.06
    u = ag.rand(3, 5, dtype=ag.cdouble, device=device)
    assert u.dtype is ag.complex128 and u.is_contiguous()
    assert bool(((u.real >= 0) & (u.real < 1) & (u.imag >= 0) & (u.imag < 1)).all())
    assert ag.randn_like(z[:3]).dtype is ag.complex64


@pytest.mark.parametrize("case", range(5))
def test_inplace_through_part_views_grads(device: str, case: int) -> None:
    """In-place ops on ``real``/``imag``/``view_as_real``/``view_as_complex`` views of graph
    tensors: the base's CopySlices sends each part of the gradient where it belongs."""
    res = []
    for T, dev in ((torch, "cpu"), (ag, device)):
        z = T.tensor([1 + 1j, 2 - 1j], device=dev, requires_grad=True)
        y = z * 1
        if case == 0:
            y.real.mul_(3)
        elif case == 1:
            y.imag.mul_(3)
        elif case == 2:
            T.view_as_real(y).mul_(3)
        elif case == 3:
            y[0].mul_(2j)
        else:
            w = T.view_as_real(y) * 1
            T.view_as_complex(w).mul_(2 - 1j)
            y = T.view_as_complex(w * T.tensor([1.0, 2.0], device=dev))
        (y.imag * 2 + y.real).sum().backward()
        res.append((y.detach(), z.grad))
    for a, b in zip(res[1], res[0]):
        same(a, b, strides=False)
