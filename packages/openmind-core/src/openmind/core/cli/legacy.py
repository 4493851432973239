"""``openmind-cli``: openMind 1.0's command line, mapped onto the 2.x verbs.

Each 1.0 command line is translated to its 2.x form, which is printed once on stderr
(``openmind-cli: deprecated form; the 2.x command is: openmind ...``) and then run by
:func:`openmind.core.cli.main.main` (with the ``openmind1`` config dialect preferred for YAML files):

==========================================  ===================================================
openMind 1.0                                2.x
==========================================  ===================================================
``list [--cache_dir D]``                    ``cache ls`` (downloaded models)
``pull ID [--cache_dir D] [--local_dir D]`` ``pull ID [--local-dir D]``
``push ID --folder_path F``                 ``push F ID``
``rm ID``                                   ``rm ID``
``run TASK|MODEL --input X [--task T]``     ``run TASK [--model MODEL] --input X``; a JSON
                                            ``--input '{"text_inputs": ...}'`` gives the text
``chat MODEL|YAML``                         ``chat MODEL|YAML``; ``exit`` / ``clear`` typed as
                                            in 1.0 work (2.x: ``/exit`` / ``/clear``)
``train YAML``                              ``train YAML``
``export YAML``                             ``export --model ... --adapter ... --out ...``
``lmeval --model M --tasks T``              ``eval --model M --tasks T --eval-backend lm-eval``
``env`` / ``deploy ...``                    the same verbs
==========================================  ===================================================

Underscore flags (``--trust_remote_code``, ``--batch_size``) are accepted as everywhere.
"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any, TextIO

#: 1.0 flags with no 2.x meaning: dropped, with the reason shown in the deprecation line.
_DROPPED = {
    "--cache_dir": "the cache is OPENMIND_CACHE",
    "--local_dir_use_symlinks": "not needed",
    "--resume_download": "downloads always resume",
    "--force_download": "use `openmind cache clean` first",
    "--local_files_only": "set OPENMIND_OFFLINE=1",
    "--repo_type": "models only",
    "--docker": "not supported",
    "--yaml_path": "pass the YAML as CONFIG",
}
_RENAMED = {
    "--folder_path": None,  # push: positional
    "--commit_message": "-m",
    "--allow_patterns": "--include",
    "--ignore_patterns": "--exclude",
    "--batch_size": "--eval-batch-size",
}


def _take(argv: list[str], flag: str) -> tuple[str | None, list[str]]:
    """Value of ``flag`` (``--flag v`` or ``--flag=v``; dashes/underscores alike) and argv without it."""
    out, value, i = [], None, 0
    norm = flag.replace("-", "_")
    while i < len(argv):
        token = argv[i]
        key, eq, val = token.partition("=")
        if key.replace("-", "_") == norm:
            if eq:
                value = val
            elif i + 1 < len(argv):
                value = argv[i + 1]
                i += 1
            i += 1
            continue
        out.append(token)
        i += 1
    return value, out


def _drop(argv: list[str], notes: list[str]) -> list[str]:
    for flag, why in _DROPPED.items():
        value, argv = _take(argv, flag)
        if value is not None:
            notes.append(f"{flag} dropped ({why})")
    ids, argv = _take(argv, "--npu_device_ids")
    if ids is not None:
        first = ids.split(",")[0].strip()
        argv += ["--device", f"npu:{first}"]
        if "," in ids:
            notes.append(f"--npu_device_ids {ids}: one device per process (npu:{first}); use --nproc for several")
    return argv


def _json_input(value: str) -> str:
    """1.0's documented JSON ``--input`` (``{"text_inputs": "..."}`` etc.) -> the text itself."""
    try:
        data = json.loads(value)
    except ValueError:
        return value
    if isinstance(data, dict):
        for key in ("text_inputs", "inputs", "text", "prompt", "question"):
            if key in data and isinstance(data[key], str):
                return data[key]
        from openmind.core.errors import A_BAD_VALUE

        raise A_BAD_VALUE.error(
            f"--input JSON object {value!r} has none of text_inputs/inputs/text/prompt/question",
            location="--input",
        )
    return value


