"""``autograd-gpu train --compile``: the digits models trained through ``compile`` give the
eager run's numbers exactly (histories and weights), and the flag's misuses are usage errors."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu import cli


@pytest.mark.parametrize("model, optimizer", [("mlp", "adam"), ("cnn", "sgd")])
def test_train_with_compile_gives_the_same_results(model: str, optimizer: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sklearn")
    runs = {}
    for name, extra in (("eager", []), ("compiled", ["--compile"])):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # NOTE: no break, no eager fallback
            assert cli.main(["train", "--model", model, "--optimizer", optimizer, "--epochs",
                             "2", "--batch-size", "128", "--device", "cpu", "--quiet", "--out",
                             str(tmp_path / name), *extra]) == 0
        runs[name] = (capsys.readouterr().out, ag.load(tmp_path / name / "checkpoint.pt"))
    (text_a, a), (text_b, b) = runs["eager"], runs["compiled"]
    assert text_a == text_b
    for key in ("train_loss", "train_acc", "test_loss", "test_acc"):
        assert a["history"][key] == b["history"][key], key
    for name, value in a["model"].items():
        assert np.array_equal(value.numpy(), b["model"][name].numpy()), name


@pytest.mark.parametrize("argv, message", [
    (["--model", "lstm", "--compile"], "--compile is for --model mlp or cnn"),
    (["--compile", "--memory-budget", "90%"], "--compile and --memory-budget cannot be combined"),
])
def test_compile_misuse_is_a_usage_error(argv: list[str], message: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["train", *argv, "--epochs", "1", "--out", str(tmp_path / "run")])
    assert e.value.code == 2 and message in capsys.readouterr().err
