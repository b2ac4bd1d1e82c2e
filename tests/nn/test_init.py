"""nn.init against the torch oracle: fans, gains, bounds and standard deviations, error
messages, in-place/no_grad behaviour and the generator argument."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import same_error

SHAPES = [(3, 5), (64, 32), (8, 4, 3, 3), (2, 7, 5)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_torch(shape: tuple[int, ...]) -> None:
    ours = ag.nn.init._calculate_fan_in_and_fan_out(ag.empty(*shape))
    theirs = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    assert ours == theirs


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3),
                                  ("selu",)])
def test_gains_match_torch(args: tuple[Any, ...]) -> None:
    assert ag.nn.init.calculate_gain(*args) == torch.nn.init.calculate_gain(*args)


@pytest.mark.parametrize("case", [
    lambda T: T.nn.init.calculate_gain("foo"),
    lambda T: T.nn.init.calculate_gain("leaky_relu", "a"),
    lambda T: T.nn.init.calculate_gain("leaky_relu", True),
    lambda T: T.nn.init.kaiming_uniform_(T.empty(3)),
    lambda T: T.nn.init.kaiming_normal_(T.empty(3, 3), mode="fan"),
    lambda T: T.nn.init.xavier_uniform_(T.empty(3)),
])
def test_init_errors(case: Any) -> None:
    same_error(lambda T, dev: case(T), "cpu")


def _bound_and_std(name: str, shape: tuple[int, ...], kwargs: dict[str, Any]) -> tuple[float, float]:
    """The theoretical (max |x|, std) of ``init.<name>`` on ``shape``, from torch's fans."""
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    if name.startswith("xavier"):
        std = kwargs.get("gain", 1.0) * math.sqrt(2.0 / (fan_in + fan_out))
    else:
        fan = fan_in if kwargs.get("mode", "fan_in") == "fan_in" else fan_out
        gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"),
                                            kwargs.get("a", 0))
        std = gain / math.sqrt(fan)
    return (math.sqrt(3.0) * std if name.endswith("uniform_") else math.inf), std


@pytest.mark.parametrize("name, kwargs", [
    ("xavier_uniform_", {}), ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}), ("kaiming_normal_", {"mode": "fan_out"}),
])
@pytest.mark.parametrize("shape", [(256, 128), (64, 32, 3, 3)])
def test_initialiser_distribution(name: str, kwargs: dict[str, Any], shape: tuple[int, ...],
                                  device: str) -> None:
    w = ag.nn.Parameter(ag.empty(*shape, device=device))
    out = getattr(ag.nn.init, name)(w, **kwargs)
    assert out is w and w.grad_fn is None and w.requires_grad and w._version == 1
    bound, std = _bound_and_std(name, shape, kwargs)
    x = w.detach().cpu().numpy()
    assert np.abs(x).max() <= bound
    assert abs(x.std() - std) < 0.03 * std and abs(x.mean()) < 0.03 * std


def test_simple_initialisers(device: str) -> None:
    init = ag.nn.init
    w = ag.nn.Parameter(ag.empty(200, 100, device=device))
    init.uniform_(w, -2.0, 3.0)
    x = w.detach().cpu().numpy()
    assert x.min() >= -2.0 and x.max() < 3.0 and abs(x.mean() - 0.5) < 0.05
    init.normal_(w, 1.0, 0.5)
    x = w.detach().cpu().numpy()
    assert abs(x.mean() - 1.0) < 0.01 and abs(x.std() - 0.5) < 0.01
    assert not init.zeros_(w).detach().cpu().numpy().any()
    assert (init.ones_(w).detach().cpu().numpy() == 1).all()
    assert (init.constant_(w, 0.25).detach().cpu().numpy() == 0.25).all()


def test_generator_makes_init_reproducible(device: str) -> None:
    def draw(fn: Any) -> Any:
        g = ag.Generator(device=device).manual_seed(123)
        return fn(ag.empty(5, 6, device=device), generator=g).cpu().numpy()

    for fn in (ag.nn.init.kaiming_uniform_, ag.nn.init.kaiming_normal_,
               ag.nn.init.xavier_uniform_, ag.nn.init.xavier_normal_, ag.nn.init.uniform_,
               ag.nn.init.normal_):
        np.testing.assert_array_equal(draw(fn), draw(fn))


def test_zero_element_tensor_warns() -> None:
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        ag.nn.init.kaiming_uniform_(ag.empty(0, 3))
