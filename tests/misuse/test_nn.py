"""Misuse catalogue: ``nn.functional`` and the matrix products. Arguments of the wrong type (a
forward-pre-hook that returns an int feeds ``linear`` one), dtype mismatches in ``linear``,
``mm``, ``mv``, ``dot``, ``bmm``, ``addmm``, ``matmul``, the convolution, the normalisations and
the losses, in PyTorch's order of checks; activations at NaN and inf (values and gradients);
and the layers, which must fail as the functions do.

Messages that name the device (``mixed dtype (CPU)``) are pinned per device in
``tests/nn/test_functional.py`` instead.
"""

from __future__ import annotations

from typing import Any, Callable

from tests.misuse._catalogue import Case, catalogue_test


def _F(T: Any) -> Any:
    return T.nn.functional


def _t(T: Any, dev: str, *shape: int, dtype: str = "float32") -> Any:
    return T.ones(*shape, dtype=getattr(T, dtype), device=dev)


def _f64(T: Any, dev: str, *shape: int) -> Any:
    return _t(T, dev, *shape, dtype="float64")


def _i64(T: Any, dev: str, *shape: int) -> Any:
    return T.zeros(*shape, dtype=T.int64, device=dev)


def _hooked_linear(T: Any, dev: str) -> Any:
    """A Linear whose forward-pre-hook returns an int: PyTorch passes it on as the input."""
    m = T.nn.Linear(2, 3).to(dev)
    m.register_forward_pre_hook(lambda mod, args: 5)
    return m(_t(T, dev, 4, 2))


def _grads_at_nan(fn: Callable[[Any, Any], Any]) -> Case:
    """``fn(T, x)`` on a float64 leaf holding NaN, +-inf, +-0 and numbers: its value and the
    gradient of its sum."""

    def case(T: Any, dev: str) -> Any:
        x = T.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5, -2.0],
                     dtype=T.float64, device=dev, requires_grad=True)
        out = fn(T, x)
        (g,) = T.autograd.grad(out.sum(), x)
        return out, g

    return case


