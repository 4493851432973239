"""``openmind env``: everything a bug report needs. Never crashes when something is missing."""

from __future__ import annotations

import argparse
import json
import os
import platform
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


def collect() -> dict:
    from openmind.core.requirements import installed_distributions

    dists = installed_distributions()
    info: dict = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "openmind_packages": {
            name: version
            for name, version in sorted(dists.items())
            if name == "openmind" or name.startswith("openmind-")
        },
        "libraries": {name: dists.get(name, "not installed") for name in FRAMEWORK_DISTS},
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith("OPENMIND_")},
    }
    try:
        from openmind.core.plugins import get_host

        host = get_host()
        info["plugins"] = [p.to_dict() for p in host.plugins]
        info["registry_problems"] = [p.to_dict() for p in host.registry.problems]
        for _plugin, extra in host.env_info():
            info.setdefault("devices", {}).update({f"{k}": v for k, v in extra.items()})
    except Exception as exc:  # noqa: BLE001 - env must always print something
        info["plugins_error"] = f"{type(exc).__name__}: {exc}"
    info.setdefault("devices", {})
    info["devices"].setdefault("cpu", os.cpu_count())
    return info


class EnvCommand(Command):
    description = "Print Python, platform, openmind packages and plugins, framework versions and devices."

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--json", action="store_true", help="machine-readable output")

    def run(self, args: argparse.Namespace) -> int:
        info = collect()
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
        print("devices:")
        for name, value in info["devices"].items():
            print(f"  {name:24} {value}")
        if info["env"]:
            print("environment:")
            for k, v in info["env"].items():
                print(f"  {k}={v}")
        if info.get("registry_problems"):
            print(f"registry problems: {len(info['registry_problems'])} (see `openmind list --check`)")
        return 0
