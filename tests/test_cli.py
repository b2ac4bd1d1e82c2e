"""The ``autograd-gpu`` command line: ``train`` end to end, its checkpoint and plot, ``--data``
files, argument errors, and ``demo``."""

from __future__ import annotations

import math
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu import cli
from autograd_gpu import train as job

LAST_LINE = re.compile(r"^test accuracy: (\d{1,3}\.\d\d)%$")
ROOT = Path(__file__).resolve().parents[1]


def _accuracy(stdout: str) -> float:
    """The accuracy on the last line of ``stdout``, which must have the promised format."""
    last = stdout.rstrip("\n").splitlines()[-1]
    m = LAST_LINE.match(last)
    assert m, f"last line {last!r} is not 'test accuracy: NN.NN%'"
    return float(m.group(1))


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 200 and height >= 100
    assert data.endswith(b"IEND\xaeB`\x82")


def _blobs(path: Path, n: int = 90, shape: tuple[int, ...] = (4, 4), classes: int = 3) -> Path:
    """A tiny, well separated synthetic classification problem saved as ``x``/``y`` arrays."""
    rng = np.random.default_rng(0)
    y = np.arange(n) % classes
    centers = rng.normal(0, 3, (classes, *shape))
    x = (centers[y] + rng.normal(0, 0.5, (n, *shape))).astype(np.float32)
    np.savez(path, x=x, y=y)
    return path


def _predict(model: ag.nn.Module, x: ag.Tensor) -> ag.Tensor:
    model.eval()
    with ag.no_grad():
        return model(x)


def test_train_end_to_end_as_a_process(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "autograd_gpu", "train", "--epochs", "2", "--seed", "3",
         "--out", str(out)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    accuracy = _accuracy(proc.stdout)
    assert "epoch" in proc.stderr  # the progress bar
    _assert_png(out / "curves.png")

    ckpt = ag.load(out / "checkpoint.pt")
    assert set(ckpt) == {"model", "optimizer", "config", "normalization", "history"}
    cfg = ckpt["config"]
    assert (cfg["epochs"], cfg["seed"], cfg["model"], cfg["device"]) == (2, 3, "mlp", "auto")
    assert ckpt["history"]["epoch"] == [1, 2]
    assert ckpt["history"]["test_acc"][-1] * 100 == pytest.approx(accuracy, abs=0.005)
    # A fresh model with the saved weights predicts what the trained one did: the same test
    # accuracy on the same seeded split.
    model = job.build_model(cfg)
    model.load_state_dict(ckpt["model"])
    x, y = job.load_arrays(None)
    _, test_set, stats = job.split_and_standardise(x, y, job.Config(**cfg))
    assert ag.equal(stats["mean"], ckpt["normalization"]["mean"])
    xt, yt = test_set.tensors
    acc = (_predict(model, xt).argmax(1) == yt).double().mean().item()
    assert 100 * acc == pytest.approx(accuracy, abs=0.005)
    optimizer = job.make_optimizer(job.Config(**cfg), model)
    optimizer.load_state_dict(ckpt["optimizer"])
    n_train = len(y) - round(0.2 * len(y))
    steps = 2 * math.ceil(n_train / 64)
    assert all(s["step"].item() == steps for s in optimizer.state.values())


def test_checkpoint_reloads_to_identical_predictions(tmp_path: Path, device: str) -> None:
    data = _blobs(tmp_path / "blobs.npz")
    cfg = job.Config(data=str(data), epochs=3, out=str(tmp_path / "run"), quiet=True,
                     device=device, seed=5)
    model, history = job.run(cfg)
    assert len(history["train_loss"]) == 3
    ckpt = ag.load(tmp_path / "run" / "checkpoint.pt", map_location="cpu")
    fresh = job.build_model(ckpt["config"])
    fresh.load_state_dict(ckpt["model"])
    # NOTE: the weights are compared bit for bit; the predictions on the device that trained,
    # since a GPU's GEMM need not round as the CPU's does.
    for name, p in model.state_dict().items():
        assert ag.equal(p.cpu(), fresh.state_dict()[name]), name
    x = ag.randn(7, 4, 4, device=device)
    assert ag.equal(_predict(model, x), _predict(fresh.to(device), x))


def test_train_on_an_npz_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _blobs(tmp_path / "blobs.npz")
    code = cli.main(["train", "--data", str(data), "--epochs", "15", "--batch-size", "16",
                     "--optimizer", "sgd", "--lr", "0.05", "--out", str(tmp_path / "o"),
                     "--quiet"])
    assert code == 0
    out = capsys.readouterr()
    assert len(out.out.splitlines()) == 1 and out.err == ""  # --quiet: no bar, one line
    assert _accuracy(out.out) == 100.0
    ckpt = ag.load(tmp_path / "o" / "checkpoint.pt")
    assert tuple(ckpt["config"]["input_shape"]) == (4, 4)
    assert ckpt["config"]["num_classes"] == 3
    assert ckpt["model"]["1.weight"].shape == (128, 16)


def test_defaults_learn_the_digits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["train", "--epochs", "8", "--out", str(tmp_path), "--quiet"]) == 0
    assert _accuracy(capsys.readouterr().out) >= 95.0


