"""How a CLI process ends: sys.exit normally; after a plugin's request, its atexit functions run and
it leaves through os._exit with the command's code, skipping interpreter teardown (where a torchrun
worker's gloo threads could abort it)."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROGRAM = """
import atexit, sys
from openmind.core.exiting import exit_process, leave_promptly, prompt_exit_reasons

class Teardown:
    def __del__(self):
        print("teardown ran", flush=True)

kept = Teardown()  # a module global: finalised only in interpreter teardown
atexit.register(lambda: print("atexit ran", flush=True))
if {ask}:
    leave_promptly("a worker with threads that must not see teardown")
    leave_promptly("a worker with threads that must not see teardown")  # asked twice, listed once
print(prompt_exit_reasons())
sys.stdout.write("unflushed")  # os._exit must not lose what is buffered
exit_process(3)
"""


@pytest.mark.parametrize("ask", [False, True])
def test_exit_process_skips_teardown_only_when_asked(ask):
    done = subprocess.run([sys.executable, "-c", PROGRAM.format(ask=ask)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    lines = done.stdout.splitlines()
    reasons = ["a worker with threads that must not see teardown"] if ask else []
    assert lines[0] == repr(reasons)
    assert lines[1] == "unflushedatexit ran"
    assert ("teardown ran" in lines) is (not ask)


def test_the_cli_module_ends_through_exit_process():
    # `python -m openmind.core.cli.main` (how torchrun and msrun start workers) ends through exit_process
    program = """
import runpy, sys
from openmind.core.exiting import leave_promptly

class Teardown:
    def __del__(self):
        print("teardown ran", flush=True)

kept = Teardown()
leave_promptly("test")
sys.argv = ["openmind", "list", "templates"]
runpy.run_module("openmind.core.cli.main", run_name="__main__")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "TEMPLATES" in done.stdout and "teardown ran" not in done.stdout
