"""Check the built distributions: namespace layout, LICENSE, metadata; the core alone installs.

usage: check_wheels.py DIST_DIR VENVS_DIR

- only the `openmind` wheel (packages/openmind-core) ships openmind/__init__.py; every other wheel
  ships exactly its own portion (openmind/<portion>/);
- every wheel and sdist carries the Apache-2.0 LICENSE; every wheel's metadata has the license
  expression, authors, project URLs, classifiers and a Requires-Python that matches the Pythons CI
  tests (3.10-3.12);
- `openmind` alone, installed from its wheel (`--no-index`: never let an index pick a same-named
  foreign package) in a fresh venv: `openmind --version`, `openmind list --check`, and
  `import openmind` imports no framework; `openmind run ...` names the distribution that adds it.

The documented install sets (with their third-party dependencies) are checked by
tools/check_installs.py (`nox -s installs`). With $OPENMIND_UV the venv is made by uv.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from email.parser import Parser
from pathlib import Path

REQUIRES_PYTHON = ">=3.10,<3.13"
PYTHONS = ("3.10", "3.11", "3.12")


def fail(message: str) -> None:
    sys.exit(f"FAIL {message}")


def check_wheel(wheel: Path, license_text: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(meta_name).decode())
        licenses = [n for n in names if ".dist-info/licenses/" in n and n.endswith("LICENSE")]
        if not licenses or z.read(licenses[0]).decode() != license_text:
            fail(f"{wheel.name}: no Apache-2.0 LICENSE in .dist-info/licenses/")
    project = meta["Name"]
    has_init = "openmind/__init__.py" in names
    if has_init != (project == "openmind"):
        fail(f"{wheel.name}: openmind/__init__.py {'present' if has_init else 'missing'}")
    if project != "openmind":
        portion = project.removeprefix("openmind-")
        stray = [n for n in names if n.startswith("openmind/") and not n.startswith(f"openmind/{portion}/")]
        if stray:
            fail(f"{wheel.name}: files outside openmind/{portion}/: {stray[:3]}")
    if meta["License-Expression"] != "Apache-2.0":
        fail(f"{wheel.name}: License-Expression {meta['License-Expression']!r}")
    if meta["Author"] != "openmind developers" or not meta.get_all("Project-URL"):
        fail(f"{wheel.name}: authors / project URLs missing")
    classifiers = meta.get_all("Classifier") or []
    for py in PYTHONS:
        if f"Programming Language :: Python :: {py}" not in classifiers:
            fail(f"{wheel.name}: no classifier for Python {py}")
    if sorted(meta["Requires-Python"].split(",")) != sorted(REQUIRES_PYTHON.split(",")):
        fail(f"{wheel.name}: Requires-Python {meta['Requires-Python']!r}, CI tests {REQUIRES_PYTHON}")
    if meta["Version"].count(".") != 2 or any(c.isalpha() for c in meta["Version"]):
        fail(f"{wheel.name}: version {meta['Version']} is not a final release (pip would prefer openmind 1.0.0)")
    print(f"ok   {wheel.name}: {len(names)} files, openmind/__init__.py {'shipped' if has_init else 'not shipped'}")


def check_sdist(sdist: Path, license_text: str) -> None:
    with tarfile.open(sdist) as tar:
        member = next((m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/LICENSE")), None)
        if member is None or tar.extractfile(member).read().decode() != license_text:
            fail(f"{sdist.name}: no Apache-2.0 LICENSE at its root")
    print(f"ok   {sdist.name}: LICENSE")


def core_alone(dist: Path, venvs: Path) -> None:
    env = venvs / "core-only"
    py = str(env / "bin" / "python")
    uv = os.environ.get("OPENMIND_UV")
    if uv:
        subprocess.run([uv, "venv", "-q", "--clear", "--python", sys.executable, str(env)], check=True)
        pip = [uv, "pip", "install", "-q", "--python", py]
    else:
        venv.EnvBuilder(clear=True, with_pip=True).create(env)
        pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    wheel = next(dist.glob("openmind-2*.whl"))
    subprocess.run([*pip, "--no-index", "--no-deps", str(wheel)], check=True)
    subprocess.run([*pip, str(wheel)], check=True)  # its third-party dependencies from the indexes
    openmind = str(env / "bin" / "openmind")
    subprocess.run([openmind, "--version"], check=True)
    subprocess.run([openmind, "list", "--check"], check=True, stdout=subprocess.DEVNULL)
    probe = "import sys, openmind, openmind.core; bad=[m for m in ('torch','mindspore','transformers','datasets','numpy') if m in sys.modules]; assert not bad, bad; print(openmind.__version__)"
    subprocess.run([py, "-c", probe], check=True)
    out = subprocess.run([openmind, "run", "chat", "--model", "x"], capture_output=True, text=True)
    if out.returncode == 0 or "OM-X001" not in out.stderr or 'pip install "openmind[nlp]"' not in out.stderr:
        fail(f"core alone: `openmind run chat` does not name openmind-nlp:\n{out.stderr}")
    print("ok   openmind alone: --version, list --check, no framework imported, `run` names openmind[nlp]")


def main() -> None:
    dist, venvs = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    license_text = (Path(__file__).resolve().parent.parent / "LICENSE").read_text()
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    # one wheel and one sdist per distribution folder under packages/
    expected = len(list((Path(__file__).resolve().parent.parent / "packages").glob("openmind-*/pyproject.toml")))
    if len(wheels) != expected or len(sdists) != expected:
        fail(f"expected {expected} wheels and {expected} sdists in {dist}, found {[f.name for f in dist.iterdir()]}")
    for wheel in wheels:
        check_wheel(wheel, license_text)
    for sdist in sdists:
        check_sdist(sdist, license_text)
    core_alone(dist, venvs)
    print("wheels ok")


if __name__ == "__main__":
    main()
