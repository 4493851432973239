"""Build hook: compile ``openmind.speedups._templates`` into the wheel.

The C module is built by setuptools' ``build_ext`` (the compiler, flags and file suffix CPython was
built with) in a temporary folder, so no build output lands in the source tree, and added to the
wheel, which is then tagged for this interpreter and platform. Without a C compiler or the Python
headers the wheel is built without it (a warning says so): openmind.speedups.AVAILABLE is then
False and openmind-nlp renders through its Python paths. An editable install never has it (the
module would have to live in the source tree): install this package normally.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "openmind.speedups._templates"
SOURCE = "src/openmind/speedups/_templates.c"


class SpeedupsBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        self._tmp = tempfile.mkdtemp(prefix="openmind-speedups-")
        try:
            built = self._compile(Path(self._tmp))
        except Exception as exc:  # noqa: BLE001 - any compiler failure leaves the Python paths
            print(f"warning: openmind-speedups builds without its C module ({exc})", file=sys.stderr)
            return
        build_data["force_include"][str(built)] = f"openmind/speedups/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict, artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    def _compile(self, tmp: Path) -> Path:
        from setuptools import Distribution, Extension

        source = os.path.join(self.root, SOURCE)
        dist = Distribution({"name": "openmind-speedups", "ext_modules": [Extension(MODULE, [source])]})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib = str(tmp / "lib")
        cmd.build_temp = str(tmp / "temp")
        cmd.ensure_finalized()
        cmd.run()
        return Path(cmd.get_ext_fullpath(MODULE))
