"""`openmind webui` is a registered verb; beyond loopback it needs a password."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from openmind.webui.cli import is_loopback

OPENMIND = str(Path(sys.executable).with_name("openmind"))


def test_the_verb_is_listed():
    out = subprocess.run([OPENMIND, "--help"], capture_output=True, text=True, check=True).stdout
    assert "webui" in out


def test_bound_beyond_loopback_without_a_password_it_refuses(tmp_path):
    proc = subprocess.run(
        [OPENMIND, "webui", "--host", "0.0.0.0", "--output-root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode != 0
    assert "OM-S101" in proc.stdout + proc.stderr


def test_loopback_addresses():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4") and not is_loopback("example.org")
