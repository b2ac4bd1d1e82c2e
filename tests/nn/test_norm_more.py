"""GroupNorm, InstanceNorm1d/2d/3d, RMSNorm, LocalResponseNorm, CrossMapLRN2d, BatchNorm3d and
SyncBatchNorm against the torch oracle from identical weights (float64, tolerance 1e-9 relative):
outputs, input and parameter gradients, running statistics over training steps then eval mode,
grad_fn names, reprs, state_dict keys and shapes (and a strict load of torch's); gradcheck and
gradgradcheck of the functions, second derivatives against torch; errors and warnings."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, to_np
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import copy_params, grads_of, second_grads

RNG = np.random.default_rng(7)
TOL = {"rtol": 1e-9, "atol": 1e-11}


def _pair(shape: tuple[int, ...], device: str, scale: float = 2.0) -> tuple[Any, Any]:
    x = RNG.standard_normal(shape) * scale + 0.5
    xo = ag.tensor(x.tolist(), dtype=ag.float64, device=device, requires_grad=True)
    return xo, torch.tensor(x, dtype=torch.float64, requires_grad=True)


def _modules(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
             device: str) -> tuple[Any, Any]:
    ours = getattr(ag.nn, cls)(*args, **kwargs).to(ag.float64)
    theirs = getattr(torch.nn, cls)(*args, **kwargs).to(torch.float64)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    with ag.no_grad():
        for p in ours.parameters():
            p.copy_(ag.tensor(RNG.standard_normal(tuple(p.shape)).tolist(), dtype=p.dtype))
    copy_params(ours, theirs)
    return ours.to(device), theirs


def _buffers_same(ours: Any, theirs: Any) -> None:
    bo, bt = dict(ours.named_buffers()), dict(theirs.named_buffers())
    assert list(bo) == list(bt)
    for name, b in bt.items():
        assert bo[name].dtype.name == str(b.dtype).split(".")[1], name
        assert_same(bo[name], b, **TOL)


# (class, args, kwargs, input shape); CrossMapLRN2d's gradients are compared with gradcheck only
# (PyTorch's hand-written backward is not its forward's derivative: see CrossMapLRN2d).
MODULES: list[tuple[str, tuple[Any, ...], dict[str, Any], tuple[int, ...]]] = [
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (3, 6), {"eps": 1e-3}, (2, 6, 2, 3)),
    ("GroupNorm", (1, 3), {"affine": False}, (2, 3)),
    ("GroupNorm", (4, 4), {"bias": False}, (2, 4, 3)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 5)),
    ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, (2, 3, 4)),
    ("InstanceNorm1d", (3,), {"track_running_stats": True, "momentum": None}, (3, 4)),
    ("InstanceNorm2d", (2,), {"affine": True, "momentum": 0.3}, (3, 2, 3, 2)),
    ("InstanceNorm2d", (2,), {"track_running_stats": True}, (2, 3, 3)),
    ("InstanceNorm3d", (2,), {"affine": True, "bias": False, "track_running_stats": True},
     (2, 2, 2, 2, 3)),
    ("BatchNorm3d", (2,), {}, (2, 2, 3, 2, 2)),
    ("BatchNorm3d", (2,), {"momentum": None, "affine": False}, (3, 2, 1, 2, 1)),
    ("SyncBatchNorm", (3,), {}, (4, 3)),
    ("SyncBatchNorm", (3,), {"momentum": None, "bias": False}, (2, 3, 2, 2, 1, 2)),
    ("RMSNorm", (4,), {}, (3, 4)),
    ("RMSNorm", ([2, 3],), {"eps": 1e-3}, (2, 2, 3)),
    ("RMSNorm", ((3,),), {"elementwise_affine": False}, (3,)),
    ("LocalResponseNorm", (3,), {"alpha": 0.5}, (2, 5, 3)),
    ("LocalResponseNorm", (2,), {"alpha": 0.3, "beta": 0.6, "k": 2.0}, (2, 4, 2, 3)),
    ("LocalResponseNorm", (4,), {"alpha": 0.5}, (1, 3, 2, 1, 2)),
    ("CrossMapLRN2d", (3,), {"alpha": 0.5}, (2, 6, 2, 2)),
    ("CrossMapLRN2d", (4, 0.3, 0.6, 2), {}, (1, 7, 2, 1)),
    ("CrossMapLRN2d", (1,), {"alpha": 0.5}, (1, 2, 2, 2)),
]


@pytest.mark.parametrize("cls, args, kwargs, shape", MODULES)
def test_module_train_then_eval(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                shape: tuple[int, ...], device: str) -> None:
    ours, theirs = _modules(cls, args, kwargs, device)
    for training in (True, True, False):
        ours.train(training)
        theirs.train(training)
        xo, xt = _pair(shape, device, scale=1.5 if training else 3.0)
        out_o, out_t = ours(xo), theirs(xt)
        assert_same(out_o, out_t, **TOL)
        if cls == "CrossMapLRN2d":
            continue
        assert out_o.grad_fn.name() == out_t.grad_fn.name()
        assert_same(grads_of(out_o, [xo, *ours.parameters()]),
                    grads_of(out_t, [xt, *theirs.parameters()]), **TOL)
        _buffers_same(ours, theirs)


@pytest.mark.parametrize("cls, args, kwargs", [
    ("GroupNorm", (2, 4), {}), ("InstanceNorm2d", (3,), {"affine": True,
                                                         "track_running_stats": True}),
    ("RMSNorm", ([2, 3],), {}), ("SyncBatchNorm", (3,), {}), ("BatchNorm3d", (2,), {}),
])
def test_loads_torch_state_dict(cls: str, args: tuple[Any, ...], kwargs: dict[str, Any],
                                device: str) -> None:
    theirs = getattr(torch.nn, cls)(*args, **kwargs).double()
    with torch.no_grad():
        for v in theirs.state_dict().values():
            if v.is_floating_point():
                v.copy_(torch.randn(v.shape))
    ours = getattr(ag.nn, cls)(*args, **kwargs, dtype=ag.float64, device=device)
    ours.load_state_dict({k: ag.tensor(v.numpy().tolist(), dtype=getattr(ag, str(v.dtype)[6:]),
                                       device=device)
                          for k, v in theirs.state_dict().items()}, strict=True)
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_array_equal(to_np(a), b.numpy(), err_msg=name)


def test_defaults_and_reset(device: str) -> None:
    gn = ag.nn.GroupNorm(2, 4, device=device)
    assert to_np(gn.weight).tolist() == [1.0] * 4 and to_np(gn.bias).tolist() == [0.0] * 4
    rms = ag.nn.RMSNorm(3, device=device)
    assert rms.normalized_shape == (3,) and rms.eps is None and to_np(rms.weight).tolist() == [1.0] * 3
    inorm = ag.nn.InstanceNorm1d(3, track_running_stats=True, momentum=None, device=device)
    inorm(ag.randn(2, 3, 4, device=device))
    # NOTE: InstanceNorm never counts batches: momentum=None leaves the running stats alone.
    assert int(inorm.num_batches_tracked) == 0 and to_np(inorm.running_mean).tolist() == [0.0] * 3


def test_convert_sync_batchnorm_shares_state(device: str) -> None:
    bn = ag.nn.BatchNorm2d(3, device=device)
    model = ag.nn.Sequential(ag.nn.Linear(2, 2), ag.nn.Sequential(bn)).eval()
    conv = ag.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    sync = conv[1][0]
    assert type(sync) is ag.nn.SyncBatchNorm and sync.weight is bn.weight
    assert sync.running_var is bn.running_var and not sync.training
    assert repr(conv) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(
        torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.BatchNorm2d(3)))))


# ---- functions ---------------------------------------------------------------------------------

def _t(T: Any, dev: str, a: Any, grad: bool = False) -> Any:
    return T.tensor(np.asarray(a).tolist(), dtype=T.float64, device=dev, requires_grad=grad)


def test_functional_instance_norm_running_stats(device: str) -> None:
    x, w, b = RNG.standard_normal((3, 2, 4)), RNG.standard_normal(2), RNG.standard_normal(2)
    rm, rv = RNG.standard_normal(2), RNG.random(2) + 0.5
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        mean, var = _t(T, dev, rm), _t(T, dev, rv)
        F = T.nn.functional
        a = F.instance_norm(_t(T, dev, x), mean, var, _t(T, dev, w), _t(T, dev, b), momentum=0.2)
        c = F.instance_norm(_t(T, dev, x), mean, var, use_input_stats=False)
        res.append([a, c, mean, var])
    assert_same(res[0], res[1], **TOL)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("wdtype", [None, "float32", "float64"])
def test_rms_norm_dtypes(dtype: str, wdtype: str | None, device: str) -> None:
    """The output keeps the input's dtype; half inputs are computed in float32; eps None is the
    machine epsilon of the computing dtype (here tiny inputs make eps visible)."""
    x = RNG.standard_normal((3, 4)) * 1e-4
    w = RNG.standard_normal(4)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        xs = T.tensor(x.tolist(), dtype=getattr(T, dtype), device=dev)
        ws = None if wdtype is None else T.tensor(w.tolist(), dtype=getattr(T, wdtype), device=dev)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append(T.nn.functional.rms_norm(xs, [4], ws))
    assert res[0].dtype.name == dtype
    tol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}[dtype]
    assert_same(res[0], res[1], rtol=tol, atol=tol)


def test_rms_norm_dtype_mismatch_warns_once(monkeypatch: pytest.MonkeyPatch,
                                            device: str) -> None:
    """PyTorch's warning (TORCH_WARN_ONCE: once per process) for a weight of another dtype."""
    from autograd_gpu.nn import _normalization

    monkeypatch.setattr(_normalization, "_RMS_DTYPE_WARNED", False)
    x, w = ag.randn(2, 3, device=device), ag.ones(3, dtype=ag.float64, device=device)
    caught = _warned(lambda: [ag.nn.functional.rms_norm(x, [3], w) for _ in range(2)])
    assert caught == ["UserWarning: Mismatch dtype between input and weight: input dtype = "
                      "float, weight dtype = double, Cannot dispatch to fused implementation."]