def translate(argv: list[str]) -> tuple[list[str], list[str]]:
    """A 1.0 ``openmind-cli`` argv -> (2.x ``openmind`` argv, notes). Unknown verbs pass unchanged."""
    if not argv or argv[0].startswith("-"):
        return argv, []
    verb, rest = argv[0], list(argv[1:])
    notes: list[str] = []
    if verb == "list":
        rest = _drop(rest, notes)
        local, rest = _take(rest, "--local_dir")
        if local:
            notes.append("--local_dir dropped (2.x lists the shared cache)")
        return ["cache", "ls", *rest], notes
    if verb == "pull":
        return ["pull", *_drop(rest, notes)], notes
    if verb == "push":
        folder, rest = _take(rest, "--folder_path")
        for old, new in _RENAMED.items():
            if new and old != "--batch_size":
                value, rest = _take(rest, old)
                if value is not None:
                    rest += [new, value]
        rest = _drop(rest, notes)
        return ["push", folder or ".", *rest], notes
    if verb == "run":
        rest = _drop(rest, notes)
        task, rest = _take(rest, "--task")
        text, rest = _take(rest, "--input")
        backend, rest = _take(rest, "--backend")
        if backend:
            from openmind.core.compat.pipeline_args import _BACKENDS

            rest += ["--framework", _BACKENDS.get(backend.lower(), backend)]
        target = rest.pop(0) if rest and not rest[0].startswith("-") else None
        out = ["run"]
        if target is not None and task is None and _is_task(target):
            out.append(target)
        else:
            if task:
                out.append(task)
            if target is not None:
                out += ["--model", target]
        if text is not None:
            out += ["--input", _json_input(text)]
        return [*out, *rest], notes
    if verb == "lmeval":
        batch, rest = _take(rest, "--batch_size")
        out = ["eval", *rest, "--eval-backend", "lm-eval"]
        if batch is not None:
            out += ["--eval-batch-size", batch]
        return out, notes
    if verb == "export" and rest and not rest[0].startswith("-"):
        return ["export", *_config_flags(rest[0], ("model", "export")), *rest[1:]], notes
    if verb in ("train", "chat", "deploy", "env", "rm", "export", "eval"):
        return [verb, *_drop(rest, notes)], notes
    return argv, notes


def _is_task(name: str) -> bool:
    from openmind.core.errors import OpenMindError
    from openmind.core.plugins import get_registry

    try:
        get_registry().task(name)
    except OpenMindError:
        return False
    return True


def _config_flags(path: str, groups: tuple[str, ...]) -> list[str]:
    """The keys a 1.0 YAML sets, as 2.x flags (for verbs that take no CONFIG file)."""
    from openmind.core import args as A

    ns = A.parse(groups, config=path, prefer_dialect="openmind1")
    flat = ns.flat()
    out: list[str] = []
    for key in sorted(ns.explicit):
        value = flat[key]
        if value is None:
            continue
        value = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        out += ["--" + key.replace("_", "-"), value]
    return out


class _OneZeroStdin:
    """stdin where 1.0's chat words ``exit`` / ``clear`` become 2.x's ``/exit`` / ``/clear``."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner

    def readline(self) -> str:
        line = self.inner.readline()
        if line.strip() in ("exit", "clear"):
            return "/" + line.lstrip()
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``openmind-cli``."""
    from openmind.core.cli.main import main as main2

    argv = list(sys.argv[1:] if argv is None else argv)
    new, notes = translate(argv)
    if new != argv or notes:
        extra = f" ({'; '.join(notes)})" if notes else ""
        print(f"openmind-cli: deprecated form; the 2.x command is: openmind {shlex.join(new)}{extra}", file=sys.stderr)
    if new and new[0] == "chat":
        sys.stdin = _OneZeroStdin(sys.stdin)  # type: ignore[assignment]
    return main2(new, prefer_dialect="openmind1")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
