"""tools/local_index.py writes a PEP 503 index that pip reads (the install-set check relies on it)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from local_index import build, project_of  # noqa: E402


def test_project_names_are_normalised():
    assert project_of("openmind-2.0.0-py3-none-any.whl") == "openmind"
    assert project_of("openmind_nlp-2.0.0-py3-none-any.whl") == "openmind-nlp"
    assert project_of("openmind_pt-2.0.0.tar.gz") == "openmind-pt"


def test_index_lists_each_file_with_its_sha256(tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    files = {"openmind_nlp-2.0.0-py3-none-any.whl": b"wheel", "openmind_nlp-2.0.0.tar.gz": b"sdist"}
    for name, data in files.items():
        (dist / name).write_bytes(data)
    url = build(dist, tmp_path / "index")
    assert url == (tmp_path / "index" / "simple").resolve().as_uri()
    page = (tmp_path / "index" / "simple" / "openmind-nlp" / "index.html").read_text()
    for name, data in files.items():
        assert f'href="{name}#sha256={hashlib.sha256(data).hexdigest()}"' in page
        assert (tmp_path / "index" / "simple" / "openmind-nlp" / name).read_bytes() == data
    assert 'href="openmind-nlp/"' in (tmp_path / "index" / "simple" / "index.html").read_text()


def test_license_copies_are_the_repository_license():
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    for package in sorted((ROOT / "packages").glob("openmind-*")):
        assert (package / "LICENSE").read_text() == license_text, package.name