def test_group_norm_empty_batch(device: str) -> None:
    for T, dev in ((ag, device), (torch, "cpu")):
        out = T.nn.functional.group_norm(T.zeros(0, 4, 3, device=dev), 2)
        assert tuple(out.shape) == (0, 4, 3)
    assert tuple(ag.nn.functional.local_response_norm(ag.zeros(0, 3, 2), 2).shape) == (0, 3, 2)


def _leaves(device: str, *shapes: tuple[int, ...]) -> list[Any]:
    return [ag.tensor(RNG.standard_normal(s).tolist(), dtype=ag.float64, device=device,
                      requires_grad=True) for s in shapes]


F_GRADCHECK: dict[str, tuple[Any, list[tuple[int, ...]]]] = {
    "group_norm": (lambda x, w, b: ag.nn.functional.group_norm(x, 2, w, b),
                   [(2, 4, 3), (4,), (4,)]),
    "group_norm_plain": (lambda x: ag.nn.functional.group_norm(x, 3), [(2, 6)]),
    "instance_norm": (lambda x, w, b: ag.nn.functional.instance_norm(x, weight=w, bias=b),
                      [(2, 3, 4), (3,), (3,)]),
    "rms_norm": (lambda x, w: ag.nn.functional.rms_norm(x, [2, 3], w, 1e-3),
                 [(2, 2, 3), (2, 3)]),
    "local_response_norm": (lambda x: ag.nn.functional.local_response_norm(x, 3, 0.5),
                            [(2, 4, 3)]),
    "local_response_norm_4d": (lambda x: ag.nn.functional.local_response_norm(x, 2, 0.4, 0.6),
                               [(1, 3, 2, 2)]),
    "cross_map_lrn2d": (lambda x: ag.nn.CrossMapLRN2d(3, 0.5)(x), [(1, 5, 2, 2)]),
}