CASES: dict[str, Case] = {
    # arguments of the wrong type
    "linear_int_input": lambda T, dev: _F(T).linear(5, _t(T, dev, 3, 2)),
    "linear_list_input": lambda T, dev: _F(T).linear([1.0, 2.0], _t(T, dev, 3, 2)),
    "linear_none_weight": lambda T, dev: _F(T).linear(_t(T, dev, 2, 2), None),
    "linear_int_weight": lambda T, dev: _F(T).linear(_t(T, dev, 2, 2), 3),
    "linear_float_bias": lambda T, dev: _F(T).linear(_t(T, dev, 2, 2), _t(T, dev, 3, 2), 1.0),
    "linear_hook_returns_int": _hooked_linear,
    "mm_int_mat2": lambda T, dev: T.mm(_t(T, dev, 2, 2), 3),
    "mm_int_input": lambda T, dev: T.mm(3, _t(T, dev, 2, 2)),
    "mv_int_vec": lambda T, dev: T.mv(_t(T, dev, 2, 2), 2),
    "dot_int": lambda T, dev: T.dot(_t(T, dev, 2), 2),
    "bmm_list": lambda T, dev: T.bmm(_f64(T, dev, 1, 2, 2), [1]),
    "addmm_float_input": lambda T, dev: T.addmm(1.0, _t(T, dev, 2, 2), _t(T, dev, 2, 2)),
    "addmm_int_mat2": lambda T, dev: T.addmm(_t(T, dev, 2), _t(T, dev, 2, 2), 2),
    "matmul_int_other": lambda T, dev: T.matmul(_f64(T, dev, 2, 2), 2),
    "matmul_int_input": lambda T, dev: T.matmul(2, _f64(T, dev, 2, 2)),
    "matmul_operator_int": lambda T, dev: _f64(T, dev, 2, 2) @ 2,
    "rmatmul_operator_list": lambda T, dev: [1.0, 2.0] @ _t(T, dev, 2, 2),
    "relu_int": lambda T, dev: _F(T).relu(3),
    "relu_inplace_int": lambda T, dev: _F(T).relu(3, inplace=True),
    "gelu_list": lambda T, dev: _F(T).gelu([1.0]),
    "silu_int": lambda T, dev: _F(T).silu(3),
    "leaky_relu_int": lambda T, dev: _F(T).leaky_relu(3),
    "elu_int": lambda T, dev: _F(T).elu(3),
    "softplus_int": lambda T, dev: _F(T).softplus(3),
    "sigmoid_int": lambda T, dev: _F(T).sigmoid(3),
    "softmax_int": lambda T, dev: _F(T).softmax(3, 0),
    "dropout_int": lambda T, dev: _F(T).dropout(3),
    "dropout_eval_int": lambda T, dev: _F(T).dropout(3, training=False),
    "dropout_bad_p_first": lambda T, dev: _F(T).dropout(3, p=2.0),
    "pad_int": lambda T, dev: _F(T).pad(3, (1, 1)),
    "one_hot_int": lambda T, dev: _F(T).one_hot(3),
    "conv2d_int_input": lambda T, dev: _F(T).conv2d(3, _t(T, dev, 1, 1, 1, 1)),
    "conv2d_int_weight": lambda T, dev: _F(T).conv2d(_t(T, dev, 1, 1, 3, 3), 2),
    "max_pool2d_int": lambda T, dev: _F(T).max_pool2d(3, 2),
    "max_pool2d_indices_int": lambda T, dev: _F(T).max_pool2d(3, 2, return_indices=True),
    "avg_pool2d_int": lambda T, dev: _F(T).avg_pool2d(3, 2),
    "layer_norm_int": lambda T, dev: _F(T).layer_norm(3, (2,)),
    "layer_norm_int_weight": lambda T, dev: _F(T).layer_norm(_t(T, dev, 2, 2), (2,), 3),
    "layer_norm_int_bias": lambda T, dev: _F(T).layer_norm(_t(T, dev, 2, 2), (2,), None, 3),
    "batch_norm_int": lambda T, dev: _F(T).batch_norm(3, None, None),
    "batch_norm_int_training": lambda T, dev: _F(T).batch_norm(3, None, None, training=True),
    "batch_norm_int_running_mean": lambda T, dev: _F(T).batch_norm(_t(T, dev, 2, 2), 3, 3),
    "batch_norm_int_weight": lambda T, dev: _F(T).batch_norm(_t(T, dev, 2, 2), None, None, 3,
                                                             training=True),
    "embedding_int_indices": lambda T, dev: _F(T).embedding(3, _t(T, dev, 4, 2)),
    "embedding_int_weight": lambda T, dev: _F(T).embedding(_i64(T, dev, 2), 3),
    "mse_loss_int": lambda T, dev: _F(T).mse_loss(3, _t(T, dev, 2)),
    "l1_loss_int_target": lambda T, dev: _F(T).l1_loss(_t(T, dev, 2), 3),
    "mse_loss_int_weight": lambda T, dev: _F(T).mse_loss(_t(T, dev, 2), _t(T, dev, 2), weight=3),
    "cross_entropy_int": lambda T, dev: _F(T).cross_entropy(3, _i64(T, dev, 2)),
    "cross_entropy_int_target": lambda T, dev: _F(T).cross_entropy(_t(T, dev, 2, 3), 1),
    "cross_entropy_list_weight": lambda T, dev: _F(T).cross_entropy(
        _t(T, dev, 2, 3), _i64(T, dev, 2), [1.0, 1.0, 1.0]),
    "nll_loss_int": lambda T, dev: _F(T).nll_loss(3, _i64(T, dev, 2)),
    "nll_loss_int_weight": lambda T, dev: _F(T).nll_loss(_t(T, dev, 2, 3), _i64(T, dev, 2), 3),
    "bce_int": lambda T, dev: _F(T).binary_cross_entropy(3, _t(T, dev, 2)),
    "bce_int_weight": lambda T, dev: _F(T).binary_cross_entropy(
        _t(T, dev, 2) * 0.5, _t(T, dev, 2), 3),
    "bce_with_logits_int": lambda T, dev: _F(T).binary_cross_entropy_with_logits(
        3, _t(T, dev, 2)),
    "bce_with_logits_int_pos_weight": lambda T, dev: _F(T).binary_cross_entropy_with_logits(
        _t(T, dev, 2), _t(T, dev, 2), pos_weight=3),
    # dtype mismatches, in PyTorch's order of checks
    "linear_f64_f32": lambda T, dev: _F(T).linear(_f64(T, dev, 2, 2), _t(T, dev, 3, 2)),
    "linear_f32_f64": lambda T, dev: _F(T).linear(_t(T, dev, 2, 2), _f64(T, dev, 3, 2)),
    "linear_f64_f32_bias": lambda T, dev: _F(T).linear(_f64(T, dev, 2, 2), _t(T, dev, 3, 2),
                                                       _t(T, dev, 3)),
    "linear_f64_bias": lambda T, dev: _F(T).linear(_t(T, dev, 2, 2), _t(T, dev, 3, 2),
                                                   _f64(T, dev, 3)),
    "linear_3d_f64_f32": lambda T, dev: _F(T).linear(_f64(T, dev, 4, 2, 2), _t(T, dev, 3, 2)),
    "linear_3d_f64_f32_bias": lambda T, dev: _F(T).linear(_f64(T, dev, 4, 2, 2),
                                                          _t(T, dev, 3, 2), _t(T, dev, 3)),
    "linear_1d_f64_f32_bias": lambda T, dev: _F(T).linear(_f64(T, dev, 2), _t(T, dev, 3, 2),
                                                          _t(T, dev, 3)),
    "linear_int_f32": lambda T, dev: _F(T).linear(_i64(T, dev, 2, 2), _t(T, dev, 3, 2)),
    "linear_int_f32_bias": lambda T, dev: _F(T).linear(_i64(T, dev, 2, 2), _t(T, dev, 3, 2),
                                                       _t(T, dev, 3)),
    "linear_shape_before_dtype": lambda T, dev: _F(T).linear(_f64(T, dev, 2, 3),
                                                             _t(T, dev, 2, 2)),
    "mm_f64_f32": lambda T, dev: T.mm(_f64(T, dev, 2, 2), _t(T, dev, 2, 2)),
    "mm_f32_int": lambda T, dev: T.mm(_t(T, dev, 2, 2), _i64(T, dev, 2, 2)),
    "mm_shape_before_dtype": lambda T, dev: T.mm(_f64(T, dev, 2, 3), _t(T, dev, 2, 2)),
    "mv_f32_f64": lambda T, dev: T.mv(_t(T, dev, 2, 2), _f64(T, dev, 2)),
    "mv_int_f32": lambda T, dev: T.mv(_i64(T, dev, 2, 2), _t(T, dev, 2)),
    "dot_f64_f32": lambda T, dev: T.dot(_f64(T, dev, 2), _t(T, dev, 2)),
    "dot_dtype_before_size": lambda T, dev: T.dot(_f64(T, dev, 3), _t(T, dev, 2)),
    "bmm_f32_f64": lambda T, dev: T.bmm(_t(T, dev, 1, 2, 2), _f64(T, dev, 1, 2, 2)),
    "addmm_self_dtype": lambda T, dev: T.addmm(_f64(T, dev, 2), _t(T, dev, 2, 2),
                                               _t(T, dev, 2, 2)),
    "addmm_mat1_dtype": lambda T, dev: T.addmm(_t(T, dev, 2), _f64(T, dev, 2, 2),
                                               _t(T, dev, 2, 2)),
    "addmm_self_checked_first": lambda T, dev: T.addmm(_f64(T, dev, 2), _f64(T, dev, 2, 2),
                                                       _t(T, dev, 2, 2)),
    "addmm_dtype_before_shape": lambda T, dev: T.addmm(_f64(T, dev, 5), _t(T, dev, 2, 3),
                                                       _t(T, dev, 2, 2)),
    "matmul_mm_dtype": lambda T, dev: T.matmul(_f64(T, dev, 2, 2), _t(T, dev, 2, 2)),
    "matmul_mv_dtype": lambda T, dev: T.matmul(_f64(T, dev, 2, 2), _t(T, dev, 2)),
    "matmul_dot_dtype": lambda T, dev: T.matmul(_f64(T, dev, 2), _t(T, dev, 2)),
    "matmul_vm_dtype": lambda T, dev: T.matmul(_f64(T, dev, 2), _t(T, dev, 2, 2)),
    "matmul_batched_dtype": lambda T, dev: T.matmul(_f64(T, dev, 3, 2, 2), _t(T, dev, 3, 2, 2)),
    "matmul_folded_dtype": lambda T, dev: T.matmul(_f64(T, dev, 3, 2, 2), _t(T, dev, 2, 2)),
    "matmul_folded_mv_dtype": lambda T, dev: T.matmul(_f64(T, dev, 3, 2, 2), _t(T, dev, 2)),
    "conv2d_bias_dtype": lambda T, dev: _F(T).conv2d(_t(T, dev, 1, 1, 3, 3),
                                                     _t(T, dev, 1, 1, 1, 1), _f64(T, dev, 1)),
    "bce_target_dtype": lambda T, dev: _F(T).binary_cross_entropy(_f64(T, dev, 2) * 0.5,
                                                                  _t(T, dev, 2)),
    "bce_int_target": lambda T, dev: _F(T).binary_cross_entropy(_t(T, dev, 2) * 0.5,
                                                                _i64(T, dev, 2)),
    "bce_with_logits_int_target": lambda T, dev: _F(T).binary_cross_entropy_with_logits(
        _f64(T, dev, 2), _i64(T, dev, 2)),
    "bce_with_logits_target_dtype_wins": lambda T, dev: (lambda out: (out, repr(out.dtype)))(
        _F(T).binary_cross_entropy_with_logits(_f64(T, dev, 2), _t(T, dev, 2) * 0.5,
                                               reduction="none")),
    "nll_loss_weight_dtype": lambda T, dev: _F(T).nll_loss(_f64(T, dev, 2, 3), _i64(T, dev, 2),
                                                           _t(T, dev, 3)),
    "cross_entropy_weight_dtype": lambda T, dev: _F(T).cross_entropy(
        _t(T, dev, 2, 3), _i64(T, dev, 2), _f64(T, dev, 3)),
    "cross_entropy_probs_mixed_dtype_runs": lambda T, dev: _F(T).cross_entropy(
        _t(T, dev, 2, 3), _f64(T, dev, 2, 3)),
    "mse_loss_mixed_dtype_runs": lambda T, dev: _F(T).mse_loss(_f64(T, dev, 2), _t(T, dev, 2)),
    # the layers fail as the functions do
    "Linear_f64_input": lambda T, dev: T.nn.Linear(2, 3).to(dev)(_f64(T, dev, 4, 2)),
    "Linear_int_input": lambda T, dev: T.nn.Linear(2, 3).to(dev)(3),
    "ReLU_int_input": lambda T, dev: T.nn.ReLU()(3),
    "LayerNorm_int_input": lambda T, dev: T.nn.LayerNorm(2).to(dev)(3),
    # activations at NaN and inf: PyTorch's values and gradients
    "relu_grad_passes_nan": _grads_at_nan(lambda T, x: T.relu(x)),
    "relu_inplace_grad_passes_nan": _grads_at_nan(lambda T, x: _F(T).relu(x * 1, inplace=True)),
    "leaky_relu_at_nan": _grads_at_nan(lambda T, x: _F(T).leaky_relu(x, 0.2)),
    "elu_grad_at_nan_unscaled": _grads_at_nan(lambda T, x: _F(T).elu(x, 3.0)),
    "gelu_at_nan_inf": _grads_at_nan(lambda T, x: _F(T).gelu(x)),
    "silu_at_nan_inf": _grads_at_nan(lambda T, x: _F(T).silu(x)),
    "softplus_at_nan_inf": _grads_at_nan(lambda T, x: _F(T).softplus(x)),
    "sigmoid_at_nan_inf": _grads_at_nan(lambda T, x: T.sigmoid(x)),
    "tanh_at_nan_inf": _grads_at_nan(lambda T, x: T.tanh(x)),
    "l1_loss_grad_at_nan": _grads_at_nan(lambda T, x: _F(T).l1_loss(x, T.zeros_like(x),
                                                                   reduction="none")),
    "softmax_row_with_inf": _grads_at_nan(lambda T, x: x.reshape(1, -1)[:, 1:4].softmax(1)),
    "log_softmax_with_inf": _grads_at_nan(
        lambda T, x: T.stack([x, T.zeros_like(x)]).log_softmax(0)),
    "cross_entropy_inf_logit": _grads_at_nan(lambda T, x: _F(T).cross_entropy(
        T.stack([x, T.zeros_like(x)], 1), T.zeros(7, dtype=T.int64, device=x.device),
        reduction="none")),
    "layer_ReLU_at_nan": _grads_at_nan(lambda T, x: T.nn.ReLU()(x)),
    "layer_ELU_at_nan": _grads_at_nan(lambda T, x: T.nn.ELU(0.5)(x)),
}

test_misuse = catalogue_test(CASES)
