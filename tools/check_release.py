"""Install one distribution alone against the others' released versions (`nox -s release -- PACKAGE`).

usage: check_release.py DIST_DIR WORK_DIR PROJECT

DIST_DIR holds every openmind distribution built from this checkout: PROJECT is the one being
released, the others stand for their released versions. They are served by a local file-based
index (tools/local_index.py); PROJECT is installed by name in a fresh venv, with no constraints
file, its third-party dependencies from the normal index. Then: the openmind distributions
installed are the ones built here, `openmind --version` names PROJECT, `openmind list --check`
(a distribution that does not bring the core, openmind-speedups: its portion imports, compiled).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_installs import built_metadata, installed_ours, installer, run  # noqa: E402
from local_index import build as build_index  # noqa: E402


def main() -> None:
    dist, work, project = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve(), sys.argv[3]
    work.mkdir(parents=True, exist_ok=True)
    local = build_index(dist, work / "index")
    env = work / "venv"
    run([*installer(env, local), project], dict(os.environ), work, f"install {project}")
    ours = installed_ours(str(env / "bin" / "python"))
    built = built_metadata(dist)
    if project not in ours:
        sys.exit(f"FAIL {project} is not installed: {sorted(ours)}")
    for name, text in ours.items():
        if built.get(name) != text:
            sys.exit(f"FAIL {name} is not the distribution built here")
    if not (env / "bin" / "openmind").exists():  # a distribution without the core (openmind-speedups)
        portion = project.removeprefix("openmind-")
        code = f"import openmind.{portion} as m; print(m.__version__, getattr(m, 'AVAILABLE', ''))"
        out = run([str(env / "bin" / "python"), "-c", code], dict(os.environ), work, f"import openmind.{portion}")
        if project == "openmind-speedups" and "True" not in out:
            sys.exit(f"FAIL {project}: no compiled module in its wheel:\n{out}")
        print(f"release {project}: installed alone ({out.strip()}): ok")
        return
    version = run([str(env / "bin" / "openmind"), "--version"], dict(os.environ), work, "openmind --version")
    if project not in version:
        sys.exit(f"FAIL --version does not name {project}:\n{version}")
    run([str(env / "bin" / "openmind"), "list", "--check"], dict(os.environ), work, "openmind list --check")
    print(version.strip())
    print(f"release {project}: installed alone with {sorted(set(ours) - {project})}: ok")


if __name__ == "__main__":
    main()
