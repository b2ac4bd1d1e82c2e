"""The NumPy stand-in for CuPy keeps CuPy's strictness (what makes it worth running the CUDA code
path on): host arrays refused, 0-d results, views, copies on transfer, no kernels; and it refuses
to load where real CuPy sees a GPU. Runs in every mode, without installing the fake."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from tests import fake_cupy
from tests.fake_cupy import _cupy as cp
from tests.fake_cupy import _cupyx


def test_host_arrays_are_refused_as_operands() -> None:
    a = cp.ones(3)
    for mix in (lambda: a + np.ones(3), lambda: np.ones(3) * a, lambda: cp.maximum(a, np.ones(3)),
                lambda: cp.where(a > 0, np.ones(3), 0), lambda: cp.concatenate([a, np.ones(3)]),
                lambda: a + [1.0, 2.0, 3.0]):
        with pytest.raises(TypeError, match="Unsupported type"):
            mix()
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    assert not isinstance(a, np.ndarray) and not hasattr(a, "__array_interface__")
    with pytest.raises(AttributeError):
        a.flags.writeable  # noqa: B018
    assert (a + np.float32(2) + 1).tolist() == [4.0, 4.0, 4.0]  # scalars are fine


def test_results_are_device_arrays_never_numpy_scalars() -> None:
    a = cp.arange(6.0).reshape(2, 3)
    for out in (a.sum(), cp.sum(a), a.max(), a[1, 2], np.sum(a), a.mean()):
        assert isinstance(out, cp.ndarray) and out.ndim == 0
    assert float(a.sum()) == 15.0 and int(a[1, 2]) == 5 and bool(a[0, 1])
    a[1, 2][...] = 50.0  # x[i] is a view, as in CuPy
    assert a[1, 2].item() == 50.0


def test_views_copies_and_transfers() -> None:
    a = cp.zeros((2, 3))
    v = a.T
    assert v.base is a and not v.flags.owndata and a.flags.owndata
    assert v.data.mem is a.data.mem and a[1].data.ptr == a.data.ptr + 24
    host = a.get()
    host[0, 0] = 1.0  # host copies never alias device memory
    assert a[0, 0].item() == 0.0 and cp.asnumpy(a) is not host
    assert cp.asarray(a) is a and cp.array(a) is not a
    assert a.__dlpack_device__() == (2, 0) and a.__cuda_array_interface__["version"] == 3
    b = cp.from_dlpack(a)
    b[0, 1] = 3.0
    assert a[0, 1].item() == 3.0
    with pytest.raises(BufferError):
        cp.from_dlpack(np.ones(2))


def test_setitem_and_scatter_add_follow_cupy() -> None:
    a = cp.zeros(4)
    a[1:3] = 2.0
    a[cp.asarray([0])] = np.array([5.0])  # advanced indices copy host values
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        a[1:3] = np.ones(2)
    with pytest.raises(TypeError, match="Unsupported type"):
        a[1:3] = [1.0, 2.0]
    _cupyx.scatter_add(a, cp.asarray([3, 3]), 1.0)
    assert a.tolist() == [5.0, 2.0, 2.0, 2.0]
    with pytest.raises(TypeError, match="scatter_add only supports"):
        _cupyx.scatter_add(cp.zeros(2, dtype="int64"), cp.asarray([0, 0]), 1)


def test_pool_counts_bytes_and_kernels_refuse() -> None:
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.empty(1000, dtype="float32")
    assert pool.used_bytes() == before + 4096  # rounded up to 512-byte blocks
    del a
    assert pool.used_bytes() == before and pool.total_bytes() >= before + 4096
    with pytest.raises(NotImplementedError, match="AUTOGRAD_GPU_KERNELS=0"):
        cp.RawModule(code="", name_expressions=["f"]).get_function("f")


def test_install_refuses_where_real_cupy_sees_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    real = types.ModuleType("cupy")
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1)
    real.cuda = types.SimpleNamespace(runtime=runtime)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", real)
    assert fake_cupy.real_gpu_count() == 1
    with pytest.raises(fake_cupy.RealGPUError, match="would hide the real GPU"):
        fake_cupy.install()
    assert sys.modules["cupy"] is real


def test_out_of_range_fancy_indices_wrap_as_in_cupy() -> None:
    a = cp.arange(6.0).reshape(2, 3)
    assert a[cp.asarray([0, 2, -3])].tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0],
                                                   [3.0, 4.0, 5.0]]
    assert a[:, cp.asarray([4])].tolist() == [[1.0], [4.0]]
    a[cp.asarray([3])] = 9.0
    assert a.tolist() == [[0.0, 1.0, 2.0], [9.0, 9.0, 9.0]]
