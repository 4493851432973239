"""The registry snapshot serves exactly what a full plugin load builds, and never a stale one."""

import os

from openmind.core import plugins, snapshot


def _dump(registry):
    specs = sorted((s.kind, s.label(), repr(s.to_dict())) for kind in registry._specs for s in registry.all(kind))
    return specs, [p.to_dict() for p in registry.problems], [p.to_dict() for p in registry.plugin_infos]


def test_snapshot_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    full = plugins.get_host().registry  # builds and saves
    loaded = snapshot.load(plugins.DEFAULT_PLUGINS)
    assert loaded is not None
    assert _dump(loaded) == _dump(full)
    plugins.reset()
    assert plugins.get_registry() is not full  # served from the snapshot
    assert _dump(plugins.get_registry()) == _dump(full)


def test_snapshot_invalidated_by_a_changed_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    plugins.get_host()
    import json

    data = json.loads(snapshot._path().read_text())
    path = next(p for p in data["files"] if p.endswith("builtins.py"))
    st = os.stat(path)
    try:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        assert snapshot.load(plugins.DEFAULT_PLUGINS) is None
    finally:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_snapshot_keyed_by_plugin_env(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    plugins.get_host()
    monkeypatch.setenv("OPENMIND_DISABLE_PLUGINS", "nlp")
    assert snapshot.load(plugins.DEFAULT_PLUGINS) is None
    monkeypatch.setenv("OPENMIND_NO_REGISTRY_CACHE", "1")
    monkeypatch.delenv("OPENMIND_DISABLE_PLUGINS")
    assert snapshot.load(plugins.DEFAULT_PLUGINS) is None


def _fast(code: str, cache) -> set[str]:
    """Modules imported by ``code`` in a fresh process whose registry snapshot is warm."""
    import json
    import subprocess
    import sys

    env = dict(os.environ, OPENMIND_CACHE=str(cache))
    env.pop("OPENMIND_NO_REGISTRY_CACHE", None)
    warm = "from openmind.core.plugins import get_host\nget_host()"
    subprocess.run([sys.executable, "-c", warm], env=env, check=True, capture_output=True)
    probe = (
        "import io, contextlib, json, sys\nfrom openmind.core.cli.main import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    try:\n        rc = main({code})\n    except SystemExit as exc:\n        rc = exc.code or 0\n"
        "print(json.dumps([rc, out.getvalue(), sorted(sys.modules)]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], env=env, check=True, capture_output=True, text=True)
    rc, output, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return rc, output, set(modules)


SLOW = ("openmind.core.registry", "openmind.core.specs", "openmind.core.plugins", "pluggy", "importlib.metadata")


def test_help_and_list_json_are_served_from_the_snapshot(tmp_path):
    # `openmind --help` lists every command, and `openmind list --json` prints the whole matrix,
    # without building a registry (no spec classes, no plugin host, no scan of installed packages)
    rc, text, modules = _fast("['--help']", tmp_path)
    assert rc == 0 and "pull" in text and "cache" in text
    assert not [m for m in SLOW if m in modules], [m for m in SLOW if m in modules]
    rc, text, modules = _fast("['list', '--json']", tmp_path)
    assert rc == 0 and [m for m in SLOW if m in modules] == []
    import json

    assert {c["name"] for c in json.loads(text)["commands"]} >= {"list", "pull", "push", "env"}


def test_list_json_from_snapshot_data_equals_the_registry_path(tmp_path, monkeypatch):
    from openmind.core.cli.listing import KINDS, as_json, as_json_data

    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    monkeypatch.setenv("OPENMIND_DISABLE_PLUGINS", "testplugin")  # a plugin with problems is the registry's job
    registry = plugins.get_host().registry
    data = snapshot.load_data(plugins.DEFAULT_PLUGINS)
    assert data is not None and not registry.problems
    import json

    def printed(out):  # what `list --json` prints (tuples and lists print alike)
        return json.loads(json.dumps(out, default=str))

    for framework in (None, "pt", "ms"):
        assert printed(as_json_data(data, list(KINDS), framework)) == printed(as_json(registry, list(KINDS), framework))
    # a registry with problems is never rendered from plain data (it would lose their classes)
    assert as_json_data(dict(data, problems=[{"code": "OM-R001"}]), list(KINDS), None) is None


def test_requirement_statuses_come_from_the_snapshot(tmp_path, monkeypatch):
    from openmind.core import requirements

    monkeypatch.setenv("OPENMIND_CACHE", str(tmp_path))
    full = plugins.get_host().registry
    plugins.reset()
    requires = sorted({r for kind in full._specs for s in full.all(kind) for r in s.requires})
    assert requires
    fresh = {r: requirements.check(r) for r in requires}
    plugins.reset()
    assert snapshot.load(plugins.DEFAULT_PLUGINS) is not None  # preloads the statuses
    assert set(requirements._PRELOADED) == set(requires)
    assert {r: requirements.check(r) for r in requires} == fresh
    plugins.reset()
    assert requirements._PRELOADED == {}  # reset() forgets them (e.g. after an in-process install)
