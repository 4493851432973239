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
