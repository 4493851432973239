"""Reading a data file does not import scipy.io (datasets' streaming patcher would, only to look
for it among the json builder's globals: 0.2-0.4 s per process), the builder module is still
patched for streaming, and the finder that hides the module hides it from the reading thread only."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from openmind.data.readers import _MissingToThisThread


def test_reading_a_json_file_leaves_scipy_io_unimported_and_the_builder_patched(tmp_path):
    # a stand-in scipy whose io submodule records each import (the real one may be absent here)
    fake = tmp_path / "site" / "scipy"
    (fake / "io").mkdir(parents=True)
    marker = tmp_path / "imported.txt"
    (fake / "__init__.py").write_text("__version__ = '0.0'\n")
    (fake / "io" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('scipy.io\\n')\ndef loadmat(*args, **kwargs):\n    return {{}}\n"
    )
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps({"instruction": f"q{i}", "output": f"a{i}"}) + "\n" for i in range(5)))
    script = textwrap.dedent(
        f"""
        import builtins, json, os, sys
        from openmind.data.readers import read_file
        source = read_file({str(rows)!r}, cache_dir={str(tmp_path / "cache")!r})
        first = os.path.exists({str(marker)!r})
        builder_module = sys.modules["datasets.packaged_modules.json.json"]
        import scipy.io  # the finder is gone: a normal import afterwards
        print(json.dumps({{
            "rows": source.dataset[:],
            "scipy_io_imported_while_reading": first,
            "scipy_io_imported_after": os.path.exists({str(marker)!r}),
            "patched": bool(getattr(builder_module, "_patched_for_streaming", False)),
            "open_patched": builder_module.open is not builtins.open,
        }}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["rows"] == {"instruction": [f"q{i}" for i in range(5)], "output": [f"a{i}" for i in range(5)]}
    assert got["scipy_io_imported_while_reading"] is False
    assert got["scipy_io_imported_after"] is True
    assert got["patched"] and got["open_patched"]


def test_the_finder_hides_a_module_from_its_own_thread_only(tmp_path, monkeypatch):
    (tmp_path / "om_hidden_probe.py").write_text("VALUE = 7\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    finder = _MissingToThisThread(frozenset({"om_hidden_probe"}))
    sys.meta_path.insert(0, finder)
    try:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("om_hidden_probe")
        seen = {}
        thread = threading.Thread(target=lambda: seen.update(value=importlib.import_module("om_hidden_probe").VALUE))
        thread.start()
        thread.join()
        assert seen == {"value": 7}
    finally:
        sys.meta_path.remove(finder)
        sys.modules.pop("om_hidden_probe", None)
