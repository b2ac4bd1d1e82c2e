"""Misuse catalogue: the pointwise family and ``torch.special``. Arguments of the wrong type
(numbers where PyTorch wants tensors, floats for ints, strings), dtypes PyTorch has no kernel
for (bool rounding, integer ``frac``/``hypot``/``lerp``, float16 ``erfcx``/``zeta``), integer
division by zero in ``fmod``, dtype mismatches (``heaviside``, ``lerp``), ``out=`` tensors of
the wrong dtype (the functions whose kernels take none), in-place forms whose result the tensor
cannot hold, and the in-place forms PyTorch cannot differentiate."""

from __future__ import annotations

from typing import Any

import pytest

from tests.misuse._catalogue import Case, check_case


def _f(T: Any, dev: str, *v: Any) -> Any:
    return T.tensor(list(v) or [0.25, 0.5, 2.0], device=dev)


def _i(T: Any, dev: str, *v: Any) -> Any:
    return T.tensor(list(v) or [1, 2, 3], device=dev)


def _b(T: Any, dev: str) -> Any:
    return T.tensor([True, False], device=dev)


def _out(T: Any, dev: str, dtype: str, n: int = 3) -> Any:
    return T.empty(n, dtype=getattr(T, dtype), device=dev)


def _backward(T: Any, y: Any) -> Any:
    y.sum().backward()
    return y


