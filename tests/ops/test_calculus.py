"""functions/calculus.py against the oracle: trapezoid and cumulative_trapezoid (unit spacing,
dx, 1-D and full coordinates, integers, empty), gradient (uniform, per-dim and coordinate
spacing, edge orders 1 and 2, several dims, errors), and their gradients by finite
differences."""

from __future__ import annotations

from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test


def _y(T: Any, dev: str) -> Any:
    return T.tensor([[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 9.0]], device=dev)


def _x(T: Any, dev: str) -> Any:
    return T.tensor([0.0, 1.0, 3.0, 6.0], device=dev)


CASES: dict[str, Case] = {
    "trapezoid": lambda T, dev: T.trapezoid(_y(T, dev)),
    "trapezoid_dim0": lambda T, dev: T.trapezoid(_y(T, dev), dim=0),
    "trapezoid_dx": lambda T, dev: T.trapezoid(_y(T, dev), dx=0.5),
    "trapezoid_x": lambda T, dev: T.trapezoid(_y(T, dev), _x(T, dev)),
    "trapezoid_x_full": lambda T, dev: T.trapezoid(
        _y(T, dev), T.tensor([[0.0, 1.0, 3.0, 6.0], [0.0, 2.0, 4.0, 5.0]], device=dev)),
    "trapezoid_int": lambda T, dev: T.trapezoid(T.tensor([1, 2, 4], device=dev)),
    "trapezoid_empty": lambda T, dev: T.trapezoid(T.ones(2, 0, device=dev)),
    "trapezoid_one_sample": lambda T, dev: T.trapezoid(T.ones(2, 1, device=dev)),
    "trapezoid_bad_x": lambda T, dev: T.trapezoid(T.ones(3, device=dev), T.ones(2, device=dev)),
    "cumulative_trapezoid": lambda T, dev: T.cumulative_trapezoid(_y(T, dev)),
    "cumulative_trapezoid_dx_dim0": lambda T, dev: T.cumulative_trapezoid(_y(T, dev), dx=2,
                                                                          dim=0),
    "cumulative_trapezoid_x": lambda T, dev: T.cumulative_trapezoid(_y(T, dev), _x(T, dev)),
    "cumulative_trapezoid_empty": lambda T, dev: T.cumulative_trapezoid(T.ones(2, 0, device=dev)),
    "gradient": lambda T, dev: T.gradient(_y(T, dev)),
    "gradient_dim": lambda T, dev: T.gradient(_y(T, dev), dim=1),
    "gradient_dims_list": lambda T, dev: T.gradient(_y(T, dev), dim=[1, 0]),
    "gradient_spacing": lambda T, dev: T.gradient(_y(T, dev), spacing=2.0, dim=1),
    "gradient_spacing_list": lambda T, dev: T.gradient(_y(T, dev), spacing=[2.0, 0.5]),
    "gradient_coordinates": lambda T, dev: T.gradient(_y(T, dev), spacing=(_x(T, dev),), dim=1),
    "gradient_edge2": lambda T, dev: T.gradient(_y(T, dev), dim=1, edge_order=2),
    "gradient_coordinates_edge2": lambda T, dev: T.gradient(_y(T, dev), spacing=(_x(T, dev),),
                                                            dim=1, edge_order=2),
    "gradient_int": lambda T, dev: T.gradient(T.tensor([1, 2, 4], device=dev)),
    "gradient_too_short": lambda T, dev: T.gradient(T.ones(1, device=dev)),
    "gradient_too_short_edge2": lambda T, dev: T.gradient(_y(T, dev), dim=0, edge_order=2),
    "gradient_bad_edge_order": lambda T, dev: T.gradient(_y(T, dev), edge_order=3),
    "gradient_spacing_length": lambda T, dev: T.gradient(_y(T, dev), spacing=[1.0, 2.0], dim=1),
}

test_calculus = catalogue_test(CASES)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_and_trapezoid_gradients(device: str, edge_order: int) -> None:
    y = ag.tensor([[1.0, 4.0, 9.0, 16.0, 3.0], [2.0, 3.0, 5.0, 9.0, -1.0]], dtype=ag.float64,
                  device=device, requires_grad=True)
    x = ag.tensor([0.0, 1.0, 3.0, 6.0, 6.5], dtype=ag.float64, device=device,
                  requires_grad=True)
    assert gradcheck(lambda a, b: ag.gradient(a, spacing=(b,), dim=1, edge_order=edge_order)[0],
                     (y, x))
    assert gradcheck(lambda a: ag.gradient(a, spacing=0.5, dim=-1, edge_order=edge_order)[0], (y,))
    assert gradcheck(lambda a, b: ag.trapezoid(a, b), (y, x))
    assert gradcheck(lambda a, b: ag.cumulative_trapezoid(a, b), (y, x))
