"""``openmind env``: everything a bug report needs. Never crashes when something is missing.

Fast by default: versions come from installed distribution metadata (the ``*.dist-info`` folder
names, ``importlib.metadata`` for other layouts), plugins from the registry snapshot
(:mod:`openmind.core.snapshot`) when it is valid, and devices from what the operating system shows (``/proc/driver/nvidia/gpus``, ``/dev/davinci*``),
so nothing imports torch, MindSpore or transformers. ``--full`` adds what each framework itself
reports (the plugins' ``openmind_env_info`` hooks: CUDA/NPU counts and names, MindSpore device
targets); those imports run in a child process under ``--timeout`` seconds, so a slow or hanging
driver, or two frameworks that cannot share a process, cannot hang or break ``openmind env``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import subprocess
import sys

from openmind.core.cli.command import Command

FRAMEWORK_DISTS = (
    "torch",
    "torch-npu",
    "mindspore",
    "mindnlp",
    "mindformers",
    "transformers",
    "peft",
    "trl",
    "accelerate",
    "datasets",
    "tokenizers",
    "safetensors",
    "huggingface-hub",
    "openmind-hub",
    "modelscope",
    "vllm",
    "numpy",
)
#: seconds ``--full`` waits for the frameworks' own device report
FULL_TIMEOUT = 60.0


def installed_versions() -> dict[str, str]:
    """Normalised distribution name -> version, read from the names of the ``*.dist-info`` folders
    on ``sys.path`` (``{name}-{version}.dist-info``, the name escaped without ``-``): one directory
    listing per path entry instead of parsing every distribution's METADATA file. Distributions
    whose folder does not tell the version (``*.egg-info``) map to ``""``: see :func:`version_of`."""
    import re

    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix not in ("dist-info", "egg-info"):
                continue
            dist, _, version = stem.partition("-")
            version = version if suffix == "dist-info" else ""
            found.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), version)
    return found


def version_of(name: str, found: dict[str, str]) -> str:
    if name not in found:
        return "not installed"
    if found[name]:
        return found[name]
    from importlib.metadata import PackageNotFoundError, version

    try:  # an egg-info folder: its name does not tell the version
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def os_devices() -> dict:
    """Accelerators the operating system shows, found without importing any framework."""
    devices: dict = {"cpu": os.cpu_count()}
    nvidia = glob.glob("/proc/driver/nvidia/gpus/*")
    if nvidia:
        devices["nvidia_gpus (driver)"] = len(nvidia)
    ascend = [p for p in glob.glob("/dev/davinci*") if p[len("/dev/davinci") :].isdigit()]
    if ascend:
        devices["ascend_npus (driver)"] = len(ascend)
    return devices


def framework_devices(timeout: float) -> dict:
    """The plugins' ``openmind_env_info`` reports, gathered in a child process (``timeout`` seconds)."""
    code = "from openmind.core.cli.environment import _print_plugin_env; _print_plugin_env()"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"framework_report_error": f"no answer within {timeout:g} s (raise it with --timeout)"}
    except OSError as exc:
        return {"framework_report_error": f"{type(exc).__name__}: {exc}"}
    line = next((x for x in reversed(proc.stdout.splitlines()) if x.startswith("{")), None)
    if proc.returncode or line is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"framework_report_error": f"exit code {proc.returncode}: {tail}"}
    return json.loads(line)


def _print_plugin_env() -> None:
    """Child side of :func:`framework_devices`: one JSON line on stdout."""
    from openmind.core.plugins import get_host

    merged: dict = {}
    for _plugin, extra in get_host().env_info():
        merged.update({str(k): v for k, v in extra.items()})
    print(json.dumps(merged, default=str))


def collect(full: bool = False, timeout: float = FULL_TIMEOUT) -> dict:
    dists = installed_versions()
    info: dict = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "openmind_packages": {
            name: version_of(name, dists)
            for name in sorted(dists)
            if name == "openmind" or name.startswith("openmind-")
        },
        "libraries": {name: version_of(name, dists) for name in FRAMEWORK_DISTS},
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("OPENMIND_")},
        "devices": os_devices(),
        "full": full,
    }
    try:
        from openmind.core import snapshot
        from openmind.core.entrypoints import DEFAULT_PLUGINS

        data = snapshot.load_data(DEFAULT_PLUGINS)  # valid while nothing was installed or edited
        if data is not None:
            info["plugins"] = data["plugins"]
            info["registry_problems"] = data["problems"]
        else:
            from openmind.core.plugins import get_host

            host = get_host()
            info["plugins"] = [p.to_dict() for p in host.plugins]
            info["registry_problems"] = [p.to_dict() for p in host.registry.problems]
    except Exception as exc:  # noqa: BLE001 - env must always print something
        info["plugins_error"] = f"{type(exc).__name__}: {exc}"
    if full:
        info["devices"].update(framework_devices(timeout))
    return info


class EnvCommand(Command):
    description = (
        "Print Python, platform, openmind packages and plugins, framework versions and devices "
        "(--full: also ask the frameworks which devices they see)."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument(
            "--full",
            action="store_true",
            help="also import each framework (in a child process) and report the devices it sees",
        )
        parser.add_argument(
            "--timeout",
            type=float,
            default=FULL_TIMEOUT,
            help=f"seconds --full waits for the frameworks' report (default {FULL_TIMEOUT:g})",
        )

    def run(self, args: argparse.Namespace) -> int:
        info = collect(full=args.full, timeout=args.timeout)
        if args.json:
            print(json.dumps(info, indent=2, default=str))
            return 0
        print(f"python        {info['python']} ({info['executable']})")
        print(f"platform      {info['platform']}  cpus={info['cpu_count']}")
        print("openmind packages:")
        for name, version in info["openmind_packages"].items():
            print(f"  {name:24} {version}")
        print("plugins:")
        for p in info.get("plugins", []):
            state = "loaded" if p["loaded"] else f"FAILED: {p['error']}"
            print(f"  {p['name']:24} {p['distribution']} {p['version']}  {state}")
        if info.get("plugins_error"):
            print(f"  (plugins could not be loaded: {info['plugins_error']})")
        print("libraries:")
        for name, version in info["libraries"].items():
            print(f"  {name:24} {version}")
        print(
            "devices:" if info["full"] else "devices (as the OS shows them; `openmind env --full` asks the frameworks):"
        )
        for name, value in info["devices"].items():
            print(f"  {name:24} {value}")
        if info["env"]:
            print("environment:")
            for k, v in info["env"].items():
                print(f"  {k}={v}")
        if info.get("registry_problems"):
            print(f"registry problems: {len(info['registry_problems'])} (see `openmind list --check`)")
        return 0
