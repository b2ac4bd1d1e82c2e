"""``autograd-gpu memory`` (issue #5, part 6): the report for the default MLP and the CNN, and the
PNG timeline, on every device."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_gpu import cli


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli.main(["memory", *args]) == 0
    return capsys.readouterr().out


def test_memory_mlp_prints_the_report_and_writes_the_png(
        device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "mlp.png"
    text = run(capsys, "--batch", "32", "--device", device, "--out", str(out))
    assert f"mlp, batch 32, device {device}" in text
    # the analytic figure: the two ReLU outputs plus the loss's saved log-probabilities etc.
    assert f"{2 * 32 * 256 * 4:,}" in text  # ReluBackward0's row
    for needle in ("per module:", "per op:", "ReluBackward0", "1 (ReLU)", "no_grad",
                   "inference_mode", "checkpoint (one segment)", f"wrote {out}"):
        assert needle in text
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_memory_cnn(device: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "cnn.png"
    text = run(capsys, "--model", "cnn", "--batch", "4", "--device", device, "--out", str(out))
    assert "cnn, batch 4" in text and "Conv2d" in text
    assert out.exists()


def test_memory_rejects_a_bad_batch(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["memory", "--batch", "0"])
    assert "must be > 0" in capsys.readouterr().err


def test_existing_subcommands_still_parse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    help_text = capsys.readouterr().out
    assert "train" in help_text and "demo" in help_text and "memory" in help_text
