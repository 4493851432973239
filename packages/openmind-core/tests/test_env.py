"""``openmind env`` is fast (no framework import) and ``--full`` asks the frameworks in a child process."""

from __future__ import annotations

import json
import subprocess
import sys

from openmind.core.cli.main import main

HEAVY = ("torch", "transformers", "mindspore", "datasets", "diffusers")


def test_env_imports_no_framework():
    code = (
        "import sys, io, contextlib\n"
        "from openmind.core.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['env', '--json']) == 0\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_env_versions_come_from_metadata(capsys):
    from importlib.metadata import version

    assert main(["env", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["full"] is False
    found = {name: v for name, v in data["libraries"].items() if v and v != "not installed"}
    assert found  # whatever of the listed libraries this environment has, each with its metadata version
    for name, v in found.items():
        assert v == version(name), name
    assert data["devices"]["cpu"] >= 1
    assert "torch" not in data["devices"]  # the framework's own report needs --full


def test_env_full_reports_what_the_frameworks_see(capsys):
    from importlib.metadata import PackageNotFoundError, version

    assert main(["env", "--json", "--full"]) == 0
    data = json.loads(capsys.readouterr().out)
    devices = data["devices"]
    assert "framework_report_error" not in devices, devices
    loaded = {p["name"] for p in data["plugins"] if p["loaded"]}
    if "pt" in loaded:
        try:
            expected = version("torch")
        except PackageNotFoundError:
            expected = None
        if expected is not None:
            assert devices["torch"] == expected
            assert devices["cuda"] == 0 or devices["cuda"] >= 1


def test_env_full_timeout_is_reported_not_raised(capsys):
    assert main(["env", "--json", "--full", "--timeout", "0.001"]) == 0
    devices = json.loads(capsys.readouterr().out)["devices"]
    assert "no answer within" in devices["framework_report_error"]
    assert devices["cpu"] >= 1


def test_folder_name_versions_equal_the_metadata_scan():
    from openmind.core.cli.environment import installed_versions, version_of
    from openmind.core.requirements import installed_distributions

    found = installed_versions()
    expected = installed_distributions()
    assert {name: version_of(name, found) for name in expected} == expected
    assert version_of("surely-not-installed-dist", found) == "not installed"
