"""The stand-in's stream capture (``tests/fake_cupy/_graph.py``) has a CUDA graph's semantics:
work on a capturing stream is recorded, memory that existed before the capture is left as it
was, ``Graph.launch`` redoes the work on the same buffers (reading inputs changed in place,
overwriting outputs in place), and what CUDA refuses during a capture raises CUDA's error and
invalidates the capture. Runs in every mode, without installing the fake."""

from __future__ import annotations

import numpy as np
import pytest

from tests.fake_cupy import _cupy as cp
from tests.fake_cupy import _cupyx

UNSUPPORTED = "cudaErrorStreamCaptureUnsupported: operation not permitted when stream is capturing"


def _capture(fn):  # type: ignore[no-untyped-def]
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        assert s.is_capturing() and cp.cuda.get_current_stream() is s
        out = fn()
        g = s.end_capture()
    assert cp.cuda.get_current_stream() is cp.cuda.Stream.null
    return g, out


def test_launch_redoes_the_work_in_place() -> None:
    x = cp.arange(6.0).reshape(2, 3)
    idx = cp.asarray(np.array([1, 0]))
    acc = cp.zeros(3)

    def work():  # type: ignore[no-untyped-def]
        y = cp.exp(x) * 2 + x.sum(axis=0)  # ufuncs, a method, a function
        acc[...] += y[idx].sum(axis=0)  # advanced indexing, in-place scatter
        z = cp.ascontiguousarray(x.T)
        cp.copyto(z, z * 3)
        return y, z, _cupyx.special.erf(x)

    g, (y, z, e) = _capture(work)
    np.testing.assert_array_equal(acc.get(), np.zeros(3))  # memory as before the capture
    for k in range(3):
        x[...] = cp.asarray(np.arange(6.0).reshape(2, 3) * (k + 1))
        idx[0] = k % 2
        before = acc.get()
        g.launch()
        hx = x.get()
        hy = np.exp(hx) * 2 + hx.sum(axis=0)
        np.testing.assert_array_equal(y.get(), hy)
        np.testing.assert_array_equal(z.get(), hx.T * 3)
        np.testing.assert_array_equal(acc.get(), before + hy[[k % 2, 0]].sum(axis=0))
        np.testing.assert_array_equal(e.get(), _cupyx.special.erf(x).get())
    assert "multiply" in g.names and "take" in g.names


@pytest.mark.parametrize("what", ["item", "get", "bool", "asnumpy", "repr", "from_host",
                                  "nonzero", "mask", "sync"])
def test_what_cuda_refuses_invalidates_the_capture(what: str) -> None:
    x = cp.arange(4.0)
    ops = {"item": lambda: x.sum().item(), "get": lambda: x.get(), "bool": lambda: bool(x[0]),
           "asnumpy": lambda: cp.asnumpy(x), "repr": lambda: repr(x),
           "from_host": lambda: cp.asarray(np.ones(2)), "nonzero": lambda: cp.nonzero(x),
           "mask": lambda: x[x > 1], "sync": lambda: cp.cuda.get_current_stream().synchronize()}
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        s.begin_capture()
        x += 1
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match=UNSUPPORTED):
            ops[what]()
        with pytest.raises(cp.cuda.runtime.CUDARuntimeError,
                           match="cudaErrorStreamCaptureInvalidated"):
            s.end_capture()
    assert not s.is_capturing()
    np.testing.assert_array_equal(x.get(), np.arange(4.0))


def test_capture_rules() -> None:
    with pytest.raises(RuntimeError, match="cannot capture on the default"):
        cp.cuda.Stream.null.begin_capture()
    s = cp.cuda.Stream(non_blocking=True)
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorIllegalState"):
        s.end_capture()
    x = cp.ones(2)
    with s:
        s.begin_capture()
        with cp.cuda.Stream.null:  # work on another stream is not captured
            x += 1
        x *= 3
        g = s.end_capture()
    np.testing.assert_array_equal(x.get(), [2.0, 2.0])
    g.launch()
    np.testing.assert_array_equal(x.get(), [6.0, 6.0])
    g2, _ = _capture(lambda: g.launch())  # a graph launched into a capture: a child graph
    np.testing.assert_array_equal(x.get(), [6.0, 6.0])
    g2.launch()
    np.testing.assert_array_equal(x.get(), [18.0, 18.0])
