import json

import pytest

from openmind.core.cli import main


def test_help_exits_zero(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for verb in ("list", "env", "docs"):
        assert verb in out


def test_version(capsys):
    from openmind.core.version import __version__

    with pytest.raises(SystemExit):
        main(["--version"])
    assert __version__ in capsys.readouterr().out


def test_list_json_has_commands_and_plugins(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {c["name"] for c in data["commands"]} >= {"list", "env", "docs"}
    core = [p for p in data["plugins"] if p["name"] == "core"][0]
    assert core["distribution"] == "openmind" and core["loaded"]
    assert data["problems"] == []


def test_list_section_and_check(capsys):
    assert main(["list", "commands"]) == 0
    assert "openmind" in capsys.readouterr().out
    assert main(["list", "--check"]) == 0
    assert "registry ok" in capsys.readouterr().out


def test_list_check_fails_on_problem(capsys, monkeypatch):
    from openmind.core import plugins as P

    monkeypatch.setitem(P.DEFAULT_PLUGINS, "broken", "openmind_no_such_module_xyz")
    P.reset()
    assert main(["list", "--check"]) == 1
    out = capsys.readouterr().out
    assert "OM-P001" in out


def test_unknown_option_is_a_coded_error_with_log(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENMIND_LOG_DIR", str(tmp_path))
    assert main(["list", "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error OM-A001")
    assert "hint:" in err and "log:" in err
    log = err.split("log:")[1].strip().splitlines()[0]
    assert "Traceback" in open(log).read()


def test_debug_prints_traceback(capsys):
    assert main(["list", "--bogus", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_unknown_command(capsys):
    assert main(["frobnicate"]) == 2
    assert "OM-A001" in capsys.readouterr().err


def test_env_never_crashes(capsys):
    assert main(["env"]) == 0
    out = capsys.readouterr().out
    assert "python" in out and "openmind" in out and "plugins:" in out
    assert main(["env", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["devices"]["cpu"] >= 1
    assert "torch" in data["libraries"]


def test_errors_catalogue_lists_core_codes():
    from openmind.core.cli.docs import errors_markdown

    text = errors_markdown()
    for code in ("OM-R001", "OM-R002", "OM-R003", "OM-P001", "OM-A001", "OM-X001"):
        assert f"`{code}`" in text


def test_docs_check_detects_stale(tmp_path, capsys):
    assert main(["docs", "--out", str(tmp_path)]) == 0
    assert main(["docs", "--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "errors.md").write_text("old")
    assert main(["docs", "--out", str(tmp_path), "--check"]) == 1
