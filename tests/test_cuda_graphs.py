"""The explicit CUDA graph API (``autograd_gpu.cuda.CUDAGraph``, ``cuda.graph``,
``graph_pool_handle``, ``is_current_stream_capturing``, ``make_graphed_callables``).

Every test but the CPU-build ones needs CUDA: they run on a GPU and on the NumPy stand-in
(``AUTOGRAD_GPU_FAKE_CUDA=1`` or ``=emulate``, whose streams record and replay their work, see
``tests/fake_cupy/_graph.py``), and skip on a plain CPU run. Replays are compared with eager
runs on the same device: bit for bit, except where a GPU's atomics may reorder sums (``_same``).
"""

from __future__ import annotations

import copy
import gc
import warnings

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu import cuda
from autograd_gpu.backends import cuda_support
from tests import fake_cupy

CUDA = cuda_support.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA: a GPU, or the NumPy stand-in "
                                "(AUTOGRAD_GPU_FAKE_CUDA=1 or emulate)")
FAKE = fake_cupy.installed()
CAPTURE_ERROR = "CUDA error: operation not permitted when stream is capturing"
NO_CAPTURE = "Called CUDAGraph::replay without a preceding successful capture."


def _host(t: ag.Tensor) -> np.ndarray:
    return np.array(t.detach().cpu().numpy())


def _same(a: ag.Tensor, b: ag.Tensor, atomics: bool = False) -> None:
    """Equal bit for bit; with ``atomics`` on a real GPU, equal to float rounding.

    NOTE: on a GPU, reductions whose partial sums meet through atomics (and cuBLAS's split-K
    choices) may add in a different order from one launch to the next; the stand-in runs NumPy
    and must match exactly.
    """
    x, y = _host(a), _host(b)
    if atomics and not FAKE:
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(x, y)


def _no_capture_left() -> None:
    """Nothing of a capture remains: none under way, allocations from CuPy's default pool."""
    from autograd_gpu.backends import cupy_backend

    assert cuda_support.CAPTURE[0] is None
    assert not cuda.is_current_stream_capturing()
    assert cupy_backend.SERVING[0] is cuda_support._cupy().get_default_memory_pool()


# ---- capture and replay --------------------------------------------------------------------