def test_cnn_trains_or_says_why_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _blobs(tmp_path / "img.npz", shape=(8, 8))
    argv = ["train", "--model", "cnn", "--data", str(data), "--epochs", "5",
            "--out", str(tmp_path / "o"), "--quiet"]
    if job.HAS_CONV:
        assert cli.main(argv) == 0
        assert _accuracy(capsys.readouterr().out) >= 90.0
        ckpt = ag.load(tmp_path / "o" / "checkpoint.pt")
        assert tuple(ckpt["config"]["input_shape"]) == (1, 8, 8)
    else:
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2
        assert "--model cnn needs nn.Conv2d" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["train", "--epochs", "0"], "must be > 0"),
    (["train", "--batch-size", "x"], "invalid int value"),
    (["train", "--lr", "-1"], "must be > 0"),
    (["train", "--optimizer", "lbfgs"], "invalid choice: 'lbfgs'"),
    (["train", "--model", "resnet"], "invalid choice: 'resnet'"),
    (["train", "--device", "tpu"], "invalid choice: 'tpu'"),
    (["train", "--label-smoothing", "1.5"], "--label-smoothing must be in [0, 1)"),
    (["train", "--bogus"], "unrecognized arguments: --bogus"),
    (["fly"], "invalid choice: 'fly'"),
])
def test_bad_arguments_are_usage_errors(argv: list[str], message: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: autograd-gpu") and message in err


@pytest.mark.parametrize("arrays, message", [
    ({"x": np.zeros((4, 3))}, "expected arrays 'x' and 'y', found ['x']"),
    ({"x": np.zeros((4, 3)), "y": np.zeros(4)}, "y integer class labels"),
    ({"x": np.zeros((4, 3)), "y": np.zeros(5, int)}, "x must be (N, ...) and y (N,)"),
    ({"x": np.zeros((4, 3)), "y": np.array([0, 1, -1, 0])}, "labels >= 0"),
    ({"x": np.zeros((4, 3)), "y": np.zeros(4, int)}, "--model cnn needs images"),
    (None, "cannot read it as an .npz file"),
])
def test_bad_data_files(arrays: dict[str, np.ndarray] | None, message: str, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "d.npz"
    if arrays is None:
        path.write_bytes(b"not a zip")
    else:
        np.savez(path, **arrays)
    argv = ["train", "--data", str(path), "--out", str(tmp_path / "o")]
    if message.startswith("--model cnn"):
        argv += ["--model", "cnn"]
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_device_choice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if ag.cuda.is_available():
        assert job.resolve_device("auto") == ag.device("cuda")
        assert job.resolve_device("cuda") == ag.device("cuda")
    else:
        assert job.resolve_device("auto") == ag.device("cpu")
        with pytest.raises(SystemExit) as e:
            cli.main(["train", "--device", "cuda", "--out", str(tmp_path)])
        assert e.value.code == 2
        assert "--device cuda: CUDA is not available" in capsys.readouterr().err
    assert job.resolve_device("cpu") == ag.device("cpu")


def test_missing_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    with pytest.raises(SystemExit) as e:
        cli.main(["train"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "needs tqdm" in err and "pip install -e '.[examples]'" in err


def test_demo_checks_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo"]) == 0
    out = capsys.readouterr().out
    assert out.count(": True") == 3 and ": False" not in out