@pytest.mark.parametrize("name", sorted(F_GRADCHECK))
def test_gradcheck_gradgradcheck(name: str, device: str) -> None:
    fn, shapes = F_GRADCHECK[name]
    leaves = _leaves(device, *shapes)
    assert ag.autograd.gradcheck(fn, leaves)
    assert ag.autograd.gradgradcheck(fn, leaves)


@pytest.mark.parametrize("which", ["group", "instance", "rms", "lrn"])
def test_second_derivatives_match_torch(which: str, device: str) -> None:
    x, w = RNG.standard_normal((2, 4, 3)), RNG.standard_normal(4)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        xs, ws = _t(T, dev, x, True), _t(T, dev, w, True)

        def loss(T: Any = T, xs: Any = xs, ws: Any = ws) -> Any:
            F = T.nn.functional
            out = {"group": lambda: F.group_norm(xs, 2, ws),
                   "instance": lambda: F.instance_norm(xs, weight=ws),
                   "rms": lambda: F.rms_norm(xs.transpose(1, 2), [4], ws),
                   "lrn": lambda: F.local_response_norm(xs, 3, 0.5) * ws.view(4, 1)}[which]()
            return (out * out * out).sum()

        res.append([second_grads(loss(), xs), second_grads(loss(), ws, seed=3)])
    assert_same(res[0], res[1], rtol=1e-8, atol=1e-10)


