"""Check built wheels: only openmind-core ships openmind/__init__.py; each install variant works.

usage: check_wheels.py DIST_DIR VENVS_DIR CONSTRAINTS

Variants, each in a fresh venv: (a) openmind-core alone, (b) core+nlp+data, (c) the meta package
with [pt,nlp]. Our wheels are installed with --no-index from DIST_DIR first (openmind-core on
PyPI is an unrelated project: never let an index pick a same-named foreign package); then their
third-party dependencies come from the configured indexes. `openmind list --check` runs in each.
With $OPENMIND_UV (the uv binary; `nox -s wheels` sets it when nox has uv) the venvs are made and
filled by uv, else by venv + pip.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path


def wheel_for(dist: Path, name: str) -> Path:
    prefix = name.replace("-", "_") + "-"
    found = [w for w in dist.glob("*.whl") if w.name.startswith(prefix)]
    if len(found) != 1:
        sys.exit(f"expected one wheel for {name} in {dist}, found {found}")
    return found[0]


def check_namespace(dist: Path) -> None:
    for wheel in sorted(dist.glob("*.whl")):
        names = zipfile.ZipFile(wheel).namelist()
        has_init = "openmind/__init__.py" in names
        is_core = wheel.name.startswith("openmind_core-")
        if has_init != is_core:
            sys.exit(f"FAIL {wheel.name}: openmind/__init__.py {'present' if has_init else 'missing'}")
        if wheel.name.startswith("openmind-") and any(n.startswith("openmind/") for n in names):
            sys.exit(f"FAIL {wheel.name}: the meta package must ship no code")
        print(f"ok   {wheel.name}: {len(names)} files, openmind/__init__.py {'shipped' if has_init else 'not shipped'}")


def variant(venvs: Path, name: str, dist: Path, constraints: str, ours: list[str], meta: str | None = None) -> None:
    env = venvs / name
    py = str(env / "bin" / "python")
    uv = os.environ.get("OPENMIND_UV")
    if uv:
        subprocess.run([uv, "venv", "-q", "--clear", "--python", sys.executable, str(env)], check=True)
        pip = [uv, "pip", "install", "-q", "--python", py]
    else:
        venv.EnvBuilder(clear=True, with_pip=True).create(env)
        pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    wheels = [str(wheel_for(dist, n)) for n in ours]
    subprocess.run([*pip, "--no-index", "--no-deps", *wheels], check=True)
    if meta:
        wheels.append(str(wheel_for(dist, "openmind")) + meta)
    subprocess.run([*pip, "-c", constraints, *wheels], check=True)
    out = subprocess.run([str(env / "bin" / "openmind"), "list", "--check"], capture_output=True, text=True)
    print(
        f"[{name}] openmind list --check -> {out.returncode}: {out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr}"
    )
    if out.returncode != 0:
        sys.exit(f"FAIL variant {name}:\n{out.stdout}\n{out.stderr}")
    probe = "import sys, openmind, openmind.core; bad=[m for m in ('torch','mindspore','transformers','datasets','numpy') if m in sys.modules]; assert not bad, bad; print(openmind.__version__)"
    subprocess.run([py, "-c", probe], check=True)


def main() -> None:
    dist, venvs, constraints = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    check_namespace(dist)
    variant(venvs, "core-only", dist, constraints, ["openmind-core"])
    variant(venvs, "core-nlp-data", dist, constraints, ["openmind-core", "openmind-nlp", "openmind-data"])
    variant(
        venvs,
        "meta-pt-nlp",
        dist,
        constraints,
        ["openmind-core", "openmind-nlp", "openmind-pt", "openmind-data"],
        meta="[pt,nlp]",
    )
    print("wheels ok")


if __name__ == "__main__":
    main()
