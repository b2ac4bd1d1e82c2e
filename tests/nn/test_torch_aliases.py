"""The ``torch.*`` spellings of ``nn.functional`` (functions/nn_aliases.py) against the oracle:
ATen's argument orders, required positional arguments and int reductions, values and input
gradients, and the misuse of their arguments."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

RNG = np.random.default_rng(0)
X1 = RNG.standard_normal((2, 3, 8))
X2 = RNG.standard_normal((2, 3, 6, 6))
X3 = RNG.standard_normal((1, 2, 4, 4, 4))
W1, W2, W3 = (RNG.standard_normal(s) for s in ((4, 3, 3), (4, 3, 3, 3), (3, 2, 2, 2, 2)))
V = RNG.standard_normal((4, 5))
Y = RNG.standard_normal((4, 5))
LBL = np.array([1.0, -1.0, 1.0, -1.0])
BW = RNG.standard_normal((2, 5, 5))
GRID = RNG.uniform(-1.2, 1.2, (2, 3, 4, 2))
GRID3 = RNG.uniform(-1.2, 1.2, (1, 2, 3, 2, 3))


def _t(T: Any, d: str, a: np.ndarray, grad: bool = False) -> Any:
    return T.tensor(a, device=d, requires_grad=grad)


# Each: (fn(T, d, x) -> tensor or tuple, input array) — x is the differentiated input.
Fn = Callable[[Any, str, Any], Any]
ALIASES: dict[str, tuple[Fn, np.ndarray]] = {
    "conv1d": (lambda T, d, x: T.conv1d(x, _t(T, d, W1), None, 2, 1), X1),
    "conv2d": (lambda T, d, x: T.conv2d(x, _t(T, d, W2), None, 1, 1, 1, 1), X2),
    "conv3d": (lambda T, d, x: T.conv3d(x, _t(T, d, W3), None, 1, 0), X3),
    "conv_transpose1d": (lambda T, d, x: T.conv_transpose1d(x, _t(T, d, W1.transpose(1, 0, 2)),
                                                            None, 2, 1, 1), X1),
    "conv_transpose2d": (lambda T, d, x: T.conv_transpose2d(
        x, _t(T, d, W2.transpose(1, 0, 2, 3)), None, 1, 0, 0, 1, 2), X2),
    "conv_transpose3d": (lambda T, d, x: T.conv_transpose3d(
        x, _t(T, d, W3.transpose(1, 0, 2, 3, 4)), None, 2), X3),
    "convolution": (lambda T, d, x: T.convolution(x, _t(T, d, W2), None, [1, 1], [1, 0],
                                                  [1, 1], False, [0, 0], 1), X2),
    "convolution_transposed": (lambda T, d, x: T.convolution(
        x, _t(T, d, W1.transpose(1, 0, 2)), None, [2], [0], [1], True, [1], 1), X1),
    "avg_pool1d": (lambda T, d, x: T.avg_pool1d(x, 3, (), 1, True, False), X1),
    "max_pool1d": (lambda T, d, x: T.max_pool1d(x, 2), X1),
    "max_pool1d_with_indices": (lambda T, d, x: T.max_pool1d_with_indices(x, 3, 2, 1), X1),
    "max_pool2d": (lambda T, d, x: T.max_pool2d(x, 2, (), 0, 1, True), X2),
    "max_pool3d": (lambda T, d, x: T.max_pool3d(x, 2), X3),
    "adaptive_avg_pool1d": (lambda T, d, x: T.adaptive_avg_pool1d(x, 3), X1),
    "adaptive_max_pool1d": (lambda T, d, x: T.adaptive_max_pool1d(x, 3), X1),
    "constant_pad_nd": (lambda T, d, x: T.constant_pad_nd(x, [1, 2, 0, 1], 0.5), X2),
    "pixel_shuffle": (lambda T, d, x: T.pixel_shuffle(x.reshape(2, 12, 3, 3)[:, :12], 2), X2),
    "pixel_unshuffle": (lambda T, d, x: T.pixel_unshuffle(x, 2), X2),
    "channel_shuffle": (lambda T, d, x: T.channel_shuffle(x.reshape(2, 6, 3, 6), 3), X2),
    "batch_norm": (lambda T, d, x: T.batch_norm(x, _t(T, d, np.ones(3)), _t(T, d, np.zeros(3)),
                                                None, None, True, 0.1, 1e-5, False), X2),
    "batch_norm_eval": (lambda T, d, x: T.batch_norm(
        x, None, None, _t(T, d, np.zeros(3)), _t(T, d, np.ones(3)), False, 0.1, 1e-3, True), X1),
    "instance_norm": (lambda T, d, x: T.instance_norm(x, None, None, None, None, True, 0.1,
                                                      1e-5, False), X2),
    "layer_norm": (lambda T, d, x: T.layer_norm(x, [6, 6]), X2),
    "group_norm": (lambda T, d, x: T.group_norm(x.reshape(2, 6, 3, 6), 3), X2),
    "rms_norm": (lambda T, d, x: T.rms_norm(x, [8], None, 1e-6), X1),
    "embedding": (lambda T, d, x: T.embedding(x, T.tensor([[0, 2], [3, 0]], device=d), 0), V),
    "celu": (lambda T, d, x: T.celu(x, 0.5), X1),
    "selu": (lambda T, d, x: T.selu(x), X1),
    "rrelu_eval": (lambda T, d, x: T.rrelu(x, 0.1, 0.3), X1),
    "threshold": (lambda T, d, x: T.threshold(x, 0.1, -2.0), X1),
    "hardshrink": (lambda T, d, x: T.hardshrink(x, 0.3), X1),
    "hardshrink_method": (lambda T, d, x: x.hardshrink(0.2), X1),
    "prelu": (lambda T, d, x: T.prelu(x, _t(T, d, np.array([0.1, 0.2, 0.3]))), X1),
    "prelu_method": (lambda T, d, x: x.prelu(_t(T, d, np.array([0.25]))), X1),
    "bilinear": (lambda T, d, x: T.bilinear(x, x * 2, _t(T, d, BW)), V),
    "dropout_eval": (lambda T, d, x: T.dropout(x, 0.5, False), X1),
    "feature_dropout_eval": (lambda T, d, x: T.feature_dropout(x, 0.5, False), X2),
    "alpha_dropout_eval": (lambda T, d, x: T.alpha_dropout(x, 0.2, False), X1),
    "feature_alpha_dropout_eval": (lambda T, d, x: T.feature_alpha_dropout(x, 0.2, False), X2),
    "cosine_similarity": (lambda T, d, x: T.cosine_similarity(x, x.flip(0), 1, 1e-8), V),
    "pairwise_distance": (lambda T, d, x: T.pairwise_distance(x, x.flip(0), 3.0, 1e-6, True), V),
    "bce_with_logits_sum": (lambda T, d, x: T.binary_cross_entropy_with_logits(
        x, _t(T, d, (Y > 0).astype(float)), None, None, 2), V),
    "cosine_embedding_loss": (lambda T, d, x: T.cosine_embedding_loss(
        x, _t(T, d, Y), _t(T, d, LBL), 0.1, 0), V),
    "hinge_embedding_loss": (lambda T, d, x: T.hinge_embedding_loss(
        x, _t(T, d, np.sign(Y)), 0.5, 2), V),
    "margin_ranking_loss": (lambda T, d, x: T.margin_ranking_loss(
        x[:, 0], _t(T, d, Y[:, 0]), _t(T, d, LBL), 0.2, 1), V),
    "kl_div": (lambda T, d, x: T.kl_div(x.log_softmax(-1), _t(T, d, Y).softmax(-1), 2), V),
    "kl_div_log_target": (lambda T, d, x: T.kl_div(x, _t(T, d, Y), 0, log_target=True), V),
    "poisson_nll_loss": (lambda T, d, x: T.poisson_nll_loss(x, _t(T, d, np.abs(Y)), True,
                                                            True, 1e-8, 1), V),
    "triplet_margin_loss": (lambda T, d, x: T.triplet_margin_loss(
        x, _t(T, d, Y), _t(T, d, Y[::-1].copy()), 1.0, 2, 1e-6, True, 2), V),
    "grid_sampler": (lambda T, d, x: T.grid_sampler(
        x, _t(T, d, GRID), 0, 1, False), X2),
    "grid_sampler_2d_nearest": (lambda T, d, x: T.grid_sampler_2d(
        x, _t(T, d, GRID), 1, 2, True), X2),
    "grid_sampler_3d": (lambda T, d, x: T.grid_sampler_3d(
        x, _t(T, d, GRID3), 0, 0, False), X3),
    "affine_grid_generator": (lambda T, d, x: T.affine_grid_generator(
        x.reshape(-1)[:12].reshape(2, 2, 3), [2, 3, 4, 5], False), X1),
    "ctc_loss": (lambda T, d, x: T.ctc_loss(
        x.log_softmax(2), T.tensor([[1, 2], [2, 2]], device=d), [8, 8], [2, 2], 0, 0, False),
        RNG.standard_normal((8, 2, 4))),
}


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_matches_torch(device: str, name: str) -> None:
    fn, x = ALIASES[name]
    tx, ox = _t(torch, "cpu", x, True), _t(ag, device, x, True)
    theirs, ours = _outputs(fn(torch, "cpu", tx)), _outputs(fn(ag, device, ox))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        same(o, t, rtol=1e-10, atol=1e-10, strides=False)
    float_outs = [(o, t) for o, t in zip(ours, theirs) if t.dtype.is_floating_point]
    if float_outs and float_outs[0][1].requires_grad:
        w = RNG.standard_normal(tuple(float_outs[0][1].shape))
        (float_outs[0][1] * torch.tensor(w)).sum().backward()
        (float_outs[0][0] * ag.tensor(w, device=device)).sum().backward()
        same(ox.grad, tx.grad, rtol=1e-9, atol=1e-10)


def _x(T: Any, d: str) -> Any:
    return T.ones(2, 3, 4, dtype=T.float64, device=d)


CASES: dict[str, Case] = {
    "embedding_renorm_": lambda T, d: (lambda w: (T.embedding_renorm_(
        w, T.tensor([0, 2], device=d), 1.0, 2.0), w)[1])(
        T.arange(12.0, dtype=T.float64, device=d).reshape(4, 3)),
    "feature_dropout_train_shape": lambda T, d: T.feature_dropout(_x(T, d), 0.0, True),
    "adaptive_max_pool1d_pair": lambda T, d: len(T.adaptive_max_pool1d(_x(T, d), 2)),
}

test_misuse = catalogue_test(CASES)
