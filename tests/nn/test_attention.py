"""F.scaled_dot_product_attention, F.multi_head_attention_forward and nn.MultiheadAttention
against the torch oracle (float64, identical weights): values, attention weights, gradients of
the inputs, of a float mask and of every parameter; reprs, state_dict, PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import copy_params, grads_of, t

TOL = {"rtol": 1e-10, "atol": 1e-12}  # float64: the same math up to summation order


def _mask(kind: str, shape: tuple[int, ...], seed: int) -> tuple[np.ndarray, bool]:
    """A mask of ``kind`` ('bool', 'float', 'dead_bool', 'dead_float') and whether it is float."""
    rng = np.random.default_rng(seed)
    if kind.endswith("bool"):
        m = rng.random(shape) > 0.3
        if kind == "dead_bool":
            m[..., 1, :] = False  # row 1 attends to nothing
        return m, False
    m = rng.standard_normal(shape)
    m[rng.random(shape) < 0.2] = -np.inf
    if kind == "dead_float":
        m[..., 0, :] = -np.inf
    return m, True


# (q shape, k shape, v shape, mask kind or None, mask shape, kwargs)
SDPA: list[tuple[Any, ...]] = [
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, None, {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "bool", (4, 6), {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "bool", (2, 1, 4, 6), {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "float", (3, 4, 6), {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "dead_bool", (4, 6), {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), "dead_float", (2, 3, 4, 6), {}),
    ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), None, None, {"is_causal": True}),
    ((2, 6, 5), (2, 3, 5), (2, 3, 4), None, None, {"is_causal": True}),
    ((2, 4, 5), (2, 6, 5), (2, 6, 4), "float", (4, 6), {"scale": 0.3}),
    ((2, 4, 3, 5), (2, 2, 6, 5), (2, 1, 6, 4), None, None, {"enable_gqa": True}),
    ((2, 3, 2, 4, 5), (2, 3, 2, 6, 5), (2, 3, 2, 6, 3), "bool", (4, 6), {}),
    ((4, 5), (6, 5), (6, 3), None, None, {}),
    ((2, 4, 5), (1, 6, 5), (1, 6, 3), None, None, {}),
]


@pytest.mark.parametrize("qs, ks, vs, mkind, mshape, kw", SDPA)
def test_sdpa_matches_torch(qs: Any, ks: Any, vs: Any, mkind: Any, mshape: Any, kw: Any,
                            device: str) -> None:
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal(s) for s in (qs, ks, vs))
    m, is_float = _mask(mkind, mshape, 2) if mkind else (None, False)

    def run(T: Any, dev: str) -> tuple[Any, list[Any]]:
        ins = [t(T, dev, a, grad=True) for a in (q, k, v)]
        mt = None
        if m is not None:
            mt = t(T, dev, m, grad=True) if is_float else T.tensor(m.tolist(), device=dev)
        out = T.nn.functional.scaled_dot_product_attention(*ins, attn_mask=mt, **kw)
        return out, grads_of(out, ins + ([mt] if is_float else []))

    out_o, g_o = run(ag, device)
    out_t, g_t = run(torch, "cpu")
    assert_same(out_o, out_t, **TOL)
    assert_same(g_o, g_t, **TOL)


def test_sdpa_dropout_uses_our_generator(device: str) -> None:
    q = ag.randn(2, 3, 4, 5, dtype=ag.float64, device=device)
    F = ag.nn.functional
    ag.manual_seed(3)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    ag.manual_seed(3)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    c = F.scaled_dot_product_attention(q, q, q)
    assert bool((a == b).all()) and not bool((a == c).all())
    assert bool((F.scaled_dot_product_attention(q, q, q, dropout_p=1.0) == 0).all())


# ---- MultiheadAttention ---------------------------------------------------------------------

# (constructor kwargs, forward kwargs, how the inputs are made, mask spec)
MHA: list[tuple[dict[str, Any], dict[str, Any], str, str]] = [
    ({}, {}, "cross", ""),
    ({}, {}, "self", ""),
    ({}, {"average_attn_weights": False}, "cross", ""),
    ({}, {"need_weights": False}, "self", ""),
    ({"kdim": 3, "vdim": 5}, {}, "cross", ""),
    ({"add_bias_kv": True}, {}, "cross", "kpm_bool"),
    ({"add_zero_attn": True}, {}, "cross", "attn2_bool"),
    ({"add_bias_kv": True, "add_zero_attn": True}, {"need_weights": False}, "cross", "attn3"),
    ({"bias": False}, {}, "kv", "kpm_float"),
    ({}, {"need_weights": False}, "self", "kpm_bool+attn2_bool"),
    ({}, {"need_weights": False, "is_causal": True}, "self", "causal"),
    ({"batch_first": True}, {}, "self", "attn2_float"),
    ({"batch_first": True, "kdim": 3, "vdim": 5}, {"need_weights": False}, "cross", "kpm_bool"),
    ({}, {}, "unbatched", "kpm_bool"),
    ({}, {"need_weights": False}, "unbatched", "attn3"),
]
E, H, L, S, N = 4, 2, 3, 5, 2


def _mha_inputs(mode: str, kw: dict[str, Any], seed: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    kd, vd = kw.get("kdim", E), kw.get("vdim", E)
    if mode == "unbatched":
        return [rng.standard_normal((L, E)), rng.standard_normal((S, kd)),
                rng.standard_normal((S, vd))]
    lead = (lambda n: (N, n)) if kw.get("batch_first") else (lambda n: (n, N))
    if mode == "self":
        return [rng.standard_normal((*lead(L), E))]
    if mode == "kv":
        return [rng.standard_normal((*lead(L), E)), rng.standard_normal((*lead(S), kd))]
    return [rng.standard_normal((*lead(L), E)), rng.standard_normal((*lead(S), kd)),
            rng.standard_normal((*lead(S), vd))]


def _mha_masks(T: Any, dev: str, spec: str, batched: bool) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    out: dict[str, Any] = {}
    src = L if "causal" in spec or spec.startswith("kpm_bool+") else S
    for part in filter(None, spec.split("+")):
        if part == "kpm_bool":
            m = rng.random((N, src) if batched else (src,)) < 0.3
            m[..., 0] = False
            out["key_padding_mask"] = T.tensor(m.tolist(), device=dev)
        elif part == "kpm_float":
            out["key_padding_mask"] = t(T, dev, rng.standard_normal((N, S)))
        elif part == "attn2_bool":
            m = rng.random((L, src)) < 0.3
            m[:, 0] = False
            out["attn_mask"] = T.tensor(m.tolist(), device=dev)
        elif part == "attn2_float":
            out["attn_mask"] = t(T, dev, rng.standard_normal((L, L)))
        elif part == "attn3":
            out["attn_mask"] = t(T, dev, rng.standard_normal(((N * H) if batched else H, L, S)))
        elif part == "causal":
            out["attn_mask"] = T.nn.Transformer.generate_square_subsequent_mask(
                L, device=dev, dtype=T.float64)
    return out


@pytest.mark.parametrize("ckw, fkw, mode, masks", MHA)
def test_multihead_attention_matches_torch(ckw: dict[str, Any], fkw: dict[str, Any], mode: str,
                                           masks: str, device: str) -> None:
    ours = ag.nn.MultiheadAttention(E, H, **ckw).double()
    theirs = torch.nn.MultiheadAttention(E, H, **ckw).double()
    assert repr(ours) == repr(theirs)
    copy_params(ours, theirs)
    ours.to(device)
    arrays = _mha_inputs(mode, ckw)

    def run(T: Any, dev: str, mod: Any) -> tuple[Any, ...]:
        ins = [t(T, dev, a, grad=True) for a in arrays]
        qkv = ins * 3 if len(ins) == 1 else [ins[0], ins[1], ins[1]] if len(ins) == 2 else ins
        out, w = mod(*qkv, **fkw, **_mha_masks(T, dev, masks, mode != "unbatched"))
        return out, w, grads_of(out, ins + list(mod.parameters()))

    o_out, o_w, o_g = run(ag, device, ours)
    t_out, t_w, t_g = run(torch, "cpu", theirs)
    assert_same(o_out, t_out, **TOL)
    assert_same(o_w, t_w, **TOL)
    assert_same(o_g, t_g, **TOL)


def test_mha_state_dict_and_init(device: str) -> None:
    for kw in ({}, {"kdim": 3, "vdim": 5, "add_bias_kv": True}, {"bias": False}):
        ours, theirs = ag.nn.MultiheadAttention(6, 3, **kw), torch.nn.MultiheadAttention(6, 3, **kw)
        assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
            [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
        ours.to(device).load_state_dict({k: ag.tensor(v.numpy(), device=device)
                                         for k, v in theirs.state_dict().items()}, strict=True)
        for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
            assert np.array_equal(a.cpu().numpy(), b.numpy()), k
    m = ag.nn.MultiheadAttention(64, 4, add_bias_kv=True)
    assert float(m.in_proj_bias.abs().sum()) == 0 and float(m.out_proj.bias.abs().sum()) == 0
    bound = (6 / (64 + 192)) ** 0.5  # xavier_uniform on (3E, E)
    assert float(m.in_proj_weight.abs().max()) <= bound
    assert float(m.in_proj_weight.std()) == pytest.approx(bound / 3 ** 0.5, rel=0.05)


def _mha(T: Any, dev: str, **kw: Any) -> Any:
    return T.nn.MultiheadAttention(4, 2, **kw).to(dev)


def _x(T: Any, dev: str, *shape: int) -> Any:
    return T.ones(*shape, device=dev)


def _sdpa(T: Any, *args: Any, **kw: Any) -> Any:
    return T.nn.functional.scaled_dot_product_attention(*args, **kw)


CASES: dict[str, Any] = {
    "sdpa_mask_and_causal": lambda T, dev: _sdpa(T, _x(T, dev, 2, 3, 4), _x(T, dev, 2, 3, 4),
                                                 _x(T, dev, 2, 3, 4),
                                                 attn_mask=_x(T, dev, 3, 3), is_causal=True),
    "sdpa_dtypes": lambda T, dev: _sdpa(T, _x(T, dev, 2, 4), _x(T, dev, 2, 4).double(),
                                        _x(T, dev, 2, 4)),
    "sdpa_1d": lambda T, dev: _sdpa(T, _x(T, dev, 4), _x(T, dev, 4), _x(T, dev, 4)),
    "sdpa_int_mask": lambda T, dev: _sdpa(T, _x(T, dev, 2, 4), _x(T, dev, 2, 4), _x(T, dev, 2, 4),
                                          attn_mask=T.ones(2, 2, dtype=T.int64, device=dev)),
    "sdpa_gqa_indivisible": lambda T, dev: _sdpa(T, _x(T, dev, 1, 6, 2, 4), _x(T, dev, 1, 4, 2, 4),
                                                 _x(T, dev, 1, 4, 2, 4), enable_gqa=True),
    "sdpa_not_tensor": lambda T, dev: _sdpa(T, 1, _x(T, dev, 2, 4), _x(T, dev, 2, 4)),
    "sdpa_p": lambda T, dev: _sdpa(T, _x(T, dev, 2, 4), _x(T, dev, 2, 4), _x(T, dev, 2, 4),
                                   dropout_p=1.5),
    "sdpa_1d_mask": lambda T, dev: _sdpa(T, _x(T, dev, 1, 2, 3, 4), _x(T, dev, 1, 2, 3, 4),
                                         _x(T, dev, 1, 2, 3, 4),
                                         attn_mask=T.ones(3, dtype=T.bool, device=dev)),
    "sdpa_0d_mask": lambda T, dev: _sdpa(T, _x(T, dev, 1, 2, 3, 4), _x(T, dev, 1, 2, 3, 4),
                                         _x(T, dev, 1, 2, 3, 4),
                                         attn_mask=T.zeros((), device=dev)),
    "sdpa_1d_mask_3d": lambda T, dev: _sdpa(T, _x(T, dev, 2, 3, 4), _x(T, dev, 2, 3, 4),
                                            _x(T, dev, 2, 3, 4),
                                            attn_mask=T.ones(3, dtype=T.bool, device=dev)),
    "sdpa_empty_keys": lambda T, dev: _sdpa(T, _x(T, dev, 2, 3, 4), _x(T, dev, 2, 0, 4),
                                            _x(T, dev, 2, 0, 4)),
    "mha_heads": lambda T, dev: T.nn.MultiheadAttention(4, 3),
    "mha_zero": lambda T, dev: T.nn.MultiheadAttention(0, 2),
    "mha_1d_query": lambda T, dev: _mha(T, dev)(_x(T, dev, 4), _x(T, dev, 4), _x(T, dev, 4)),
    "mha_key_dims": lambda T, dev: _mha(T, dev)(_x(T, dev, 3, 2, 4), _x(T, dev, 3, 4),
                                                _x(T, dev, 3, 4)),
    "mha_embed": lambda T, dev: _mha(T, dev)(_x(T, dev, 3, 2, 5), _x(T, dev, 3, 2, 5),
                                             _x(T, dev, 3, 2, 5)),
    "mha_int_mask": lambda T, dev: _mha(T, dev)(
        _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4),
        key_padding_mask=T.zeros(2, 3, dtype=T.int64, device=dev)),
    "mha_attn_shape": lambda T, dev: _mha(T, dev)(
        _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4),
        attn_mask=T.zeros(3, 4, dtype=T.bool, device=dev)),
    "mha_attn3_shape": lambda T, dev: _mha(T, dev)(
        _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4),
        attn_mask=T.zeros(2, 3, 3, device=dev)),
    "mha_kpm_shape": lambda T, dev: _mha(T, dev)(
        _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4),
        key_padding_mask=T.zeros(2, 4, dtype=T.bool, device=dev)),
    "mha_causal_no_mask": lambda T, dev: _mha(T, dev)(
        _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4), is_causal=True),
    "mha_kv_shapes": lambda T, dev: _mha(T, dev)(_x(T, dev, 3, 2, 4), _x(T, dev, 3, 2, 4),
                                                 _x(T, dev, 5, 2, 4)),
}
test_misuse = catalogue_test(CASES)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_forward_static_kv_and_dead_rows(need_weights: bool, device: str) -> None:
    """``static_k``/``static_v`` replace the projected keys/values; a query row with every key
    masked gives NaN with ``need_weights`` (plain softmax) and the bias otherwise, as PyTorch."""
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s) for s in ((L, N, E), (S, N, E), (S, N, E), (3 * E, E),
                                               (3 * E,), (E, E), (E,), (N * H, S, E // H),
                                               (N * H, S, E // H))]
    mask = np.zeros((L, S), dtype=bool)
    mask[1] = True

    def run(T: Any, dev: str) -> tuple[Any, ...]:
        q, k, v, w, b, ow, ob, sk, sv = (t(T, dev, a, grad=True) for a in arrays)
        out, wts = T.nn.functional.multi_head_attention_forward(
            q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob,
            attn_mask=T.tensor(mask.tolist(), device=dev), need_weights=need_weights,
            static_k=sk, static_v=sv)
        keep = [0, 2]  # NOTE: row 1 is NaN with need_weights; compare gradients elsewhere
        return out, wts, grads_of(out[keep], [q, w, b, ow, ob, sk, sv])

    assert_same(run(ag, device), run(torch, "cpu"), **TOL)


def test_sdpa_double_backward(device: str) -> None:
    rng = np.random.default_rng(8)
    ins = [t(ag, device, rng.standard_normal(s), grad=True) for s in ((2, 3, 4), (2, 5, 4),
                                                                      (2, 5, 3))]
    keep = ag.tensor((rng.random((3, 5)) > 0.3).tolist(), device=device)
    F = ag.nn.functional
    assert ag.autograd.gradgradcheck(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=keep), tuple(ins))
