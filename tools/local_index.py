"""Build a file-based PEP 503 "simple" package index from a folder of built distributions.

usage: local_index.py DIST_DIR INDEX_DIR   (prints the index URL, file:///.../simple)

`pip install --index-url file://INDEX_DIR/simple "openmind[pt,nlp]"` then takes this project's
distributions from the index only (the index replaces PyPI for pip; pip's own configured
find-links and extra indexes still serve the third-party dependencies). Each link carries the
file's sha256, as a real index does, so pip verifies what it installs.
"""

from __future__ import annotations

import hashlib
import html
import re
import shutil
import sys
from pathlib import Path


def project_of(filename: str) -> str:
    """Normalised project name of a wheel or sdist file name (PEP 503)."""
    if filename.endswith(".whl"):
        name = filename.split("-")[0]
    elif filename.endswith(".tar.gz"):
        name = filename[: -len(".tar.gz")].rsplit("-", 1)[0]
    else:
        raise ValueError(f"not a distribution: {filename}")
    return re.sub(r"[-_.]+", "-", name).lower()


def build(dist: Path, index: Path) -> str:
    """Write INDEX/simple/<project>/index.html (+ the files) and INDEX/simple/index.html."""
    simple = index / "simple"
    if simple.exists():
        shutil.rmtree(simple)
    projects: dict[str, list[Path]] = {}
    for f in sorted(dist.iterdir()):
        if f.name.endswith((".whl", ".tar.gz")):
            projects.setdefault(project_of(f.name), []).append(f)
    if not projects:
        raise SystemExit(f"no distributions in {dist}")
    for project, files in projects.items():
        folder = simple / project
        folder.mkdir(parents=True)
        links = []
        for f in files:
            shutil.copy2(f, folder / f.name)
            digest = hashlib.sha256(f.read_bytes()).hexdigest()
            links.append(
                f'<a href="{html.escape(f.name)}#sha256={digest}" data-requires-python="&gt;=3.10">{html.escape(f.name)}</a><br>'
            )
        (folder / "index.html").write_text(
            f"<!DOCTYPE html>\n<html><body>\n<h1>{project}</h1>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    anchors = "\n".join(f'<a href="{p}/">{p}</a><br>' for p in sorted(projects))
    (simple / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{anchors}\n</body></html>\n")
    return simple.resolve().as_uri()


if __name__ == "__main__":
    print(build(Path(sys.argv[1]), Path(sys.argv[2])))
