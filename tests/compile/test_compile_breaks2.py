"""Training steps whose package code used to read values back to Python, now replayed exactly
(bit for bit against eager, no warning): BatchNorm's cumulative average (``momentum=None``),
``max_norm`` embeddings, index range checks whose extremes change every batch (``x[arange, y]``,
``one_hot``, ``bincount``, negative ``take``), ``topk`` over long rows, ``checkpoint`` (its RNG
stash), ``matrix_exp``'s squarings, max pooling meeting a NaN while replaying, and common layers
(padding modes, pools, upsampling, masks from the data, loss options, micro-batches). Then the
reads that stay data-dependent (``matrix_exp``'s norms past the recorded squarings, packed
sequences' lengths, ``one_hot`` without ``num_classes``, adaptive softmax clusters): one warning
naming the package function that reads the value and the step's line; a value that changes
while replaying runs that call eagerly."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu._compile import FullGraphError
from tests.compile._steps import Setup, assert_same, batches, classifier_step, compare, replays
from tests.compile.test_compile_training import _mode_switch, op_step

nn = ag.nn
F = nn.functional
MLP = batches(5, (16, 8), 4)
# NOTE: labels whose least and greatest values change from batch to batch
SKEWED = [(x, np.minimum(y, i % 3 + 1) + (i % 2)) for i, (x, y) in enumerate(MLP)]
IMAGES = batches(5, (4, 3, 8, 8), 4, seed=3)


def _with(model: Any, opt: str = "Adam", **kw: Any) -> Setup:
    o = getattr(ag.optim, opt)(model.parameters(), lr=1e-2)
    return Setup(classifier_step(model, o, **kw), [model], [o])


class _Bag(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(10, 4, max_norm=1.0, mode="mean")
        self.emb = nn.Embedding(10, 4, max_norm=0.5, norm_type=1.0)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Any) -> Any:
        idx = (x.abs() * 3).long().clamp(0, 9)  # NOTE: rows (and repeats) change every batch
        bags = self.bag(idx[:, :4].reshape(-1), ag.arange(16) * 4)
        return self.head(ag.cat([bags, self.emb(idx[:, 4:]).mean(1)], 1))


def _index_reads(out: Any, y: Any) -> Any:
    """Index reads whose range checks saw the labels' extremes (here changing every batch)."""
    picked = -out.log_softmax(1)[ag.arange(16), y].mean()
    table = ag.zeros(16, 4).index_put((ag.arange(16), y), ag.ones(16))
    return (picked + (table * out).mean() + out[:, y - 4].mean() + ag.take(out, y - 4).mean()
            + (F.one_hot(y, 4) * out).mean() + ag.bincount(y, minlength=5).float().mean())


def _index_step() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    return Setup(classifier_step(model, opt, loss_fn=_index_reads), [model], [opt])


def _top5() -> Setup:
    model = nn.Linear(8, 1000)  # NOTE: rows long enough for topk's candidate path in eager
    opt = ag.optim.SGD(model.parameters(), lr=0.1)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        top5 = (out.topk(5, 1).indices == y[:, None]).any(1).float().mean()
        return loss.detach(), top5, out.kthvalue(3, 1).values.detach()

    return Setup(step, [model], [opt])


def _checkpointed(reentrant: bool) -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.3), nn.Linear(16, 16),
                          nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 4))
    opt = ag.optim.Adam(model.parameters(), lr=1e-2)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        h = model[0](x)  # NOTE: reentrant checkpoint needs an input that requires grad
        out = ag.utils.checkpoint.checkpoint(model[1:], h, use_reentrant=reentrant)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss

    return Setup(step, [model], [opt])


def _matrix_exp() -> Setup:
    return op_step(lambda w, x: ag.linalg.matrix_exp(x * w).sum(), (4, 4))


def _matrices(scales: list[float]) -> list[tuple[Any]]:
    rng = np.random.default_rng(4)
    return [((rng.standard_normal((4, 4)) * s).astype(np.float32),) for s in scales]


