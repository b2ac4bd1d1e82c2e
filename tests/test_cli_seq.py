"""``autograd-gpu train --model transformer|lstm``: the sort task and ``--text FILE`` end to end on
tiny budgets (the outputs, checkpoints, curves, determinism), sampling, and argument errors.

The defaults' promise (>= 99% exact-sequence accuracy within 3 minutes on one CPU core) is
measured by hand, not here: see ``train_seq.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import autograd_gpu as ag
from autograd_gpu import cli
from autograd_gpu import train_seq as seq

from .test_cli import _accuracy, _assert_png

ROOT = Path(__file__).resolve().parents[1]
TEXT = "the cat sat on the mat. the dog sat on the log. a cat and a dog.\n" * 12


def _text_file(tmp_path: Path, text: str = TEXT) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path


def test_sort_transformer_as_a_process(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "autograd_gpu", "train", "--model", "transformer", "--task",
         "sort", "--epochs", "2", "--seed", "1", "--out", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    accuracy = _accuracy(proc.stdout)
    assert "583 train / 146 test sequences" in proc.stdout
    assert "epoch" in proc.stderr  # the progress bar
    _assert_png(out / "curves.png")
    ckpt = ag.load(out / "checkpoint.pt")
    assert set(ckpt) == {"model", "optimizer", "config", "history"}
    cfg = ckpt["config"]
    assert (cfg["model"], cfg["task"], cfg["epochs"], cfg["seed"]) == ("transformer", "sort", 2, 1)
    assert ckpt["history"]["epoch"] == [1, 2]
    assert ckpt["history"]["test_acc"][-1] * 100 == pytest.approx(accuracy, abs=0.005)
    # The saved weights, rebuilt from the saved config, decode the held-out split as well.
    model = seq.build_model(cfg)
    model.load_state_dict(ckpt["model"])
    _, test_rows = seq.sort_data(seq.SeqConfig(**cfg))
    _, acc = seq.evaluate_sort(model, test_rows, cfg["length"])
    assert 100 * acc == pytest.approx(accuracy, abs=0.005)


def test_sort_data_holds_out_unseen_sequences() -> None:
    train, test = seq.sort_data(seq.SeqConfig(seed=4))
    assert train.shape == (583, 13) and test.shape == (146, 13)
    assert not {tuple(r) for r in train.tolist()} & {tuple(r) for r in test.tolist()}
    # Every output (multiset of digits) has an arrangement in training: all 28 of them.
    outputs = {tuple(r) for r in train[:, 7:].tolist()}
    assert len(outputs) == 28 and {tuple(r) for r in test[:, 7:].tolist()} <= outputs
    assert (test[:, 6] == seq.SEP).all()
    assert ag.equal(test[:, 7:], test[:, :6].sort(dim=1).values)


def test_sort_lstm_learns_and_is_deterministic(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["train", "--model", "lstm", "--epochs", "5", "--seed", "2", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr()
    assert len(out.out.splitlines()) == 1 and out.err == ""  # --quiet: no bar, one line
    assert _accuracy(out.out) >= 90.0
    assert cli.main([*argv, "--out", str(tmp_path / "b")]) == 0
    a, b = (ag.load(tmp_path / d / "checkpoint.pt") for d in "ab")
    assert "body.weight_hh_l1" in a["model"]  # nn.LSTM, 2 layers
    assert a["history"]["test_acc"] == b["history"]["test_acc"]
    for name, p in a["model"].items():
        assert ag.equal(p, b["model"][name]), name


def test_text_language_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _text_file(tmp_path)
    out = tmp_path / "run"
    argv = ["train", "--model", "transformer", "--text", str(path), "--steps", "40",
            "--block-size", "16", "--sample-length", "50", "--out", str(out), "--seed", "3"]
    assert cli.main(argv) == 0
    std = capsys.readouterr()
    assert "loss=" in std.err and "step" in std.err  # tqdm shows the loss
    lines = std.out.rstrip("\n").splitlines()
    assert re.fullmatch(r"validation loss: \d+\.\d{4}", lines[-1])
    assert lines[0].startswith(f"transformer on {path}: {len(TEXT):,} characters")
    _assert_png(out / "curves.png")
    ckpt = ag.load(out / "checkpoint.pt")
    cfg = ckpt["config"]
    assert cfg["chars"] == sorted(set(TEXT)) and cfg["vocab_size"] == len(cfg["chars"])
    assert ckpt["history"]["step"] == list(range(2, 41, 2))
    assert ckpt["history"]["val_loss"][-1] < ckpt["history"]["val_loss"][0]
    # The same seed gives the same sample (the last 51 characters before the loss line).
    cfg_again = seq.SeqConfig(**{**cfg, "out": str(tmp_path / "again"), "quiet": True})
    _, _, sample = seq.run_text(cfg_again)
    assert len(sample) == 51 and set(sample) <= set(TEXT)
    assert std.out.endswith(f"sample:\n{sample}\n{lines[-1]}\n")


def test_sampling_top_k_one_is_greedy() -> None:
    ag.manual_seed(0)
    model = seq.SeqModel("transformer", 5, 8, 16, 2, 1)
    start = ag.tensor([1, 2])
    greedy = seq.greedy_decode(model, start[None], 5)[0]
    drawn = seq.sample(model, start, 5, 8, temperature=2.0, top_k=1)
    assert ag.equal(drawn, greedy)
    # A low temperature concentrates the draws on the likeliest token too.
    cold = seq.sample(model, start, 5, 8, temperature=1e-3, top_k=None,
                      generator=ag.Generator().manual_seed(1))
    assert ag.equal(cold, greedy)


@pytest.mark.parametrize("argv, message", [
    (["--model", "mlp", "--task", "sort"], "--task and --text need --model transformer"),
    (["--model", "cnn", "--text", "x.txt"], "--task and --text need --model transformer"),
    (["--model", "lstm", "--data", "d.npz"], "--data is for --model mlp or cnn"),
    (["--model", "transformer", "--task", "sort", "--text", "x.txt"], "exclude each other"),
    (["--model", "transformer", "--task", "reverse"], "invalid choice: 'reverse'"),
    (["--model", "gpt"], "invalid choice: 'gpt'"),
    (["--model", "transformer", "--temperature", "0"], "must be > 0"),
    (["--model", "transformer", "--top-k", "0"], "must be > 0"),
    (["--model", "transformer", "--steps", "-3"], "must be > 0"),
    (["--model", "transformer", "--text", "missing.txt"], "--text missing.txt: cannot read it"),
    (["--model", "transformer", "--text", "empty.txt"], "the file is empty"),
    (["--model", "transformer", "--text", "latin1.txt"], "not UTF-8 text"),
    (["--model", "lstm", "--text", "short.txt"], "is too short for --block-size 64"),
])
def test_bad_arguments_are_usage_errors(argv: list[str], message: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 ".encode("latin-1") * 200)
    (tmp_path / "short.txt").write_text("hello world\n" * 10)
    with pytest.raises(SystemExit) as e:
        cli.main(["train", *argv, "--out", str(tmp_path / "o")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: autograd-gpu") and message in err
    assert not (tmp_path / "o").exists()


def test_runs_on_every_device(tmp_path: Path, device: str) -> None:
    cfg = seq.SeqConfig(model="transformer", epochs=1, device=device, quiet=True,
                        out=str(tmp_path / "sort"))
    model, history = seq.run_sort(cfg)
    assert next(model.parameters()).device.type == device and len(history["test_acc"]) == 1
    text = seq.SeqConfig(model="lstm", text=str(_text_file(tmp_path)), steps=4, block_size=8,
                         sample_length=6, device=device, quiet=True, out=str(tmp_path / "text"))
    _, history, sample = seq.run_text(text)
    assert history["step"] == [1, 2, 3, 4] and len(sample) == 7
