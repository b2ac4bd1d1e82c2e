"""histogram, histogramdd and Tensor.histogram against the oracle: int and tensor bins, range,
weight, density, equal and empty data, out=, several dims, the NotImplemented node with an
input that requires grad, misuse. (PyTorch runs them on the CPU only; ours on every device.)"""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, dtype: Any = None) -> Any:
    return T.tensor([1.0, 2.0, 1.0, 4.0, 2.5, 0.1, 0.7], dtype=dtype or T.float32, device=dev)


def _pts(T: Any, dev: str) -> Any:
    return T.tensor([[0.0, 1.0], [1.0, 2.0], [2.0, 0.5], [0.4, 1.9]], device=dev)


def _h(r: Any) -> Any:
    return tuple(r), str(r[0].dtype)


CASES: dict[str, Case] = {
    "int_bins": lambda T, dev: _h(T.histogram(_x(T, dev), 3)),
    "f64_many_bins": lambda T, dev: _h(T.histogram(_x(T, dev, T.float64), 10)),
    "tenth_bins": lambda T, dev: _h(T.histogram(T.tensor([0, 0.1, 0.2, 0.3, 0.7, 1.0], device=dev),
                                                10)),
    "range_density": lambda T, dev: _h(T.histogram(_x(T, dev), 3, range=(0.0, 5.0),
                                                   density=True)),
    "range_ints": lambda T, dev: _h(T.histogram(_x(T, dev), 2, range=(1, 3))),
    "tensor_bins": lambda T, dev: _h(T.histogram(_x(T, dev), T.tensor([0.0, 1.5, 3.0, 4.0],
                                                                      device=dev))),
    "weight": lambda T, dev: _h(T.histogram(_x(T, dev), bins=3, weight=T.arange(
        7.0, device=dev), density=True)),
    "weight_2d": lambda T, dev: _h(T.histogram(T.zeros(2, 3, device=dev), 2,
                                               weight=T.ones(6, device=dev))),
    "equal": lambda T, dev: _h(T.histogram(T.tensor([2.0, 2.0], device=dev), 2)),
    "empty": lambda T, dev: _h(T.histogram(T.tensor([], device=dev), 2)),
    "nan": lambda T, dev: T.histogram(T.tensor([1.0, float("nan")], device=dev), 2),
    "inf_range": lambda T, dev: T.histogram(_x(T, dev), 2, range=(1.0, float("inf"))),
    "zero_bins": lambda T, dev: T.histogram(_x(T, dev), 0),
    "one_edge": lambda T, dev: T.histogram(_x(T, dev), T.tensor([1.0], device=dev)),
    "empty_edges": lambda T, dev: T.histogram(_x(T, dev), T.tensor([], device=dev)),
    "edges_2d": lambda T, dev: T.histogram(_x(T, dev), T.ones(1, 3, device=dev)),
    "edges_dtype": lambda T, dev: T.histogram(_x(T, dev), T.ones(3, dtype=T.float64, device=dev)),
    "min_gt_max": lambda T, dev: T.histogram(_x(T, dev), 2, range=(3.0, 1.0)),
    "range_len": lambda T, dev: T.histogram(_x(T, dev), 2, range=(0, 1, 2)),
    "int_input": lambda T, dev: T.histogram(T.tensor([1, 2], device=dev), 2),
    "float_bins": lambda T, dev: T.histogram(_x(T, dev), 2.0),
    "weight_shape": lambda T, dev: T.histogram(_x(T, dev), 2, weight=T.ones(4, device=dev)),
    "weight_dtype": lambda T, dev: T.histogram(_x(T, dev), 2, weight=T.ones(
        7, dtype=T.float64, device=dev)),
    "out": lambda T, dev: tuple(T.histogram(_x(T, dev), 2, out=(T.empty(0, device=dev),
                                                                T.empty(0, device=dev)))),
    "out_dtype": lambda T, dev: T.histogram(_x(T, dev), 2, out=(
        T.empty(0, dtype=T.float64, device=dev), T.empty(0, device=dev))),
    "method": lambda T, dev: tuple(_x(T, dev).histogram(T.tensor([0.0, 2.0, 5.0], device=dev))),
    "grad_fn": lambda T, dev: T.histogram(_x(T, dev).requires_grad_(), 2).hist.grad_fn.name(),
    "backward": lambda T, dev: T.histogram(_x(T, dev).requires_grad_(), 2).hist.sum().backward(),
    "dd": lambda T, dev: _h((lambda r: (r.hist, *r.bin_edges))(T.histogramdd(_pts(T, dev),
                                                                             [2, 3]))),
    "dd_int": lambda T, dev: tuple(T.histogramdd(_pts(T, dev), 2)),
    "dd_range_weight_density": lambda T, dev: tuple(T.histogramdd(
        _pts(T, dev), [2, 3], range=[0.0, 2.0, 0.0, 3.0], density=True,
        weight=T.tensor([1.0, 2.0, 3.0, 4.0], device=dev))),
    "dd_tensor_bins": lambda T, dev: tuple(T.histogramdd(_pts(T, dev), [
        T.tensor([0.0, 1.0, 2.0], device=dev), T.tensor([0.0, 3.0], device=dev)])),
    "dd_3d": lambda T, dev: tuple(T.histogramdd(T.arange(12.0, device=dev).view(2, 3, 2),
                                                [2, 2], weight=T.ones(2, 3, device=dev))),
    "dd_empty": lambda T, dev: tuple(T.histogramdd(T.zeros(0, 2, device=dev), [2, 2])),
    "dd_bins_len": lambda T, dev: T.histogramdd(_pts(T, dev), [2, 3, 4]),
    "dd_range_len": lambda T, dev: T.histogramdd(_pts(T, dev), [2, 3], range=[0.0, 2.0]),
    "dd_1d": lambda T, dev: T.histogramdd(T.tensor([1.0, 2.0], device=dev), [2]),
    "dd_weight_shape": lambda T, dev: T.histogramdd(_pts(T, dev), [2, 3],
                                                    weight=T.ones(4, 1, device=dev)),
    "dd_zero_bins": lambda T, dev: T.histogramdd(_pts(T, dev), [2, 0]),
    "dd_long": lambda T, dev: T.histogramdd(_pts(T, dev).long(), [2, 2]),
    "dd_float_bins": lambda T, dev: T.histogramdd(_pts(T, dev), 2.0),
}

test_histogram = catalogue_test(CASES)