@needs_cuda
def test_replay_sees_static_inputs_changed_in_place() -> None:
    x = ag.randn(5, 4, device="cuda")
    w = ag.randn(4, 3, device="cuda")
    b = ag.randn(3, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        assert cuda.is_current_stream_capturing()
        y = (x @ w + b).relu() * 2.0
        s = y.sum(dim=0)
    _no_capture_left()
    if fake_cupy.kernels_emulated():  # NOTE: our RawKernels were captured, not only CuPy's work
        assert any("<float>" in n for n in cuda_support.graphs().node_names(g._graph))
    for k in range(3):
        x.copy_(ag.randn(5, 4, device="cuda"))
        w.mul_(0.5 + k)
        g.replay()
        expected = (x @ w + b).relu() * 2.0
        _same(y, expected)
        _same(s, expected.sum(dim=0), atomics=True)


@needs_cuda
def test_capture_leaves_memory_as_it_was() -> None:
    """Capturing runs nothing (a GPU) or puts memory back (the stand-in): an in-place update in
    the captured region happens on replay only."""
    p = ag.ones(4, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        p.add_(1.0)
    _same(p, ag.ones(4, device="cuda"))
    g.replay()
    g.replay()
    _same(p, ag.full((4,), 3.0, device="cuda"))


def _mlp(dtype: ag.dtype = ag.float32) -> ag.nn.Module:
    ag.manual_seed(1)
    return ag.nn.Sequential(ag.nn.Linear(8, 16), ag.nn.ReLU(), ag.nn.Linear(16, 4)).to(
        device="cuda", dtype=dtype)


def _step(model: ag.nn.Module, opt: ag.optim.Optimizer, x: ag.Tensor, y: ag.Tensor,
          set_to_none: bool = False) -> ag.Tensor:
    # NOTE: set_to_none=False: backward accumulates into the existing .grad; True: backward makes
    # .grad anew (inside a capture: from the graph's pool, PyTorch's whole-network example)
    opt.zero_grad(set_to_none=set_to_none)
    loss = ag.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


@needs_cuda
@pytest.mark.parametrize("foreach,set_to_none", [(True, False), (False, False), (True, True)])
def test_captured_training_step_equals_eager_steps(foreach: bool, set_to_none: bool) -> None:
    graphed, eager = _mlp(), _mlp()
    opts = [ag.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, foreach=foreach)
            for m in (graphed, eager)]
    data = [(ag.randn(6, 8, device="cuda"), ag.randn(6, 4, device="cuda")) for _ in range(6)]
    static_x, static_y = data[0][0].clone(), data[0][1].clone()
    for model, opt in zip((graphed, eager), opts):  # warm-up: .grad and momentum exist
        for x, y in data[:2]:
            _step(model, opt, x, y)
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        static_loss = _step(graphed, opts[0], static_x, static_y, set_to_none)
    for x, y in data[2:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        loss = _step(eager, opts[1], x, y, set_to_none)
        _same(static_loss, loss, atomics=True)
    for p, q in zip(graphed.parameters(), eager.parameters()):
        _same(p, q, atomics=True)
        _same(p.grad, q.grad, atomics=True)


@needs_cuda
def test_internal_capture_entry_point() -> None:
    """``cuda_graphs._capture``: warm up, capture, replay (for compile's reduce-overhead)."""
    from autograd_gpu.cuda_graphs import _capture

    a = ag.randn(7, device="cuda")
    g, out = _capture(lambda: a.exp() + 1.0, warmup=2)
    a.fill_(0.5)
    g.replay()
    _same(out, a.exp() + 1.0)


# ---- make_graphed_callables ----------------------------------------------------------------

def _torch_mlp(ours: ag.nn.Module) -> torch.nn.Module:
    m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    m = m.double()
    with torch.no_grad():
        for (_, p), q in zip(m.named_parameters(), ours.parameters()):
            p.copy_(torch.from_numpy(_host(q)))
    return m


@needs_cuda
def test_make_graphed_module_matches_eager_and_torch() -> None:
    model = _mlp(ag.float64)
    eager = copy.deepcopy(model)
    reference = _torch_mlp(model)
    graphed = cuda.make_graphed_callables(model, (ag.randn(3, 8, device="cuda",
                                                           dtype=ag.float64),))
    assert graphed is model
    for _ in range(2):
        x = ag.randn(3, 8, device="cuda", dtype=ag.float64)
        out, want = graphed(x), eager(x)
        _same(out, want, atomics=True)
        out.square().sum().backward()
        want.square().sum().backward()
        tx = torch.from_numpy(_host(x))
        reference(tx).square().sum().backward()
        np.testing.assert_allclose(_host(out), reference(tx).detach().numpy(), rtol=1e-12)
    for p, q, r in zip(model.parameters(), eager.parameters(), reference.parameters()):
        _same(p.grad, q.grad, atomics=True)
        np.testing.assert_allclose(_host(p.grad), r.grad.numpy(), rtol=1e-12, atol=1e-14)
    model.eval()  # NOTE: another training mode runs the original forward
    assert model(x).grad_fn is not None and type(model(x).grad_fn).__name__ == "AddmmBackward0"


@needs_cuda
def test_make_graphed_function_and_tuple() -> None:
    def f(a: ag.Tensor, b: ag.Tensor) -> ag.Tensor:
        return (a * b).tanh() + a

    def h(c: ag.Tensor) -> tuple[ag.Tensor, ag.Tensor]:
        return c.exp(), c * 3.0

    sample_a = ag.randn(4, 3, device="cuda", dtype=ag.float64, requires_grad=True)
    sample_b = ag.randn(4, 3, device="cuda", dtype=ag.float64)
    sample_c = ag.randn(4, 3, device="cuda", dtype=ag.float64, requires_grad=True)
    gf, gh = cuda.make_graphed_callables((f, h), ((sample_a, sample_b), (sample_c,)),
                                         num_warmup_iters=1)
    a = ag.randn(4, 3, device="cuda", dtype=ag.float64, requires_grad=True)
    b = ag.randn(4, 3, device="cuda", dtype=ag.float64)
    e, t = gh(gf(a, b))
    (e.sum() + t.square().sum()).backward()
    a2 = a.detach().clone().requires_grad_(True)
    e2, t2 = h(f(a2, b))
    (e2.sum() + t2.square().sum()).backward()
    _same(e, e2)
    _same(a.grad, a2.grad)
    ta = torch.from_numpy(_host(a)).requires_grad_(True)
    tb = torch.from_numpy(_host(b))
    tc = (ta * tb).tanh() + ta
    (tc.exp().sum() + (tc * 3.0).square().sum()).backward()
    np.testing.assert_allclose(_host(a.grad), ta.grad.numpy(), rtol=1e-12)


@needs_cuda
def test_make_graphed_callables_checks() -> None:
    model = _mlp()
    model.register_forward_hook(lambda *a: None)
    x = ag.randn(2, 8, device="cuda")
    with pytest.raises(AssertionError, match="^Modules must not have hooks registered"):
        cuda.make_graphed_callables(model, (x,))
    with pytest.raises(AssertionError, match="^In the beta API, sample_args for each callable"):
        cuda.make_graphed_callables(lambda a, n: a * n, (x, 2))
    model = _mlp()
    model.register_buffer("b", ag.zeros(2, device="cuda", requires_grad=True))
    with pytest.raises(AssertionError, match="only parameters may be trainable"):
        cuda.make_graphed_callables(model, (x,))


# ---- memory --------------------------------------------------------------------------------

@needs_cuda
def test_private_pool_is_counted_and_not_reused() -> None:
    x = ag.randn(64, 32, device="cuda")
    w = ag.randn(32, 16, device="cuda")
    gc.collect()  # NOTE: earlier tests' cyclic garbage must not be freed midway
    base = cuda.memory_allocated()
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = (x @ w).relu() + 1.0  # NOTE: temporaries die inside; y is a static output
    assert cuda.memory_allocated() >= base + y.numel() * 4
    handle = g.pool()
    assert handle.reserved() >= y.numel() * 4
    assert cuda.memory_reserved() >= handle.reserved()
    captured = y.data_ptr()
    others = [ag.full((64, 16), 7.0, device="cuda") for _ in range(4)]
    assert all(o.data_ptr() != captured for o in others)
    x.copy_(ag.randn(64, 32, device="cuda"))
    g.replay()
    _same(y, (x @ w).relu() + 1.0)
    for o in others:
        _same(o, ag.full((64, 16), 7.0, device="cuda"))
    shared = cuda.CUDAGraph()
    with cuda.graph(shared, pool=handle):
        z = y * 2.0
    assert shared.pool() is handle
    g.replay()
    shared.replay()
    _same(z, y * 2.0)
    del y, z, others, o
    g.reset()
    shared.reset()
    gc.collect()
    assert cuda.memory_allocated() == base


# ---- refusals and misuse -------------------------------------------------------------------

_REFUSED = {
    "item": (lambda t: t.sum().item(), "Tensor.item()"),
    "tolist": (lambda t: t.tolist(), "Tensor.tolist()"),
    "bool": (lambda t: bool(t[0] > 0), "bool() of a CUDA tensor"),
    "cpu": (lambda t: t.cpu(), "a copy of CUDA memory to the host"),
    "print": (lambda t: repr(t), "printing a CUDA tensor"),
    "mask_index": (lambda t: t[t > 0], "indexing with a boolean mask"),
    "masked_select": (lambda t: t.masked_select(t > 0), "a result shaped by a mask"),
    "unforeseen_sync": (lambda t: t.backend.xp.flatnonzero(t._data), "an operation in the "),
    "nonzero": (lambda t: t.nonzero(), ""),
    "rand": (lambda t: ag.rand(3, device="cuda"), "rand() (a random draw from a CUDA"),
    "dropout": (lambda t: ag.nn.functional.dropout(t, 0.5), "dropout() (a random draw"),
}


@needs_cuda
@pytest.mark.parametrize("case", sorted(_REFUSED))
def test_capture_unsafe_operations_are_refused(case: str) -> None:
    fn, what = _REFUSED[case]
    t = ag.randn(4, device="cuda")
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError) as info:
        with cuda.graph(g):
            fn(t)
    assert str(info.value).startswith(f"{CAPTURE_ERROR}: {what}")
    _no_capture_left()
    with pytest.raises(RuntimeError, match=f"^{NO_CAPTURE}"):
        g.replay()


@needs_cuda
def test_exception_inside_capture_ends_it_cleanly() -> None:
    x = ag.ones(3, device="cuda")
    g = cuda.CUDAGraph()
    gc.collect()
    base = cuda.memory_allocated()
    with pytest.raises(ValueError, match="^boom$"):
        with cuda.graph(g):
            x.mul_(5.0)
            y = x + 1.0
            raise ValueError("boom")
    _no_capture_left()
    del y
    gc.collect()
    assert cuda.memory_allocated() == base
    with pytest.raises(RuntimeError, match=f"^{NO_CAPTURE}"):
        g.replay()
    with cuda.graph(g):  # the same graph captures again
        x.mul_(2.0)
    g.replay()
    _same(x, ag.full((3,), 2.0, device="cuda"))


@needs_cuda
def test_api_misuse_errors() -> None:
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=f"^{NO_CAPTURE}"):
        g.replay()
    with pytest.raises(RuntimeError, match=r"^Called CUDAGraph::pool\(\) without a preceding"):
        g.pool()
    with pytest.raises(RuntimeError, match=r"^capture_end\(\) called before capture_begin\(\)"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="^CUDA graphs must be captured on a non-default "
                                           r"stream\. \(However, after capture"):
        g.capture_begin()
    with pytest.raises(RuntimeError, match="^Unknown capture error mode. Expected `global`"):
        with cuda.graph(g, capture_error_mode="loose"):
            pass
    _no_capture_left()
    x = ag.ones(2, device="cuda")
    with cuda.graph(g, capture_error_mode="thread_local"):
        with pytest.raises(RuntimeError, match=f"^{CAPTURE_ERROR}: capture_begin"):
            cuda.CUDAGraph().capture_begin()
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="^This CUDAGraph instance already owns a captured "
                                           "graph. To capture a new graph, create a new"):
        with cuda.graph(g):
            pass
    _no_capture_left()
    stream = cuda.graph.default_capture_stream
    h = cuda.CUDAGraph()
    with stream:
        h.capture_begin()
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="^Capture must end on the same stream it began on"):
        h.capture_end()
    with stream:
        h.capture_end()
    g.replay()
    h.replay()
    _same(x, ag.full((2,), 3.0, device="cuda"))