CASES: dict[str, Case] = {
    # unary: arguments
    "tan_number": lambda T, dev: T.tan(1.0),
    "erf_list": lambda T, dev: T.erf([0.5]),
    "special_erf_number": lambda T, dev: T.special.erf(1.0),
    "special_ndtr_number": lambda T, dev: T.special.ndtr(1),
    "special_expit_number": lambda T, dev: T.special.expit(1.0),
    "special_gammaln_number": lambda T, dev: T.special.gammaln(1.0),
    "round_decimals_float": lambda T, dev: T.round(_f(T, dev), decimals=1.5),
    "round_decimals_bool": lambda T, dev: _f(T, dev).round(decimals=True),
    "round_int_decimals": lambda T, dev: T.round(_i(T, dev), decimals=1),
    "round_int_decimals_0": lambda T, dev: T.round(_i(T, dev), decimals=0),
    "round_bool": lambda T, dev: T.round(_b(T, dev)),
    "round_int": lambda T, dev: T.round(_i(T, dev)),
    "special_round_number": lambda T, dev: T.special.round(1.5),
    "trunc_bool": lambda T, dev: T.trunc(_b(T, dev)),
    "fix_bool": lambda T, dev: _b(T, dev).fix(),
    "ceil_bool": lambda T, dev: T.ceil(_b(T, dev)),
    "frac_int": lambda T, dev: T.frac(_i(T, dev)),
    "frac_bool": lambda T, dev: _b(T, dev).frac(),
    "positive_bool": lambda T, dev: T.positive(_b(T, dev)),
    "sgn_bool": lambda T, dev: T.sgn(_b(T, dev)),
    "signbit_int": lambda T, dev: T.signbit(_i(T, dev, -1, 0, 1)),
    "nan_to_num_str": lambda T, dev: T.nan_to_num(_f(T, dev), nan="a"),
    "nan_to_num_posinf_str": lambda T, dev: T.nan_to_num(_f(T, dev), 0.0, "a"),
    "nan_to_num_neginf_list": lambda T, dev: _f(T, dev).nan_to_num(neginf=[1.0]),
    "nan_to_num_int_nan": lambda T, dev: T.nan_to_num(_i(T, dev), nan=1.5),
    "nan_to_num_bool": lambda T, dev: T.nan_to_num(_b(T, dev)),
    "logit_str": lambda T, dev: T.logit(_f(T, dev), "a"),
    "logit_method_str": lambda T, dev: _f(T, dev).logit("a"),
    "logit_int_eps": lambda T, dev: T.logit(_f(T, dev), 1),
    "special_logit_number": lambda T, dev: T.special.logit(0.5),
    "polygamma_negative": lambda T, dev: T.polygamma(-1, _f(T, dev)),
    "polygamma_float_n": lambda T, dev: T.polygamma(1.5, _f(T, dev)),
    "polygamma_bool_n": lambda T, dev: T.polygamma(True, _f(T, dev)),
    "polygamma_str_n": lambda T, dev: T.polygamma("a", _f(T, dev)),
    "polygamma_tensor_n": lambda T, dev: T.polygamma(T.tensor(1), _f(T, dev)),
    "polygamma_number_input": lambda T, dev: T.polygamma(1, 2.0),
    "polygamma_method_float": lambda T, dev: _f(T, dev).polygamma(1.5),
    "polygamma__negative": lambda T, dev: _f(T, dev).polygamma_(-2),
    "special_polygamma_number": lambda T, dev: T.special.polygamma(1, 2.0),
    "mvlgamma_p0": lambda T, dev: T.mvlgamma(_f(T, dev), 0),
    "mvlgamma_p_float": lambda T, dev: T.mvlgamma(_f(T, dev), 1.5),
    "mvlgamma_bool": lambda T, dev: T.mvlgamma(_b(T, dev), 1),
    "mvlgamma_int": lambda T, dev: T.mvlgamma(_i(T, dev), 2),
    "mvlgamma__int": lambda T, dev: _i(T, dev).mvlgamma_(2),
    "mvlgamma_below_domain": lambda T, dev: T.mvlgamma(_f(T, dev), 3),
    "special_multigammaln_float_p": lambda T, dev: T.special.multigammaln(_f(T, dev), 1.5),
    "erfcx_half": lambda T, dev: T.special.erfcx(_f(T, dev).half()),
    "ndtri_half": lambda T, dev: T.special.ndtri(_f(T, dev).half()),
    "log_ndtr_half": lambda T, dev: T.special.log_ndtr(_f(T, dev).half()),
    "spherical_bessel_j0_number": lambda T, dev: T.special.spherical_bessel_j0(1.0),
    "modified_bessel_i0_half": lambda T, dev: T.special.modified_bessel_i0(_f(T, dev).half()),
    "spherical_bessel_j0_half": lambda T, dev: T.special.spherical_bessel_j0(_f(T, dev).half()),
    "float_power_str": lambda T, dev: T.float_power(_f(T, dev), "a"),
    "float_power_numbers": lambda T, dev: T.float_power(2.0, 3.0),
    "float_power__float32": lambda T, dev: _f(T, dev).float_power_(2),
    "float_power__int": lambda T, dev: _i(T, dev).float_power_(2),
    # unary: in place and out=
    "tan__int": lambda T, dev: _i(T, dev).tan_(),
    "erfinv__int": lambda T, dev: _i(T, dev).erfinv_(),
    "deg2rad__int": lambda T, dev: _i(T, dev).deg2rad_(),
    "round__bool": lambda T, dev: _b(T, dev).round_(),
    "trunc__int": lambda T, dev: _i(T, dev).trunc_(),
    "tan_out_int": lambda T, dev: T.tan(_f(T, dev), out=_out(T, dev, "int64")),
    "tan_out_half": lambda T, dev: T.tan(_f(T, dev), out=_out(T, dev, "float16")),
    "trunc_out_double": lambda T, dev: T.trunc(_f(T, dev), out=_out(T, dev, "float64")),
    "round_out_int_input": lambda T, dev: T.round(_i(T, dev), out=_out(T, dev, "float32")),
    "sgn_out_double": lambda T, dev: T.sgn(_f(T, dev), out=_out(T, dev, "float64")),
    "frac_out_half": lambda T, dev: T.frac(_f(T, dev), out=_out(T, dev, "float16")),
    "nan_to_num_out_double": lambda T, dev: T.nan_to_num(_f(T, dev), out=_out(T, dev, "float64")),
    "signbit_out_int": lambda T, dev: T.signbit(_f(T, dev), out=_out(T, dev, "int64")),
    "signbit_out_bool": lambda T, dev: T.signbit(_f(T, dev, -1.0, 0.0, -0.0),
                                                 out=_out(T, dev, "bool")),
    "float_power_out_float": lambda T, dev: T.float_power(_f(T, dev), 2,
                                                          out=_out(T, dev, "float32")),
    "erf_out_requires_grad": lambda T, dev: T.erf(_f(T, dev).requires_grad_(),
                                                  out=_out(T, dev, "float32")),
    "special_i0e_out_int": lambda T, dev: T.special.i0e(_f(T, dev), out=_out(T, dev, "int64")),
    "asinh__backward": lambda T, dev: _backward(T, (_f(T, dev).requires_grad_() * 1).asinh_()),
    "acosh__backward": lambda T, dev: _backward(T, (_f(T, dev).requires_grad_() + 1).acosh_()),
    "arctanh__backward": lambda T, dev: _backward(T, (_f(T, dev).requires_grad_() * 0.1)
                                                  .arctanh_()),
    "tan__leaf": lambda T, dev: _f(T, dev).requires_grad_().tan_(),
    # binary
    "atan2_number": lambda T, dev: T.atan2(_f(T, dev), 2.0),
    "atan2_method_number": lambda T, dev: _f(T, dev).atan2(2),
    "atan2_number_first": lambda T, dev: T.atan2(2.0, _f(T, dev)),
    "arctan2_str": lambda T, dev: T.arctan2(_f(T, dev), "a"),
    "hypot_int": lambda T, dev: T.hypot(_i(T, dev), _i(T, dev)),
    "hypot_bool": lambda T, dev: T.hypot(_b(T, dev), _b(T, dev)),
    "hypot_method_number": lambda T, dev: _f(T, dev).hypot(1.0),
    "logaddexp_int": lambda T, dev: T.logaddexp(_i(T, dev), _i(T, dev)),
    "logaddexp2_number": lambda T, dev: T.logaddexp2(_f(T, dev), 1.0),
    "nextafter_int": lambda T, dev: T.nextafter(_i(T, dev), _i(T, dev)),
    "fmax_number": lambda T, dev: T.fmax(_f(T, dev), 1.0),
    "fmin_shapes": lambda T, dev: T.fmin(_f(T, dev), T.ones(2, device=dev)),
    "ldexp_float_bool": lambda T, dev: T.ldexp(_f(T, dev), T.tensor([True, False, True],
                                                                   device=dev)),
    "ldexp_number": lambda T, dev: T.ldexp(_f(T, dev), 2),
    "ldexp__int": lambda T, dev: _i(T, dev).ldexp_(_i(T, dev)),
    "ldexp_out_int": lambda T, dev: T.ldexp(_f(T, dev), _i(T, dev), out=_out(T, dev, "int64")),
    "heaviside_number": lambda T, dev: T.heaviside(_f(T, dev), 0.5),
    "heaviside_dtypes": lambda T, dev: T.heaviside(_f(T, dev), _f(T, dev).double()),
    "heaviside_0d_dtypes": lambda T, dev: T.heaviside(_i(T, dev), T.tensor(0.5, device=dev)),
    "heaviside_out_double": lambda T, dev: T.heaviside(_f(T, dev), _f(T, dev),
                                                      out=_out(T, dev, "float64")),
    "heaviside_backward": lambda T, dev: _backward(T, T.heaviside(
        _f(T, dev).requires_grad_(), _f(T, dev))),
    "heaviside__int_values_float": lambda T, dev: _i(T, dev).heaviside_(_f(T, dev)),
    "xlogy_numbers": lambda T, dev: T.xlogy(2.0, 3.0),
    "xlogy_str": lambda T, dev: T.xlogy(_f(T, dev), "a"),
    "xlogy_method_str": lambda T, dev: _f(T, dev).xlogy("a"),
    "xlogy__int": lambda T, dev: _i(T, dev).xlogy_(2),
    "special_xlogy_numbers": lambda T, dev: T.special.xlogy(2.0, 3.0),
    "special_xlog1py_str": lambda T, dev: T.special.xlog1py("a", _f(T, dev)),
    "copysign_number_first": lambda T, dev: T.copysign(2.0, _f(T, dev)),
    "copysign_method_str": lambda T, dev: _f(T, dev).copysign("a"),
    "copysign__int": lambda T, dev: _i(T, dev).copysign_(-1),
    "fmod_int_zero": lambda T, dev: T.fmod(_i(T, dev), 0),
    "fmod_int_zero_tensor": lambda T, dev: T.fmod(_i(T, dev), _i(T, dev, 1, 0, 2)),
    "fmod_float_zero": lambda T, dev: T.fmod(_f(T, dev), 0),
    "fmod_bool": lambda T, dev: T.fmod(_b(T, dev), True),
    "fmod_number_first": lambda T, dev: T.fmod(2, _i(T, dev)),
    "fmod_str": lambda T, dev: T.fmod(_f(T, dev), "a"),
    "fmod__int_float": lambda T, dev: _i(T, dev).fmod_(1.5),
    "zeta_numbers": lambda T, dev: T.special.zeta(2.0, 3.0),
    "zeta_half": lambda T, dev: T.special.zeta(_f(T, dev).half() + 1, _f(T, dev).half()),
    "zeta_x_backward": lambda T, dev: _backward(T, T.special.zeta(
        _f(T, dev).requires_grad_() + 1, _f(T, dev))),
    "clamp_min_none": lambda T, dev: T.clamp_min(_f(T, dev), None),
    "clamp_min_str": lambda T, dev: _f(T, dev).clamp_min("a"),
    "clamp_max_number_first": lambda T, dev: T.clamp_max(1.0, _f(T, dev)),
    "clamp_min_bool_bool": lambda T, dev: T.clamp_min(_b(T, dev), True),
    "clamp_min_int8_overflow": lambda T, dev: T.clamp_min(_i(T, dev).to(T.int8), 300),
    "clamp_max_half_overflow": lambda T, dev: T.clamp_max(_f(T, dev).half(), 1e10),
    "clamp_min__int_float": lambda T, dev: _i(T, dev).clamp_min_(1.5),
    "clamp_max__str": lambda T, dev: _i(T, dev).clamp_max_("a"),
    # ternary
    "lerp_end_number": lambda T, dev: T.lerp(_f(T, dev), 1.0, 0.5),
    "lerp_weight_str": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev), "a"),
    "lerp_end_dtype": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev).double(), 0.5),
    "lerp_weight_dtype": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev), _f(T, dev).double()),
    "lerp_weight_0d_double": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev),
                                                   T.tensor(0.5, dtype=T.float64, device=dev)),
    "lerp_int": lambda T, dev: T.lerp(_i(T, dev), _i(T, dev), 1),
    "lerp_int_tensor_weight": lambda T, dev: T.lerp(_i(T, dev), _i(T, dev), _i(T, dev)),
    "lerp_shapes": lambda T, dev: T.lerp(_f(T, dev), T.ones(2, device=dev), 0.5),
    "lerp_weight_shapes": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev), T.ones(4, device=dev)),
    "lerp_out_double": lambda T, dev: T.lerp(_f(T, dev), _f(T, dev), 0.5,
                                             out=_out(T, dev, "float64")),
    "lerp__int": lambda T, dev: _i(T, dev).lerp_(_i(T, dev), 0.5),
    "addcmul_number": lambda T, dev: T.addcmul(_f(T, dev), 2.0, _f(T, dev)),
    "addcmul_method_number": lambda T, dev: _f(T, dev).addcmul(_f(T, dev), 2.0),
    "addcmul_value_str": lambda T, dev: T.addcmul(_f(T, dev), _f(T, dev), _f(T, dev), value="a"),
    "addcmul_value_tensor": lambda T, dev: T.addcmul(_f(T, dev), _f(T, dev), _f(T, dev),
                                                     value=T.tensor(2.0)),
    "addcmul_shapes": lambda T, dev: T.addcmul(_f(T, dev), T.ones(2, device=dev), _f(T, dev)),
    "addcmul_bool": lambda T, dev: T.addcmul(_b(T, dev), _b(T, dev), _b(T, dev)),
    "addcmul_int_float_value": lambda T, dev: T.addcmul(_i(T, dev), _i(T, dev), _i(T, dev),
                                                        value=2.7),
    "addcmul_uint8_negative_value": lambda T, dev: T.addcmul(
        _i(T, dev).to(T.uint8), _i(T, dev).to(T.uint8), _i(T, dev).to(T.uint8), value=-1),
    "addcdiv_int": lambda T, dev: T.addcdiv(_f(T, dev), _i(T, dev), _i(T, dev)),
    "addcdiv_bool": lambda T, dev: T.addcdiv(_i(T, dev), _b(T, dev), _i(T, dev)),
    "addcdiv__int": lambda T, dev: _i(T, dev).addcdiv_(_f(T, dev), _f(T, dev)),
    "addcmul_out_requires_grad": lambda T, dev: T.addcmul(
        _f(T, dev), _f(T, dev).requires_grad_(), _f(T, dev), out=_out(T, dev, "float32")),
}

# NOTE: PyTorch's CPU kernels are named "<op>_vml_cpu" (ldexp's "ldexp_cpu_exp", addcmul's
# "addcmul_cpu_out"), its CUDA ones "<op>_cuda": the CPU oracle's words are checked on the CPU.
CPU_NAMED = {"ceil_bool", "fix_bool", "trunc_bool", "round_bool", "round__bool",
             "round_int_decimals_0", "ldexp_float_bool", "addcmul_bool"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_misuse(device: str, name: str) -> None:
    if device != "cpu" and name in CPU_NAMED:
        pytest.skip("the CPU kernel's name is PyTorch's CPU message")
    check_case(CASES[name], device)
