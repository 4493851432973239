"""import openmind must stay free of frameworks (and fast)."""

import json
import subprocess
import sys

HEAVY = ("torch", "mindspore", "transformers", "datasets", "numpy", "mindnlp", "diffusers")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_openmind_imports_no_framework():
    loaded = _modules_after("import openmind, openmind.core")
    assert not [m for m in HEAVY if m in loaded]


def test_loading_every_plugin_imports_no_framework():
    loaded = _modules_after("from openmind.core.plugins import get_registry\nr = get_registry()\nr.all('task')")
    assert not [m for m in HEAVY if m in loaded]


def test_cli_list_imports_no_framework():
    loaded = _modules_after(
        "import io, contextlib\nfrom openmind.core.cli import main\nwith contextlib.redirect_stdout(io.StringIO()): main(['list', '--json'])"
    )
    assert not [m for m in HEAVY if m in loaded]


def test_version_is_single_sourced():
    import openmind
    from openmind.core.version import __version__

    assert openmind.__version__ == __version__
    from importlib.metadata import version

    assert version("openmind") == __version__


def test_lazy_attribute_error():
    import openmind

    try:
        openmind.does_not_exist  # noqa: B018
    except AttributeError as exc:
        assert "does_not_exist" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