class _Masked(nn.Module):
    """An encoder layer with a causal mask and a padding mask from the data; attention with a
    padding mask and its weights."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True)
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Any) -> Any:
        x = x.reshape(4, 4, 8)
        pad = x[:, :, 0] > 1.0
        pad[:, 0] = False
        causal = nn.Transformer.generate_square_subsequent_mask(4)
        h = self.layer(x, src_mask=causal, src_key_padding_mask=pad)
        a, w = self.attn(h, h, h, key_padding_mask=(x[:, :, 1] > 0.8) & ~ag.eye(4, dtype=ag.bool)[0])
        return self.head((h + a).reshape(16, 8)) + 0 * w.sum()


def _loss_options() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = ag.optim.Adam(model.parameters(), lr=1e-2)
    ce = nn.CrossEntropyLoss(weight=ag.tensor([1.0, 2.0, 0.5, 1.0]), ignore_index=2,
                             label_smoothing=0.1)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = model(x)
        out = ag.where(x[:, 4:] < -1, out * 2, out.masked_fill(x[:, :4] > 1.5, -1.0))
        loss = ce(out, y)
        loss.backward()
        opt.step()
        acc = (out.argmax(1) == y).float().mean()
        return loss.detach(), acc, out.sort(1, descending=True)[0].cumsum(1).detach()

    return Setup(step, [model], [opt])


def _micro_batches() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        total = 0
        for xs, ys in ((x[:8], y[:8]), (x[8:], y[8:])):
            loss = F.cross_entropy(model(xs), ys) / 2
            loss.backward()
            total = total + loss.detach()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        nn.utils.clip_grad_value_(model.parameters(), 0.05)
        opt.step()
        return total, norm

    return Setup(step, [model], [opt])


def _nan_later() -> list[tuple[Any, Any]]:
    """Images with a NaN in the fourth batch (a replay meets it)."""
    data = batches(5, (4, 3, 8, 8), 4, seed=3)
    x = data[3][0].copy()
    x[1, 0, 2, 2] = np.nan
    data[3] = (x, data[3][1])
    return data


STEPS = {
    "batchnorm1d-cumulative": (lambda: _mode_switch(None), MLP),
    "batchnorm2d-cumulative": (lambda: _with(nn.Sequential(
        nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, momentum=None), nn.Flatten(),
        nn.Linear(144, 4))), IMAGES),
    "embedding-max-norm": (lambda: _with(_Bag()), MLP),
    "index-extremes": (_index_step, SKEWED),
    "topk-long-rows": (_top5, batches(4, (16, 8), 1000)),
    "checkpoint": (lambda: _checkpointed(False), MLP),
    "checkpoint-reentrant": (lambda: _checkpointed(True), MLP),
    # NOTE: squarings from 0 to 5 (a fixed count recorded, checked by one bool)
    "matrix-exp-degrees": (_matrix_exp, _matrices([0.1, 10.0, 0.1, 30.0, 1.0])),
    "conv1d-pools": (lambda: _with(nn.Sequential(
        nn.Conv1d(8, 4, 3, padding=1, padding_mode="reflect"),
        nn.Conv1d(4, 4, 3, padding=2, padding_mode="circular"), nn.MaxPool1d(2),
        nn.Conv1d(4, 4, 3, padding="same", padding_mode="replicate"), nn.AdaptiveAvgPool1d(1),
        nn.Flatten(), nn.Linear(4, 4))), batches(4, (4, 8, 6), 4, seed=4)),
    "conv2d-resampling": (lambda: _with(nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, padding_mode="reflect"), nn.PixelShuffle(2),
        nn.Conv2d(2, 4, 3, padding=1, padding_mode="replicate"), nn.MaxPool2d(2, ceil_mode=True),
        nn.Upsample(scale_factor=2), nn.Conv2d(4, 4, 3, stride=2, padding=1,
                                               padding_mode="circular"),
        nn.Upsample(size=(5, 5), mode="bilinear"), nn.AvgPool2d(2, ceil_mode=True,
                                                                count_include_pad=False),
        nn.AdaptiveMaxPool2d(2), nn.Flatten(), nn.Linear(16, 4))), IMAGES),
    # NOTE: max pooling's NaN check comes after a dropout (its replay could not check first)
    "max-pool-nan-later": (lambda: _with(nn.Sequential(
        nn.Dropout(0.2), nn.Conv2d(3, 4, 3, padding=1), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3),
        nn.MaxPool2d(2, ceil_mode=True), nn.Flatten(), nn.Linear(4, 4)), "SGD"), _nan_later()),
    "masks-from-data": (lambda: _with(_Masked(), "AdamW"), MLP),
    "loss-options": (_loss_options, MLP),
    "micro-batches": (_micro_batches, MLP),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_replays_exactly(name: str) -> None:
    make, data = STEPS[name]
    replays(make, data)


# ---- what stays data-dependent ---------------------------------------------------------------------

def _site(function: str, path: str) -> str:
    """The warning's naming of a read: the package function and the step's line."""
    return (rf"in {function} \(autograd_gpu/{path}:\d+; the step's line: \S+"
            r"test_compile_breaks2\.py:\d+\) changed between calls")


def _packed() -> Setup:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.LSTM(8, 6, batch_first=True)
            self.head = nn.Linear(6, 4)

        def forward(self, x: Any, lengths: Any) -> Any:
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                       enforce_sorted=False)
            return self.head(self.rnn(packed)[1][0][-1])

    model = Net()
    opt = ag.optim.SGD(model.parameters(), lr=0.1)

    def step(x: Any, y: Any, lengths: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x.reshape(4, 4, 8), lengths), y[:4])
        loss.backward()
        opt.step()
        return loss.detach()

    return Setup(step, [model], [opt])


def _adaptive() -> Setup:
    model = nn.Sequential(nn.Linear(8, 8))
    head = nn.AdaptiveLogSoftmaxWithLoss(8, 4, [2])
    opt = ag.optim.SGD(list(model.parameters()) + list(head.parameters()), lr=0.1)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = head(model(x), y).loss
        loss.backward()
        opt.step()
        return loss.detach()

    return Setup(step, [model, head], [opt])


_LENGTHS = np.random.default_rng(2).integers(1, 5, (5, 4))
# NOTE: optimizers without state and values that change on every call from the second on (the
# first call of a step has no gradients yet: a signature of its own)
BREAKS = {
    # NOTE: norms past the squarings a recording holds (2**8 * theta13)
    "matrix-exp-degree": (_matrix_exp, _matrices([0.1, 1.0, 1e3, 0.1]),
                          _site(r"DecompBackend\.matrix_exp", r"backends/decomp\.py"),
                          "bool"),
    "packed-lengths": (_packed, [(x, y, n) for (x, y), n in zip(MLP, _LENGTHS)],
                       _site(r"_lengths", r"nn/utils/rnn\.py"), "tolist"),
    "one-hot-classes": (lambda: _with(nn.Linear(8, 4), "SGD", loss_fn=lambda out, y: F.mse_loss(
        out[:, :1], F.one_hot(y)[:, :1].float())), [(x, np.minimum(y, i % 4)) for i, (x, y)
                                                     in enumerate(MLP)],
        _site("one_hot", r"nn/functional\.py"), "item"),
    "adaptive-softmax": (_adaptive, MLP, _site(r"\S+", r"\S+\.py"), None),
}


@pytest.mark.parametrize("name", list(BREAKS))
def test_data_dependent_reads_break_with_their_site(name: str) -> None:
    make, data, site, read = BREAKS[name]
    warned, step = compare(make, data)
    what = rf"a value read back to Python with {read}\(\) " if read else \
        r"a data-dependent shape "
    assert len(warned) == 1 and re.fullmatch(rf"{re.escape(step._name())} runs eagerly: "
                                             + what + site, warned[0]), warned
    full = ag.compile(make().step, fullgraph=True)
    with pytest.raises(FullGraphError, match=what + site):
        for b in data:
            full(*[ag.tensor(v) for v in b])


def test_a_read_that_changes_while_replaying_runs_that_call_eagerly() -> None:
    """matrix_exp's norms (read from parameters reloaded after zero_grad: checked before the
    replay changes anything) leave the recorded range on calls 4 and 6: those calls run
    eagerly, no warning."""
    warned, step = compare(_matrix_exp, _matrices([0.1, 0.1, 0.1, 1e3, 0.1, 1e3, 0.1]))
    assert not warned and step.explain().replaying == 1


def test_a_bincount_whose_length_changes_while_replaying_runs_that_call_eagerly() -> None:
    """``bincount``'s length depends on the values: its shape is checked (first, as it reads
    only the arguments), so a length the recording did not see runs that call eagerly rather
    than replaying a shape read back to Python (``counts.shape[0]``) as it was."""
    def make() -> Setup:
        model = nn.Linear(8, 4)
        opt = ag.optim.SGD(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            classifier_step(model, opt)(x, y)
            counts = ag.bincount(y)
            return counts * ag.arange(counts.shape[0])

        return Setup(step, [model], [opt])

    data = [(x, np.minimum(y, 2 if i < 4 else 3)) for i, (x, y) in enumerate(MLP)]
    warned, step = compare(make, data)
    assert not warned and step.explain().replaying == 1


def test_a_checkpoint_run_before_the_step_breaks() -> None:
    """The forward (and its RNG stash) outside, the recomputing backward in the step."""
    def outcomes(compiled: bool) -> tuple[list[bytes], list[str]]:
        ag.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.Linear(8, 2))

        def step(out: Any) -> Any:
            out.sum().backward()
            return model[0].weight.grad.sum()

        call = ag.compile(step) if compiled else step
        seen = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for x, _ in MLP[:3]:
                out = ag.utils.checkpoint.checkpoint(model, ag.tensor(x).requires_grad_(),
                                                     use_reentrant=False)
                seen.append(call(out).numpy().tobytes())
        return seen, [str(w.message) for w in caught]

    eager, _ = outcomes(False)
    compiled, warned = outcomes(True)
    assert eager == compiled
    assert warned == ["compile(test_a_checkpoint_run_before_the_step_breaks.<locals>.outcomes."
                      "<locals>.step) runs eagerly: a checkpoint's RNG state stashed outside the "
                      "step (its forward ran before the compiled call)"], warned


def test_batchnorm_cumulative_average_equals_the_momentum_free_formula() -> None:
    """Eager: the running mean after n batches is their mean's average (float64, exact to
    rounding), as PyTorch's ``momentum=None``; the counter stays an int64 tensor."""
    bn = nn.BatchNorm1d(3, momentum=None).double()
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((5, 3)) for _ in range(4)]
    for x in xs:
        bn(ag.tensor(x))
    assert bn.num_batches_tracked.dtype is ag.int64 and int(bn.num_batches_tracked) == 4
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-13)


def test_assert_same_is_strict() -> None:
    """The helper the tests rely on tells one bit apart."""
    a = [[("x", np.float32([1.0]))]]
    b = [[("x", np.nextafter(np.float32([1.0]), np.float32(2)))]]
    with pytest.raises(AssertionError):
        assert_same(a, b)
