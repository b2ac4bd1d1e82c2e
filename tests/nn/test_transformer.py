"""The Transformer layers and stacks against the torch oracle from identical weights (float64,
dropout 0 in training mode): outputs and gradients of inputs and every parameter for post- and
pre-norm, relu/gelu, batch_first and the masks; state_dict keys and loading, reprs, the nested-
tensor eval path's zeros at padded positions, the encoder's warning, PyTorch's errors."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import copy_params, grads_of, t

TOL = {"rtol": 1e-9, "atol": 1e-11}  # float64; LayerNorm and softmax sums in another order
D, H, FF, N, LS, LT = 4, 2, 6, 2, 4, 3


def _build(T: Any, kind: str, kw: dict[str, Any]) -> Any:
    nn = T.nn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "enc_layer":
            return nn.TransformerEncoderLayer(D, H, FF, 0.0, **kw)
        if kind == "dec_layer":
            return nn.TransformerDecoderLayer(D, H, FF, 0.0, **kw)
        if kind == "encoder":
            return nn.TransformerEncoder(nn.TransformerEncoderLayer(D, H, FF, 0.0, **kw), 2,
                                         nn.LayerNorm(D))
        if kind == "decoder":
            return nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF, 0.0, **kw), 2)
        return nn.Transformer(D, H, 1, 1, FF, 0.0, **kw)


def _seq(bf: bool, n: int, seed: int, unbatched: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    shape = (n, D) if unbatched else (N, n, D) if bf else (n, N, D)
    return rng.standard_normal(shape)


def _kpm(T: Any, dev: str, n: int, as_float: bool = False) -> Any:
    """Key padding: the last key of batch entry 1 (bool True, or float -inf, = ignored)."""
    m = np.zeros((N, n), dtype=bool)
    m[1, -1] = True
    if as_float:  # NOTE: to go with a float attn mask (mixed mask types warn in PyTorch)
        return T.tensor(np.where(m, -np.inf, 0.0).tolist(), dtype=T.float64, device=dev)
    return T.tensor(m.tolist(), device=dev)


def _masks(T: Any, dev: str, kind: str, spec: str) -> dict[str, Any]:
    causal = T.nn.Transformer.generate_square_subsequent_mask
    out: dict[str, Any] = {}
    if "mask" in spec:
        if kind in ("enc_layer",):
            out["src_mask"] = causal(LS, device=dev, dtype=T.float64)
        elif kind == "encoder":
            out["mask"] = causal(LS, device=dev, dtype=T.float64)
        elif kind == "transformer":
            out["tgt_mask"] = causal(LT, device=dev, dtype=T.float64)
            out["memory_mask"] = T.tensor([[False, True, False, False]] * LT, device=dev)
        else:
            out["tgt_mask"] = causal(LT, device=dev, dtype=T.float64)
            out["memory_mask"] = T.tensor([[False, True, False, False]] * LT, device=dev)
    if "kpm" in spec:
        fl = "mask" in spec
        if kind in ("enc_layer", "encoder"):
            out["src_key_padding_mask"] = _kpm(T, dev, LS, fl)
        else:
            out["tgt_key_padding_mask"] = _kpm(T, dev, LT, fl)
            out["memory_key_padding_mask"] = _kpm(T, dev, LS)
            if kind == "transformer":
                out["src_key_padding_mask"] = _kpm(T, dev, LS)
    if "causal" in spec:
        key = "is_causal" if kind in ("enc_layer", "encoder") else "tgt_is_causal"
        out[key] = True
    return out


CONFIGS: list[tuple[str, dict[str, Any], str]] = [
    ("enc_layer", {}, ""),
    ("enc_layer", {"norm_first": True, "activation": "gelu"}, "mask+kpm"),
    ("enc_layer", {"batch_first": True}, "kpm"),
    ("enc_layer", {"bias": False}, "mask+causal"),
    ("enc_layer", {}, "unbatched"),
    ("dec_layer", {}, "mask+kpm"),
    ("dec_layer", {"norm_first": True, "batch_first": True}, "mask+causal"),
    ("encoder", {"batch_first": True}, "mask+kpm"),
    ("decoder", {"norm_first": True}, "mask+kpm"),
    ("transformer", {"activation": "gelu"}, "mask+kpm"),
    ("transformer", {"batch_first": True, "norm_first": True}, ""),
]


@pytest.mark.parametrize("kind, kw, spec", CONFIGS)
def test_transformer_modules_match_torch(kind: str, kw: dict[str, Any], spec: str,
                                         device: str) -> None:
    ours, theirs = _build(ag, kind, kw).double(), _build(torch, kind, kw).double()
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    copy_params(ours, theirs)
    ours.to(device)
    bf, unb = kw.get("batch_first", False), spec == "unbatched"
    arrays = [_seq(bf, LS, 1, unb)] if kind in ("enc_layer", "encoder") else \
        [_seq(bf, LS, 1, unb), _seq(bf, LT, 2, unb)]
    if kind in ("dec_layer", "decoder"):
        arrays = arrays[::-1]  # (tgt, memory)

    def run(T: Any, dev: str, mod: Any) -> tuple[Any, list[Any]]:
        ins = [t(T, dev, a, grad=True) for a in arrays]
        out = mod(*ins, **_masks(T, dev, kind, spec))
        return out, grads_of(out, ins + list(mod.parameters()))

    out_o, g_o = run(ag, device, ours)
    out_t, g_t = run(torch, "cpu", theirs)
    assert_same(out_o, out_t, **TOL)
    assert_same(g_o, g_t, **TOL)


def test_encoder_eval_nested_path_zeros_padding(device: str) -> None:
    ours, theirs = _build(ag, "encoder", {"batch_first": True}), \
        _build(torch, "encoder", {"batch_first": True})
    ours, theirs = ours.double().eval(), theirs.double().eval()
    copy_params(ours, theirs)
    ours.to(device)
    x = _seq(True, LS, 3)
    with torch.no_grad():
        want = theirs(torch.tensor(x), src_key_padding_mask=_kpm(torch, "cpu", LS))
    with ag.no_grad():
        got = ours(t(ag, device, x), src_key_padding_mask=_kpm(ag, device, LS))
    assert_same(got, want, **TOL)


def test_state_dict_from_torch_loads_strict(device: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nn.Transformer(D, H, 1, 2, FF)
    ours = _build(ag, "transformer", {}).to(device)
    ours.decoder = ag.nn.TransformerDecoder(ag.nn.TransformerDecoderLayer(D, H, FF), 2,
                                            ag.nn.LayerNorm(D)).to(device)
    ours.load_state_dict({k: ag.tensor(v.numpy(), device=device)
                          for k, v in theirs.state_dict().items()}, strict=True)
    for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        assert np.array_equal(a.cpu().numpy(), b.numpy()), k


def test_init_warning_and_causal_mask(device: str) -> None:
    with pytest.warns(UserWarning, match="enable_nested_tensor is True, but self.use_nested_"
                      "tensor is False because encoder_layer.norm_first was True"):
        ag.nn.TransformerEncoder(ag.nn.TransformerEncoderLayer(4, 2, norm_first=True), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.nn.TransformerEncoder(ag.nn.TransformerEncoderLayer(4, 2, batch_first=True), 1)
        ag.nn.TransformerEncoder(ag.nn.TransformerEncoderLayer(4, 2), 1,
                                 enable_nested_tensor=False)
    m = ag.nn.Transformer.generate_square_subsequent_mask(4, device=device)
    assert_same(m, torch.nn.Transformer.generate_square_subsequent_mask(4), rtol=0, atol=0)
    p = ag.nn.Transformer(8, 2, 1, 1, 16, batch_first=True).encoder.layers[0].linear1.weight
    assert float(p.abs().max()) <= (6 / 24) ** 0.5  # xavier_uniform over all 2-D parameters


def _layer(T: Any, dev: str, **kw: Any) -> Any:
    return T.nn.TransformerEncoderLayer(4, 2, 8, **kw).to(dev)


CASES: dict[str, Any] = {
    "bad_activation": lambda T, dev: _layer(T, dev, activation="tanh"),
    "batch_mismatch": lambda T, dev: T.nn.Transformer(4, 2, 1, 1, 8, batch_first=True).to(dev)(
        T.ones(2, 3, 4, device=dev), T.ones(1, 3, 4, device=dev)),
    "feature_mismatch": lambda T, dev: T.nn.Transformer(4, 2, 1, 1, 8, batch_first=True).to(dev)(
        T.ones(3, 2, 5, device=dev), T.ones(3, 2, 5, device=dev)),
    "int_kpm": lambda T, dev: _layer(T, dev)(
        T.ones(3, 2, 4, device=dev), src_key_padding_mask=T.zeros(2, 3, dtype=T.int64,
                                                                   device=dev)),
    "causal_without_mask": lambda T, dev: _layer(T, dev)(T.ones(3, 2, 4, device=dev),
                                                         is_causal=True),
}
test_misuse = catalogue_test(CASES)
