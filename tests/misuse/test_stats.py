"""Misuse catalogue: the stats family (``std_mean``/``var_mean``, ``nansum``/``nanmean``,
``aminmax``, ``quantile``/``nanquantile``, ``cov``/``corrcoef``, ``dist``, ``cdist``,
``renorm``): each refusal with PyTorch's exception type and first sentence, in PyTorch's order
where several checks fail, and the legal corners next to them."""

from __future__ import annotations

import warnings
from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, *shape: int, dtype: str = "float32") -> Any:
    n = 1
    for s in shape:
        n *= s
    return (T.arange(n, device=dev).reshape(shape) % 5 - 2).to(getattr(T, dtype))


def _quiet(fn: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


CASES: dict[str, Case] = {
    # std_mean / var_mean
    "std_mean_int": lambda T, dev: T.std_mean(_x(T, dev, 3, 4, dtype="int64")),
    "var_mean_int_dim": lambda T, dev: T.var_mean(_x(T, dev, 3, 4, dtype="int64"), 1),
    "std_mean_bad_dim": lambda T, dev: T.std_mean(_x(T, dev, 3, 4), 2),
    "std_mean_repeated_dim": lambda T, dev: T.std_mean(_x(T, dev, 3, 4), (1, 1)),
    "std_mean_unbiased_and_correction": lambda T, dev: T.std_mean(
        _x(T, dev, 3, 4), 1, unbiased=True, correction=1),
    "var_mean_empty": lambda T, dev: _quiet(lambda: T.var_mean(_x(T, dev, 0))),
    "var_mean_0d_dim": lambda T, dev: T.var_mean(T.tensor(2.0, device=dev), 0, correction=0),
    # nansum / nanmean
    "nanmean_int": lambda T, dev: T.nanmean(_x(T, dev, 3, dtype="int64")),
    "nanmean_int_dtype": lambda T, dev: T.nanmean(_x(T, dev, 3), dtype=T.int64),
    "nanmean_int_input_float_dtype": lambda T, dev: T.nanmean(_x(T, dev, 3, dtype="int64"),
                                                              dtype=T.float32),
    "nansum_bad_dim": lambda T, dev: T.nansum(_x(T, dev, 3), 1),
    "nansum_bool_dim": lambda T, dev: T.nansum(_x(T, dev, 2, 3, dtype="bool"), 1),
    # aminmax
    "aminmax_empty": lambda T, dev: T.aminmax(_x(T, dev, 0)),
    "aminmax_empty_dim": lambda T, dev: T.aminmax(_x(T, dev, 0, 3), dim=0),
    "aminmax_empty_neg_dim": lambda T, dev: T.aminmax(_x(T, dev, 0, 3), dim=-2),
    "aminmax_dim_list": lambda T, dev: T.aminmax(_x(T, dev, 3, 4), dim=[0]),
    "aminmax_positional_dim": lambda T, dev: T.aminmax(_x(T, dev, 3, 4), 0),
    "aminmax_bad_dim": lambda T, dev: T.aminmax(_x(T, dev, 3, 4), dim=2),
    "aminmax_0d_dim_1": lambda T, dev: T.aminmax(T.tensor(1.0, device=dev), dim=1),
    # quantile / nanquantile
    "quantile_int": lambda T, dev: T.quantile(_x(T, dev, 4, dtype="int64"), 0.5),
    "quantile_half": lambda T, dev: T.quantile(_x(T, dev, 4, dtype="float16"), 0.5),
    "quantile_q_dtype": lambda T, dev: T.quantile(
        _x(T, dev, 4), T.tensor([0.5], dtype=T.float64, device=dev)),
    "quantile_q_above": lambda T, dev: T.quantile(_x(T, dev, 4), 1.5),
    "quantile_q_below": lambda T, dev: T.nanquantile(_x(T, dev, 4), -0.25),
    "quantile_q_nan": lambda T, dev: T.quantile(_x(T, dev, 4), float("nan")),
    "quantile_q_tensor_range": lambda T, dev: T.quantile(
        _x(T, dev, 4), T.tensor([-0.5, 0.3], device=dev)),
    "quantile_q_2d": lambda T, dev: T.quantile(_x(T, dev, 4), T.tensor([[0.5]], device=dev)),
    "quantile_q_list": lambda T, dev: T.quantile(_x(T, dev, 4), [0.3]),
    "quantile_empty": lambda T, dev: T.quantile(_x(T, dev, 0), 0.5),
    "quantile_empty_dim": lambda T, dev: T.nanquantile(_x(T, dev, 0, 3), 0.5, dim=1),
    "quantile_empty_int": lambda T, dev: T.quantile(_x(T, dev, 0, dtype="int64"), 0.5),
    "quantile_interpolation": lambda T, dev: T.quantile(_x(T, dev, 4), 0.5,
                                                        interpolation="bad"),
    "quantile_interpolation_first": lambda T, dev: T.quantile(
        _x(T, dev, 4, dtype="int64"), 1.5, interpolation="cubic"),
    "quantile_bad_dim": lambda T, dev: T.quantile(_x(T, dev, 3, 4), 0.3, dim=3),
    "quantile_q_ints": lambda T, dev: T.quantile(_x(T, dev, 3, 4), 0, dim=1),
    # cov / corrcoef
    "cov_3d": lambda T, dev: T.cov(_x(T, dev, 2, 2, 2)),
    "cov_bool": lambda T, dev: T.cov(_x(T, dev, 2, 3, dtype="bool")),
    "cov_correction_float": lambda T, dev: T.cov(_x(T, dev, 2, 3), correction=1.5),
    "cov_fweights_float": lambda T, dev: T.cov(_x(T, dev, 3, 4), fweights=T.ones(4, device=dev)),
    "cov_fweights_bool": lambda T, dev: T.cov(_x(T, dev, 3, 4),
                                              fweights=T.ones(4, dtype=T.bool, device=dev)),
    "cov_fweights_2d": lambda T, dev: T.cov(_x(T, dev, 3, 4),
                                            fweights=T.ones(1, 4, dtype=T.int64, device=dev)),
    "cov_fweights_numel": lambda T, dev: T.cov(_x(T, dev, 3, 4),
                                               fweights=T.ones(3, dtype=T.int64, device=dev)),
    "cov_fweights_negative": lambda T, dev: T.cov(_x(T, dev, 3, 4),
                                                  fweights=T.tensor([1, -1, 1, 1], device=dev)),
    "cov_aweights_int": lambda T, dev: T.cov(_x(T, dev, 3, 4),
                                             aweights=T.ones(4, dtype=T.int64, device=dev)),
    "cov_aweights_negative": lambda T, dev: T.cov(
        _x(T, dev, 3, 4), aweights=T.tensor([1.0, -1.0, 1.0, 1.0], device=dev)),
    "cov_weights_zero": lambda T, dev: T.cov(_x(T, dev, 3, 4), aweights=T.zeros(4, device=dev)),
    "cov_0d": lambda T, dev: _quiet(lambda: T.cov(T.tensor(2.0, device=dev))),
    "cov_no_observations": lambda T, dev: _quiet(lambda: T.cov(_x(T, dev, 2, 0))),
    "cov_dof_zero_grad": lambda T, dev: _quiet(lambda: T.autograd.grad(
        T.cov(x := _x(T, dev, 2, 3, dtype="float64").requires_grad_(), correction=3).sum(), x)),
    "corrcoef_3d": lambda T, dev: T.corrcoef(_x(T, dev, 2, 2, 2)),
    # dist
    "dist_int": lambda T, dev: T.dist(_x(T, dev, 3, dtype="int64"), _x(T, dev, 3, dtype="int64")),
    "dist_not_broadcast": lambda T, dev: T.dist(_x(T, dev, 3, 4), _x(T, dev, 3, 2)),
    "dist_int_float": lambda T, dev: T.dist(_x(T, dev, 3, dtype="int64"), _x(T, dev, 3)),
    # cdist
    "cdist_int": lambda T, dev: T.cdist(_x(T, dev, 3, 2, dtype="int64"), _x(T, dev, 3, 2)),
    "cdist_int_x2": lambda T, dev: T.cdist(_x(T, dev, 3, 2), _x(T, dev, 3, 2, dtype="int64")),
    "cdist_1d": lambda T, dev: T.cdist(_x(T, dev, 3), _x(T, dev, 3)),
    "cdist_1d_x2": lambda T, dev: T.cdist(_x(T, dev, 2, 3), _x(T, dev, 3)),
    "cdist_columns": lambda T, dev: T.cdist(_x(T, dev, 3, 4), _x(T, dev, 3, 2)),
    "cdist_negative_p": lambda T, dev: T.cdist(_x(T, dev, 3, 4), _x(T, dev, 3, 4), p=-1),
    "cdist_mode": lambda T, dev: T.cdist(_x(T, dev, 3, 4), _x(T, dev, 3, 4), compute_mode="bad"),
    "cdist_dtypes": lambda T, dev: T.cdist(_x(T, dev, 3, 4), _x(T, dev, 3, 4, dtype="float64")),
    "cdist_batch": lambda T, dev: T.cdist(_x(T, dev, 2, 3, 4), _x(T, dev, 3, 5, 4)),
    "cdist_half": lambda T, dev: T.cdist(_x(T, dev, 3, 4, dtype="float16"),
                                         _x(T, dev, 3, 4, dtype="float16")),
    "cdist_1d_int": lambda T, dev: T.cdist(_x(T, dev, 3, dtype="int64"), _x(T, dev, 3, 2)),
    # renorm
    "renorm_int": lambda T, dev: T.renorm(_x(T, dev, 3, 4, dtype="int64"), 2, 0, 1),
    "renorm_p_negative": lambda T, dev: T.renorm(_x(T, dev, 3, 4), -1, 0, 1),
    "renorm_p_zero": lambda T, dev: T.renorm(_x(T, dev, 3, 4), 0, 0, 1),
    "renorm_maxnorm_negative": lambda T, dev: T.renorm(_x(T, dev, 3, 4), 2, 0, -1),
    "renorm_maxnorm_fraction": lambda T, dev: T.renorm(_x(T, dev, 3, 4), 2, 0, -0.5),
    "renorm_0d": lambda T, dev: T.renorm(T.tensor(2.0, device=dev), 2, 0, 1),
    "renorm_1d": lambda T, dev: T.renorm(_x(T, dev, 3), 2, 0, 1),
    "renorm_bad_dim": lambda T, dev: T.renorm(_x(T, dev, 3, 4), 2, 2, 1),
    "renorm_int_bad_p": lambda T, dev: T.renorm(_x(T, dev, 3, 4, dtype="int64"), 0, 0, 1),
    "renorm_inplace_leaf": lambda T, dev: _x(T, dev, 3, 4).requires_grad_().renorm_(2, 0, 1),
    "renorm_p_str": lambda T, dev: T.renorm(_x(T, dev, 3, 4), "a", 0, 1),
    "renorm_p_0d_tensor": lambda T, dev: T.renorm(_x(T, dev, 3, 4), T.tensor(2.0), 0, 1),
    # arguments that are not tensors
    "std_mean_list": lambda T, dev: T.std_mean([1.0]),
    "var_mean_str_dim": lambda T, dev: T.var_mean(_x(T, dev, 3), "a"),
    "nansum_list": lambda T, dev: T.nansum([1.0]),
    "nanmean_float": lambda T, dev: T.nanmean(2.0),
    "aminmax_list": lambda T, dev: T.aminmax([1]),
    "quantile_list": lambda T, dev: T.quantile([1.0], 0.5),
    "cov_list": lambda T, dev: T.cov([1.0]),
    "cov_fweights_list": lambda T, dev: T.cov(_x(T, dev, 3, 3), fweights=[1, 2, 3]),
    "corrcoef_int": lambda T, dev: T.corrcoef(1),
    "dist_float": lambda T, dev: T.dist(_x(T, dev, 3), 2.0),
    "dist_method_int": lambda T, dev: _x(T, dev, 3).dist(1),
    "cdist_list": lambda T, dev: T.cdist([[1.0]], _x(T, dev, 3)),
    "cdist_x2_int": lambda T, dev: T.cdist(_x(T, dev, 3, 3), 1),
    "renorm_list": lambda T, dev: T.renorm([[1.0]], 2, 0, 1),
}

test_misuse = catalogue_test(CASES)


def _out(T: Any, dev: str, dtype: str) -> Any:
    return T.empty(0, dtype=getattr(T, dtype), device=dev)


OUT_CASES: dict[str, Case] = {
    f"{name}_out_{dtype}": (lambda T, dev, f=f, dtype=dtype: f(T, dev, _out(T, dev, dtype)))
    for name, f in {
        "quantile": lambda T, dev, o: T.quantile(_x(T, dev, 3, 4), 0.3, out=o),
        "nanquantile": lambda T, dev, o: T.nanquantile(_x(T, dev, 3, 4), 0.3, dim=1, out=o),
        "quantile_int_input": lambda T, dev, o: T.quantile(_x(T, dev, 3, dtype="int64"), 0.3,
                                                           out=o),
        "nansum": lambda T, dev, o: T.nansum(_x(T, dev, 3, 4), 1, out=o),
        "nansum_int": lambda T, dev, o: T.nansum(_x(T, dev, 3, 4, dtype="int64"), out=o),
        "nanmean": lambda T, dev, o: T.nanmean(_x(T, dev, 3, 4), out=o),
        "nanmean_int": lambda T, dev, o: T.nanmean(_x(T, dev, 3, 4, dtype="int64"), out=o),
        "renorm": lambda T, dev, o: T.renorm(_x(T, dev, 3, 4), 2, 0, 1.0, out=o),
        "aminmax": lambda T, dev, o: T.aminmax(_x(T, dev, 3, 4), out=(o, o.new_empty(0))),
    }.items()
    for dtype in ("float32", "float64", "int64", "float16")
}
OUT_CASES["nansum_out_grad"] = lambda T, dev: T.nansum(
    _x(T, dev, 3).requires_grad_(), out=_out(T, dev, "float32"))
OUT_CASES["quantile_out_grad"] = lambda T, dev: T.quantile(
    _x(T, dev, 3).requires_grad_(), 0.5, out=_out(T, dev, "float32"))

test_misuse_out = catalogue_test(OUT_CASES)