# ---- errors and warnings -----------------------------------------------------------------------

ERRORS = {
    "gn_groups": lambda T, d: T.nn.functional.group_norm(T.randn(2, 4, 3, device=d), 3),
    "gn_weight": lambda T, d: T.nn.functional.group_norm(T.randn(2, 4, 3, device=d), 2,
                                                         T.ones(3, device=d)),
    "gn_bias": lambda T, d: T.nn.functional.group_norm(T.randn(2, 4, device=d), 2, None,
                                                       T.ones(2, 2, device=d)),
    "gn_1d": lambda T, d: T.nn.functional.group_norm(T.randn(4, device=d), 2),
    "gn_one_value": lambda T, d: T.nn.functional.group_norm(T.randn(1, 2, device=d), 2),
    "gn_long": lambda T, d: T.nn.functional.group_norm(T.ones(2, 4, 3, device=d).long(), 2),
    # NOTE: on the CPU only: the message names the device type ("mixed dtype (CPU)").
    "gn_mixed": lambda T, d: T.nn.functional.group_norm(T.randn(2, 4), 2, T.ones(4).double()),
    "gn_module": lambda T, d: T.nn.GroupNorm(3, 4),
    "gn_module_channels": lambda T, d: T.nn.GroupNorm(2, 4).to(d)(T.randn(2, 6, 3, device=d)),
    "in_one_spatial": lambda T, d: T.nn.functional.instance_norm(T.randn(2, 3, 1, device=d)),
    "in_2d": lambda T, d: T.nn.functional.instance_norm(T.randn(2, 3, device=d)),
    "in_no_stats": lambda T, d: T.nn.functional.instance_norm(T.randn(2, 3, 4, device=d),
                                                              use_input_stats=False),
    "in_one_stat": lambda T, d: T.nn.functional.instance_norm(T.randn(2, 3, 4, device=d),
                                                              T.zeros(3, device=d), None),
    "in_stat_size": lambda T, d: T.nn.functional.instance_norm(
        T.randn(2, 3, 4, device=d), T.zeros(2, device=d), T.ones(2, device=d)),
    "in_weight_size": lambda T, d: T.nn.functional.instance_norm(T.randn(2, 3, 4, device=d),
                                                                 weight=T.ones(2, device=d)),
    "in_long": lambda T, d: T.nn.functional.instance_norm(T.ones(2, 3, 4, device=d).long()),
    "in_module_affine": lambda T, d: T.nn.InstanceNorm1d(3, affine=True).to(d)(
        T.randn(2, 4, 5, device=d)),
    "in_module_rank": lambda T, d: T.nn.InstanceNorm1d(3)(T.randn(2, 3, 4, 5, device=d)),
    "in3d_module_rank": lambda T, d: T.nn.InstanceNorm3d(3)(T.randn(3, 4, 5, device=d)),
    "in_eval_tracked": lambda T, d: T.nn.InstanceNorm1d(3, track_running_stats=True).to(d).eval()(
        T.arange(6.0, device=d).view(2, 3, 1)),
    "in_eval_untracked": lambda T, d: T.nn.InstanceNorm1d(3).eval()(T.randn(2, 3, 1, device=d)),
    "rms_shape": lambda T, d: T.nn.functional.rms_norm(T.randn(2, 4, 3, device=d), (4,)),
    "rms_shape2": lambda T, d: T.nn.functional.rms_norm(T.randn(2, 4, 3, device=d), (2, 3)),
    "rms_weight": lambda T, d: T.nn.functional.rms_norm(T.randn(2, 3, device=d), (3,),
                                                        T.ones(4, device=d)),
    "rms_empty_shape": lambda T, d: T.nn.functional.rms_norm(T.randn(2, 3, device=d), ()),
    "rms_int_shape": lambda T, d: T.nn.functional.rms_norm(T.randn(2, 3, device=d), 3),
    "rms_long": lambda T, d: T.nn.functional.rms_norm(T.ones(2, 3, device=d).long(), (3,)),
    "lrn_2d": lambda T, d: T.nn.functional.local_response_norm(T.randn(2, 3, device=d), 2),
    "lrn_size0": lambda T, d: T.nn.functional.local_response_norm(T.randn(2, 3, 4, device=d), 0),
    "lrn_size0_4d": lambda T, d: T.nn.LocalResponseNorm(0)(T.randn(2, 3, 4, 2, device=d)),
    "cmlrn_3d": lambda T, d: T.nn.CrossMapLRN2d(3)(T.randn(2, 3, 4, device=d)),
    "bn3d_rank": lambda T, d: T.nn.BatchNorm3d(3)(T.randn(2, 3, 4, 4, device=d)),
    "bn3d_one_value": lambda T, d: T.nn.BatchNorm3d(3)(T.randn(1, 3, 1, 1, 1, device=d)),
    "sync_1d": lambda T, d: T.nn.SyncBatchNorm(3)(T.randn(2, device=d)),
    "sync_no_channels": lambda T, d: T.nn.SyncBatchNorm(0)(T.randn(2, 0, device=d)),
    "sync_one_value": lambda T, d: T.nn.SyncBatchNorm(3)(T.randn(1, 3, device=d)),
    "in_load_running_stats": lambda T, d: T.nn.InstanceNorm1d(2).load_state_dict(
        {"running_mean": T.zeros(2), "running_var": T.ones(2)}, strict=False),
    "sync_eval": lambda T, d: T.nn.SyncBatchNorm(3).to(d).eval()(T.ones(2, 3, device=d)),
}

test_misuse = catalogue_test(ERRORS)


def _warned(fn: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [f"{c.category.__name__}: {c.message}".split(" (Triggered")[0] for c in caught]


def test_instance_norm_feature_warning(device: str) -> None:
    ours = _warned(lambda: ag.nn.InstanceNorm1d(3)(ag.randn(2, 4, 5, device=device)))
    theirs = _warned(lambda: torch.nn.InstanceNorm1d(3)(torch.randn(2, 4, 5)))
    assert ours == theirs and len(ours) == 1
