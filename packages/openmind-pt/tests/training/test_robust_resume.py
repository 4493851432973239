"""Issue 22: resume trusts only checkpoints whose files match their marker; bad run arguments and
damaged model folders fail with located, coded errors (never OM-P004) and change nothing on disk."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest
from conftest import quick

import openmind
from openmind.core.errors import OpenMindError
from openmind.core.training.layout import ARGS_FILE, CHECKPOINT_MARKER


def _snapshot(folder):
    """{relative path: bytes} of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _err(**kw):
    with pytest.raises(OpenMindError) as info:
        openmind.train(None, **kw)
    return info.value


@pytest.fixture(scope="module")
def run_with_two_checkpoints(tiny_dir, sft_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("resume") / "run"
    openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        output_dir=str(out),
        **quick(max_steps=4, save_steps=2),
    )
    return out


def _copy(src, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(src, dst)
    return dst


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_marker_records_sizes_and_hashes(run_with_two_checkpoints):
    marker = json.loads((run_with_two_checkpoints / "checkpoint-4" / CHECKPOINT_MARKER).read_text())
    weights = "adapter_model.safetensors"
    assert weights in marker["files"]
    assert marker["sizes"][weights] == (run_with_two_checkpoints / "checkpoint-4" / weights).stat().st_size
    assert len(marker["sha256"][weights]) == 64


def test_resume_falls_back_to_the_newest_intact_checkpoint(
    run_with_two_checkpoints, tiny_dir, sft_file, tmp_path, capfd
):
    out = _copy(run_with_two_checkpoints, tmp_path)
    _truncate(out / "checkpoint-4" / "adapter_model.safetensors")
    damaged = (out / "checkpoint-4" / "adapter_model.safetensors").read_bytes()
    result = openmind.train(
        None,
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        output_dir=str(out),
        resume=True,
        **quick(max_steps=6, save_steps=2),
    )
    err = capfd.readouterr().err
    assert f"resuming from {out / 'checkpoint-2'}" in err
    assert "checkpoint-4: adapter_model.safetensors has" in err and "truncated" in err
    assert result.resumed_from == str(out / "checkpoint-2") and result.global_step == 6
    # the damaged checkpoint is kept for inspection (renamed), never deleted; new ones are intact
    broken = [p for p in out.iterdir() if p.name.startswith("checkpoint-4.broken-")]
    assert len(broken) == 1 and (broken[0] / "adapter_model.safetensors").read_bytes() == damaged
    from openmind.core.training.checkpoints import verify

    assert verify(out / "checkpoint-4").intact and verify(out / "checkpoint-6").intact


def test_failed_resume_changes_nothing(run_with_two_checkpoints, tiny_dir, sft_file, tmp_path, capfd):
    out = _copy(run_with_two_checkpoints, tmp_path)
    _truncate(out / "checkpoint-4" / "adapter_model.safetensors")
    _truncate(out / "checkpoint-2" / "optimizer.pt")
    before = _snapshot(out)
    err = _err(
        model=str(tiny_dir),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        output_dir=str(out),
        resume=True,
        learning_rate=1e-2,  # differs from the saved args: must not be written
        **{k: v for k, v in quick(max_steps=6, save_steps=2).items() if k != "learning_rate"},
    )
    assert err.code == "OM-T007"
    assert "checkpoint-4: adapter_model.safetensors" in err.message and "checkpoint-2: optimizer.pt" in err.message
    assert err.location == str(out / "checkpoint-4")
    assert _snapshot(out) == before  # openmind_args.yaml included


def test_resume_that_fails_while_loading_leaves_the_args(run_with_two_checkpoints, sft_file, tmp_path):
    out = _copy(run_with_two_checkpoints, tmp_path)
    before = (out / ARGS_FILE).read_bytes()
    err = _err(
        model=str(tmp_path / "no-such-model"),
        dataset=[str(sft_file)],
        finetuning_type="lora",
        output_dir=str(out),
        resume=True,
        **quick(max_steps=6, save_steps=2),
    )
    assert err.code != "OM-P004"
    assert (out / ARGS_FILE).read_bytes() == before


def test_a_marker_with_a_corrupted_byte_is_not_intact(run_with_two_checkpoints, tmp_path):
    from openmind.core.training.checkpoints import latest_intact

    out = _copy(run_with_two_checkpoints, tmp_path)
    path = out / "checkpoint-4" / "adapter_model.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # same size, different content
    path.write_bytes(bytes(data))
    folder, skipped = latest_intact(out)
    assert folder == out / "checkpoint-2"
    assert "SHA-256" in skipped[0].problem and "adapter_model.safetensors" in skipped[0].problem


@pytest.mark.parametrize("value", [-1e-4, math.nan, 0.0, math.inf])
def test_bad_learning_rate_is_refused_before_loading(value, tmp_path, sft_file):
    # a model path that does not exist: the error must come before any loading
    err = _err(
        model=str(tmp_path / "never-loaded"),
        dataset=[str(sft_file)],
        output_dir=str(tmp_path / "run"),
        **{**quick(), "learning_rate": value},
    )
    assert err.code == "OM-A002" and err.location == "learning_rate"
    assert not (tmp_path / "run").exists()


def test_learning_rate_nan_in_yaml(tmp_path, sft_file):
    cfg = tmp_path / "train.yaml"
    cfg.write_text(
        f"model: {tmp_path / 'never'}\ndataset: {sft_file}\nlearning_rate: .nan\noutput_dir: {tmp_path / 'r'}\n"
    )
    with pytest.raises(OpenMindError) as info:
        openmind.train(str(cfg))
    # located at the line of the file that set it (and the field)
    assert info.value.code == "OM-A002" and info.value.location == f"{cfg}:3 (learning_rate)"


@pytest.mark.parametrize("value", [2.5, -1.0])
def test_val_size_that_is_neither_fraction_nor_count(value, tmp_path, sft_file):
    err = _err(model=str(tmp_path / "never"), dataset=[str(sft_file)], output_dir=str(tmp_path / "r"), val_size=value)
    assert err.code == "OM-A002" and err.location == "val_size"


def test_output_dir_is_a_file(tmp_path, sft_file):
    (tmp_path / "f").write_text("keep me")
    for out in (tmp_path / "f", tmp_path / "f" / "run"):
        err = _err(model=str(tmp_path / "never"), dataset=[str(sft_file)], output_dir=str(out))
        assert err.code == "OM-A002" and err.location == "output_dir" and "is a file" in err.message
    assert (tmp_path / "f").read_text() == "keep me"


@contextlib.contextmanager
def read_only_dir(folder: Path):
    """``folder`` made unwritable for real, also as root (CI runs as root, which ignores mode bits):
    mode 0o555 for other users; as root ``chattr +i`` (ext4/xfs), else a read-only tmpfs mounted on
    it. Yields how, or skips naming what was tried when the machine allows none of them."""
    import subprocess

    folder.mkdir()
    tried = []
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield "mode 0o555"
        finally:
            folder.chmod(0o755)
        return
    for how, on, off in (
        ("chattr +i", ["chattr", "+i", str(folder)], ["chattr", "-i", str(folder)]),
        (
            "read-only tmpfs",
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)],
            ["umount", str(folder)],
        ),
    ):
        try:
            done = subprocess.run(on, capture_output=True, text=True, timeout=30)
        except OSError as exc:
            tried.append(f"{how}: {exc}")
            continue
        if done.returncode != 0:
            tried.append(f"{how}: {done.stderr.strip() or done.returncode}")
            continue
        try:
            with pytest.raises(OSError):  # the premise: nobody, root included, can write here now
                (folder / "probe").write_text("x")
            yield how
        finally:
            subprocess.run(off, capture_output=True, timeout=30)
        return
    pytest.skip("cannot make a folder read-only as root here: " + "; ".join(tried))


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_output_dir_read_only(tmp_path, sft_file):
    with read_only_dir(tmp_path / "ro") as how:
        err = _err(model=str(tmp_path / "never"), dataset=[str(sft_file)], output_dir=str(tmp_path / "ro" / "run"))
        assert not (tmp_path / "ro" / "run").exists()
    assert err.code == "OM-A002" and "not writable" in err.message and err.location == "output_dir", how


def test_config_json_with_wrong_types(tiny_dir, sft_file, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_dir, model)
    cfg = json.loads((model / "config.json").read_text())
    cfg["hidden_size"] = "sixty-four"
    (model / "config.json").write_text(json.dumps(cfg))
    err = _err(model=str(model), dataset=[str(sft_file)], output_dir=str(tmp_path / "r"), **quick())
    assert err.code != "OM-P004" and err.code.startswith("OM-")
    assert "config.json" in err.message or "config.json" in (err.location or "")


def test_truncated_weights(tiny_dir, sft_file, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(tiny_dir, model)
    weights = next(model.glob("*.safetensors"))
    _truncate(weights)
    err = _err(model=str(model), dataset=[str(sft_file)], output_dir=str(tmp_path / "r"), **quick())
    assert err.code != "OM-P004" and err.code.startswith("OM-")
    assert weights.name in err.message or weights.name in (err.location or "")
