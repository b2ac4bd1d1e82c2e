"""``autograd-gpu`` never loses work (issue #17, item 4): outputs checked before any training or
profiling, a new run folder per run, per-optimizer default learning rates, ``--threads``, a bare
command printing the usage, help texts, titled plots, ``memory`` without matplotlib or into new
folders, the git ignores, and ``load_model``. Each test failed before its fix; budgets are tiny
(one or two epochs of small data)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu import cli
from autograd_gpu import train as job
from autograd_gpu import train_seq as seq

from .test_cli import _accuracy, _blobs

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _cli(*argv: str, cwd: Path, env: dict[str, str] | None = None,
         code: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m autograd_gpu ARGV`` (or ``python -c CODE ARGV``) in ``cwd``."""
    head = ["-c", code] if code is not None else ["-m", "autograd_gpu"]
    return subprocess.run([sys.executable, *head, *argv], capture_output=True, text=True,
                          env=env or ENV, cwd=cwd, timeout=120)


# ---- outputs checked before the work -------------------------------------------------------

def test_out_an_existing_file_is_refused_before_training(tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("my notes\n")
    proc = _cli("train", "--epochs", "1", "--out", str(taken), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"--out {taken}: exists and is not a folder" in proc.stderr
    assert "Traceback" not in proc.stderr and "epoch/s" not in proc.stderr  # no progress bar
    assert proc.stdout == "" and taken.read_text() == "my notes\n"


@pytest.mark.parametrize("model", ["mlp", "lstm"])
@pytest.mark.parametrize("case, message", [
    ("file", "exists and is not a folder"),
    ("below-a-file", "cannot create it,"),
    ("checkpoint-is-a-folder", "is a folder; cannot write checkpoint.pt there"),
])
def test_bad_out_folders_are_usage_errors(model: str, case: str, message: str, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_text("x")
    out = {"file": tmp_path / "f", "below-a-file": tmp_path / "f" / "run",
           "checkpoint-is-a-folder": tmp_path / "run"}[case]
    (tmp_path / "run" / "checkpoint.pt").mkdir(parents=True)
    # NOTE: the data step would run first and fail loudly if the check came after it.
    monkeypatch.setattr(job, "load_arrays", lambda *a: pytest.fail("data read before the check"))
    monkeypatch.setattr(seq, "sort_data", lambda *a: pytest.fail("data made before the check"))
    with pytest.raises(SystemExit) as e:
        cli.main(["train", "--model", model, "--out", str(out)])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    with pytest.raises(job.UsageError, match="not a folder"):
        job.run(job.Config(out=str(tmp_path / "f")))


# ---- one new run folder per run -------------------------------------------------------------

def test_runs_never_replace_each_other(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    data = str(_blobs(tmp_path / "blobs.npz"))
    runs = [[], ["--model", "cnn"], ["--seed", "1"], ["--data", data], ["--model", "lstm"]]
    for argv in runs:
        assert cli.main(["train", *argv, "--epochs", "1", "--quiet"]) == 0
    capsys.readouterr()
    folders = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert folders == ["blobs-mlp", "digits-cnn", "digits-mlp", "digits-mlp-2", "sort-lstm"]
    configs = {f: ag.load(tmp_path / "runs" / f / "checkpoint.pt")["config"] for f in folders}
    assert configs["digits-mlp"]["seed"] == 0 and configs["digits-mlp-2"]["seed"] == 1
    assert configs["digits-cnn"]["model"] == "cnn" and configs["sort-lstm"]["model"] == "lstm"
    assert configs["digits-mlp-2"]["out"] == os.path.join("runs", "digits-mlp-2")
    assert job.new_run_dir(os.path.join("runs", "sort-lstm")) == os.path.join("runs",
                                                                              "sort-lstm-2")


# ---- per-optimizer learning rates ------------------------------------------------------------

def test_sgd_gets_its_own_default_learning_rate(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # 8 epochs here; the full default run (25 epochs) reaches 97.8-99.2% over 6 seeds.
    argv = ["train", "--optimizer", "sgd", "--epochs", "8", "--quiet"]
    assert cli.main([*argv, "--out", str(tmp_path / "sgd")]) == 0
    assert _accuracy(capsys.readouterr().out) >= 96.0
    ckpt = ag.load(tmp_path / "sgd" / "checkpoint.pt")
    assert ckpt["config"]["lr"] == 0.05 and ckpt["optimizer"]["param_groups"][0]["lr"] == 0.05
    assert cli.main(["train", "--epochs", "1", "--quiet", "--out", str(tmp_path / "adam")]) == 0
    assert ag.load(tmp_path / "adam" / "checkpoint.pt")["config"]["lr"] == 1e-3
    assert cli.main(["train", "--model", "lstm", "--optimizer", "sgd", "--epochs", "1",
                     "--quiet", "--out", str(tmp_path / "seq")]) == 0
    assert ag.load(tmp_path / "seq" / "checkpoint.pt")["config"]["lr"] == seq.DEFAULT_LR["sgd"]
    assert cli.main(["train", "--optimizer", "sgd", "--lr", "0.2", "--epochs", "1", "--quiet",
                     "--out", str(tmp_path / "set")]) == 0
    assert ag.load(tmp_path / "set" / "checkpoint.pt")["config"]["lr"] == 0.2


# ---- --threads --------------------------------------------------------------------------------

def test_threads_option_reaches_the_blas_pools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_gpu.functions import settings

    calls: list[int] = []
    monkeypatch.setattr(settings, "set_num_threads", calls.append)
    data = str(_blobs(tmp_path / "b.npz"))
    for extra in ([], ["--threads", "3"], ["--threads", "0"]):
        assert cli.main(["train", "--data", data, "--epochs", "1", "--quiet", "--out",
                         str(tmp_path / "o"), *extra]) == 0
    assert calls == [1, 3]  # default 1; 0 leaves the pools alone
    with pytest.raises(SystemExit):
        cli.main(["train", "--threads", "-1"])
    assert "must be >= 0" in capsys.readouterr().err


def test_default_is_one_blas_thread_in_a_real_run(tmp_path: Path) -> None:
    pytest.importorskip("threadpoolctl")
    data = str(_blobs(tmp_path / "b.npz"))
    env = dict(ENV, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")
    code = ("import sys; from autograd_gpu.cli import main; code = main(sys.argv[1:]); "
            "from threadpoolctl import threadpool_info; "
            "print(sorted({p['num_threads'] for p in threadpool_info() "
            "if p['user_api'] == 'blas'}))")
    proc = _cli("train", "--data", data, "--epochs", "1", "--quiet", "--out", str(tmp_path / "o"),
                cwd=tmp_path, env=env, code=code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[1]"


# ---- the bare command, help texts -------------------------------------------------------------

def test_bare_command_prints_the_usage(tmp_path: Path) -> None:
    proc = _cli(cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""  # the demo did not run
    assert proc.stderr.startswith("usage: autograd-gpu") and "choose a command" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["memory", "--help"],
                                  ["demo", "--help"]])
def test_help_texts_are_plain(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 0
    text = capsys.readouterr().out
    for word in ("``", "seeds'", "(default: None)", "(default: False)", "cli.py", "train.py"):
        assert word not in text, word
    if argv[0] == "memory":
        options = text[text.index("options:"):]
        batch = options[options.index("--batch N"):options.index("--device")]
        assert batch.count("default") == 1, batch
    if argv[0] == "--help":
        assert "train" in text and "memory" in text and "demo" in text


# ---- plots -----------------------------------------------------------------------------------

@pytest.fixture
def saved_figures(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each matplotlib figure saved while the test runs showed: its titles, and the
    display boxes of its figure, axes and legends as drawn."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    figures: list[dict[str, Any]] = []
    save = Figure.savefig

    def record(fig: Any, *args: Any, **kwargs: Any) -> Any:
        out = save(fig, *args, **kwargs)
        renderer = fig.canvas.get_renderer()
        sup = fig._suptitle.get_text() if fig._suptitle is not None else ""
        figures.append({
            "titles": [t for t in [sup, *(ax.get_title() for ax in fig.axes)] if t],
            "figure": fig.bbox.frozen(),
            "axes": [ax.get_window_extent(renderer).frozen() for ax in fig.axes],
            "legends": [ax.get_legend().get_window_extent(renderer).frozen()
                        for ax in fig.axes if ax.get_legend() is not None]})
        return out

    monkeypatch.setattr(Figure, "savefig", record)
    return figures


def test_curves_are_titled_with_model_and_data(tmp_path: Path,
                                               saved_figures: list[dict[str, Any]],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data = str(_blobs(tmp_path / "blobs.npz", shape=(8, 8)))
    text = tmp_path / "story.txt"
    text.write_text("the cat sat on the mat.\n" * 20)
    for argv in (["--model", "cnn", "--data", data], ["--model", "lstm"],
                 ["--model", "lstm", "--text", str(text), "--steps", "2", "--block-size", "8",
                  "--sample-length", "2"]):
        assert cli.main(["train", *argv, "--epochs", "1", "--quiet",
                         "--out", str(tmp_path / "o")]) == 0
    titles = [f["titles"] for f in saved_figures]
    assert titles == [["cnn on blobs (adam, lr 0.001)"],
                      ["lstm on sort (6 digits from 0..2; adam, lr 0.003)"],
                      ["lstm on story.txt (adam, lr 0.003)"]]


# ---- memory: its PNG path and matplotlib ------------------------------------------------------

def test_memory_without_matplotlib_reports_then_says_so(tmp_path: Path) -> None:
    # NOTE: a None entry in sys.modules makes `import matplotlib` raise ImportError.
    code = ("import sys; sys.modules['matplotlib'] = None; from autograd_gpu.cli import main; "
            "raise SystemExit(main(sys.argv[1:]))")
    proc = _cli("memory", "--batch", "8", cwd=tmp_path, code=code)
    assert proc.returncode == 0, proc.stderr
    assert "per module:" in proc.stdout and "inference_mode" in proc.stdout
    assert proc.stderr.splitlines() == [
        "no PNG written: matplotlib is not installed (pip install matplotlib, or the examples "
        "extra: pip install -e '.[examples]')"]
    assert not (tmp_path / "runs").exists() and not (tmp_path / "memory.png").exists()


def test_memory_png_goes_under_runs_and_new_folders(tmp_path: Path,
                                                    saved_figures: list[dict[str, Any]],
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["memory", "--batch", "8"]) == 0
    assert capsys.readouterr().out.endswith(f"wrote {Path('runs/memory-mlp/memory.png')}\n")
    assert (tmp_path / "runs" / "memory-mlp" / "memory.png").is_file()
    assert not (tmp_path / "memory.png").exists()
    # The legend leaves the curve visible: outside the axes, inside the picture.
    (fig,) = saved_figures
    (ax,), (legend,) = fig["axes"], fig["legends"]
    assert not legend.overlaps(ax) and legend.x1 <= fig["figure"].x1 + 1
    assert cli.main(["memory", "--batch", "8", "--out", "new/dir/x.png"]) == 0
    assert (tmp_path / "new" / "dir" / "x.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("out, message", [
    ("folder", "--out folder: is a folder"),
    ("afile/x.png", "cannot create its folder"),
])
def test_memory_bad_out_fails_before_the_report(out: str, message: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SystemExit) as e:
        cli.main(["memory", "--batch", "8", "--out", out])
    assert e.value.code == 2
    std = capsys.readouterr()
    assert std.out == "" and message in std.err


# ---- git ignores what the commands and CI write --------------------------------------------------

def test_generated_files_are_ignored_by_git() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    paths = [".venv-ci/bin/python", "runs/digits-mlp/checkpoint.pt",
             "runs/memory-mlp/memory.png", "memory.png"]
    proc = subprocess.run(["git", "check-ignore", *paths], capture_output=True, text=True,
                          cwd=ROOT, timeout=30)
    assert proc.stdout.split() == paths


# ---- load_model --------------------------------------------------------------------------------

def test_load_model_rebuilds_every_kind(tmp_path: Path, device: str) -> None:
    data = str(_blobs(tmp_path / "img.npz", shape=(8, 8)))
    trained = {
        "cnn": job.run(job.Config(model="cnn", data=data, epochs=1, quiet=True, device=device,
                                  out=str(tmp_path / "cnn")))[0],
        "lstm": seq.run_sort(seq.SeqConfig(model="lstm", epochs=1, quiet=True, device=device,
                                           out=str(tmp_path / "lstm")))[0],
    }
    x = {"cnn": ag.randn(5, 1, 8, 8), "lstm": ag.randint(0, 4, (5, 7))}
    for kind, model in trained.items():
        for path in (tmp_path / kind, tmp_path / kind / "checkpoint.pt", str(tmp_path / kind)):
            fresh = job.load_model(path)
            assert not fresh.training and next(fresh.parameters()).device.type == "cpu"
            model.eval()
            with ag.no_grad():
                want = model(x[kind].to(device)).cpu()
                got = job.load_model(path, device=device)(x[kind].to(device)).cpu()
            assert ag.allclose(got, want, rtol=0, atol=0), kind
    ag.save({"weights": ag.ones(2)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a checkpoint of autograd-gpu train"):
        job.load_model(tmp_path / "other.pt")