@needs_cuda
def test_debug_dump_and_empty_graph(tmp_path: object) -> None:
    x = ag.ones(2, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        x.add_(1.0)
    path = f"{tmp_path}/g.dot"
    with pytest.warns(UserWarning, match=r"^CUDA Graphs debug not enabled, set with "
                                         r"\[graph\]\.enable_debug_mode\(\)"):
        g.debug_dump(path)
    g.enable_debug_mode()
    try:
        g.debug_dump(path)
    finally:
        from autograd_gpu import cuda_graphs

        cuda_graphs._DEBUG[0] = False
    with open(path) as fh:
        assert fh.read().startswith("digraph cuda_graph {")
    if FAKE:  # NOTE: CuPy cannot count a graph's nodes; the stand-in can
        with pytest.warns(UserWarning, match="^The CUDA Graph is empty. This usually means"):
            with cuda.graph(cuda.CUDAGraph()):
                pass


# ---- without CUDA: a CPU build's errors ----------------------------------------------------

_CPU_BUILD = {
    "CUDAGraph": lambda m: m.cuda.CUDAGraph(),
    "graph_pool_handle": lambda m: m.cuda.graph_pool_handle(),
    "is_current_stream_capturing": lambda m: m.cuda.is_current_stream_capturing(),
    "graph": lambda m: m.cuda.graph(None),
    "make_graphed_callables": lambda m: m.cuda.make_graphed_callables(
        lambda a: a * 2, (m.ones(2, requires_grad=True),)),
    "make_graphed_callables_non_tensor": lambda m: m.cuda.make_graphed_callables(
        lambda a, n: a * n, (m.ones(2), 3)),
}


@pytest.mark.skipif(cuda_support._cupy() is not None,
                    reason="CuPy is importable here (a GPU or the stand-in): no CPU-build errors")
@pytest.mark.parametrize("case", sorted(_CPU_BUILD))
def test_cpu_build_errors_match_torch(case: str) -> None:
    fn = _CPU_BUILD[case]
    outcomes = []
    for mod in (torch, ag):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fn(mod)
                outcomes.append(None)
            except Exception as e:  # noqa: BLE001
                outcomes.append((type(e), str(e).split("\n")[0]))
    assert outcomes[0] is not None and outcomes[0] == outcomes[1], outcomes
