"""Optional extras (issue 13): without matplotlib (loss.png) or tensorboard (the default
`report_to tensorboard`), training completes with a one-line warning each, never a crash after it."""

from __future__ import annotations

import importlib.util
import json
import logging
import sys

from conftest import quick

import openmind


def test_training_without_matplotlib_and_tensorboard_warns_and_completes(
    tiny_dir, sft_file, tmp_path, monkeypatch, caplog
):
    real_find_spec = importlib.util.find_spec
    hidden = ("matplotlib", "tensorboard", "tensorboardX")
    for name in [m for m in sys.modules if m.split(".")[0] in hidden]:
        monkeypatch.delitem(sys.modules, name)
    for name in hidden:
        monkeypatch.setitem(sys.modules, name, None)  # `import matplotlib` raises ImportError
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.split(".")[0] in hidden else real_find_spec(name, *a)
    )
    out = tmp_path / "run"
    with caplog.at_level(logging.WARNING):
        result = openmind.train(
            None,
            stage="sft",
            model=str(tiny_dir),
            dataset=[str(sft_file)],
            finetuning_type="full",
            output_dir=str(out),
            **quick(max_steps=2, report_to=["tensorboard"], plot_loss=True, logging_steps=1, save_steps=2),
        )
    assert result.global_step == 2
    assert json.loads((out / "train_summary.json").read_text())["global_step"] == 2
    assert not (out / "loss.png").exists() and not list(out.rglob("events.out.tfevents.*"))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("tensorboard is not installed" in w for w in warnings), warnings
    assert any("matplotlib is not installed" in w for w in warnings), warnings
