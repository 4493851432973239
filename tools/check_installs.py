"""Every documented install set works from the built distributions alone (issue 13).

usage: check_installs.py DIST_DIR WORK_DIR MODEL_DIR [SET ...]

DIST_DIR holds the wheels and sdists of every openmind distribution (built by `nox -s installs`).
This script serves them from a file-based PEP 503 index (tools/local_index.py) and installs each
documented set, e.g. "openmind[pt,nlp]", into a fresh venv WITHOUT any constraints file:

    pip install --index-url LOCAL --extra-index-url NORMAL "openmind[pt,nlp]"

NORMAL is the index the machine normally uses (PIP_INDEX_URL / pip's configured index-url, else
PyPI) for the third-party dependencies, together with pip's own configured extra indexes and
find-links (handed to uv by the noxfile). Afterwards:

- the openmind distributions installed are exactly the ones the set promises, each byte-identical
  (METADATA) to the one built here: no same-named package from an index (dependency confusion);
- `openmind --version`, `openmind list --check` pass and `import openmind` imports no framework;
- with openmind-speedups: its compiled module imports and openmind-nlp's templates use it;
- where the set includes a framework: a tiny chat (`openmind run chat`) and a 2-step training
  (`openmind train`, default report_to/plot: the optional extras degrade with a warning) on each
  framework of the set, on MODEL_DIR (a tiny random Llama with a real tokenizer).

With $OPENMIND_UV (the uv binary) the venvs are made and filled by uv (shared cache), else by
venv + pip. Prints one timing line per set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import venv
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from local_index import build as build_index  # noqa: E402

# the documented install sets (README "Install") -> the openmind distributions each must install
SETS: dict[str, set[str]] = {
    "openmind": {"openmind"},
    "openmind[nlp,data]": {"openmind", "openmind-nlp", "openmind-data"},
    "openmind[pt,nlp]": {"openmind", "openmind-pt", "openmind-nlp", "openmind-data"},
    "openmind[pt,nlp,data]": {"openmind", "openmind-pt", "openmind-nlp", "openmind-data"},
    "openmind[ms,nlp]": {"openmind", "openmind-ms", "openmind-nlp", "openmind-data"},
    "openmind[pt,ms,nlp]": {"openmind", "openmind-pt", "openmind-ms", "openmind-nlp", "openmind-data"},
    "openmind[all]": {
        "openmind",
        "openmind-pt",
        "openmind-ms",
        "openmind-nlp",
        "openmind-data",
        "openmind-mm",
        "openmind-webui",
        "openmind-speedups",
    },
    "openmind[mm,pt]": {"openmind", "openmind-mm", "openmind-pt", "openmind-nlp", "openmind-data"},
    # the README's other install commands
    "openmind[ms]": {"openmind", "openmind-ms", "openmind-nlp", "openmind-data"},
    "openmind[hf]": {"openmind"},
    "openmind[nlp,speedups]": {"openmind", "openmind-nlp", "openmind-speedups"},
}
OURS = {
    "openmind",
    "openmind-core",
    "openmind-pt",
    "openmind-ms",
    "openmind-nlp",
    "openmind-data",
    "openmind-mm",
    "openmind-webui",
    "openmind-speedups",
}
FRAMEWORKS = {"openmind-pt": "pt", "openmind-ms": "ms"}


def normal_index() -> str:
    """The index pip uses on this machine when not told otherwise."""
    if os.environ.get("PIP_INDEX_URL"):
        return os.environ["PIP_INDEX_URL"]
    out = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True
    )
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "https://pypi.org/simple"


def installer(env: Path, local: str) -> list[str]:
    """The install command of a fresh venv at ``env``: our index first, the normal one for the rest."""
    uv = os.environ.get("OPENMIND_UV")
    py = str(env / "bin" / "python")
    if uv:
        subprocess.run([uv, "venv", "-q", "--clear", "--python", sys.executable, str(env)], check=True)
        # uv takes flags over UV_* variables: hand the configured extra indexes and find-links on
        extra = [a for url in os.environ.get("UV_EXTRA_INDEX_URL", "").split() for a in ("--extra-index-url", url)]
        links = [a for url in os.environ.get("UV_FIND_LINKS", "").split(",") if url for a in ("--find-links", url)]
        return [
            uv,
            "pip",
            "install",
            "-q",
            "--python",
            py,
            "--index-strategy",
            "unsafe-best-match",
            "--index-url",
            normal_index(),
            "--extra-index-url",
            local,
            *extra,
            *links,
        ]
    venv.EnvBuilder(clear=True, with_pip=True).create(env)
    return [py, "-m", "pip", "install", "-q", "--index-url", local, "--extra-index-url", normal_index()]


def installed_ours(py: str) -> dict[str, str]:
    """openmind distribution -> its METADATA text, as installed in the venv of ``py``."""
    code = (
        "import json, importlib.metadata as m\n"
        f"ours = {sorted(OURS)!r}\n"
        "found = {}\n"
        "for d in m.distributions():\n"
        "    n = (d.metadata['Name'] or '').lower().replace('_', '-')\n"
        "    if n in ours: found[n] = d.read_text('METADATA')\n"
        "print(json.dumps(found))\n"
    )
    return json.loads(subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout)


def built_metadata(dist: Path) -> dict[str, str]:
    out = {}
    for wheel in dist.glob("*.whl"):
        with zipfile.ZipFile(wheel) as z:
            name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            text = z.read(name).decode()
        out[text.split("\nName: ", 1)[1].split("\n", 1)[0].lower()] = text
    return out


def run(cmd: list[str], env: dict[str, str], cwd: Path, what: str) -> str:
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode != 0:
        sys.exit(f"FAIL {what}: exit {out.returncode}\n$ {' '.join(cmd)}\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}")
    return out.stdout + out.stderr


def smoke(env: Path, framework: str, model: Path, data: Path, work: Path) -> None:
    """A tiny chat and a 2-step training on ``framework``, through the CLI, as a user would."""
    openmind = str(env / "bin" / "openmind")
    run_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OPENMIND_LOG_DIR": str(work / "logs"),
        "GLOG_v": "3",
    }
    chat = run(
        [openmind, "run", "chat", "--model", str(model), "--framework", framework, "--input", "Hello"]
        + ["--max-new-tokens", "4", "--do-sample", "false"],
        run_env,
        work,
        f"chat on {framework}",
    )
    out = work / f"run-{framework}"
    shutil.rmtree(out, ignore_errors=True)
    log = run(
        [openmind, "train", "--stage", "sft", "--model", str(model), "--framework", framework]
        + ["--dataset", str(data), "--finetuning-type", "lora", "--output-dir", str(out), "--max-steps", "2"]
        + ["--per-device-train-batch-size", "2", "--logging-steps", "1", "--save-steps", "1000"]
        + ["--cutoff-len", "64"],
        run_env,
        work,
        f"train on {framework}",
    )
    summary = json.loads((out / "train_summary.json").read_text())
    if summary.get("global_step") != 2:
        sys.exit(f"FAIL train on {framework}: {summary}")
    warned = [line for line in log.splitlines() if "is not installed" in line]
    answer = [
        line
        for line in chat.splitlines()
        if line.strip() and not line.startswith("[openmind]") and "it/s]" not in line and "\r" not in line
    ]
    print(f"    {framework}: chat -> {answer[-1][:60] if answer else ''!r}; train 2 steps ok; warnings: {warned}")


def pip_dry_run(local: str, work: Path, spec: str = "openmind[pt,nlp]") -> None:
    """`pip install --dry-run --index-url LOCAL "openmind[pt,nlp]"` with plain pip (its configured
    find-links / extra indexes serve the rest): every distribution of ours comes from LOCAL."""
    env = work / "venvs" / "pip-dry-run"
    venv.EnvBuilder(clear=True, with_pip=True).create(env)
    report = work / "dry-run.json"
    cmd = [str(env / "bin" / "python"), "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed"]
    run([*cmd, "--report", str(report), "--index-url", local, spec], dict(os.environ), work, f"pip --dry-run {spec}")
    picked = {
        item["metadata"]["name"].lower(): item["download_info"]["url"]
        for item in json.loads(report.read_text())["install"]
    }
    ours = {n: url for n, url in picked.items() if n in OURS}
    if set(ours) != SETS[spec] or not all(url.startswith(local + "/") for url in ours.values()):
        sys.exit(f"FAIL pip --dry-run {spec}: our distributions {ours}, expected {sorted(SETS[spec])} from {local}")
    torch = picked.get("torch", "")
    print(f"[pip --dry-run {spec}] ours from the local index: {sorted(ours)}; torch from {torch.rsplit('/', 1)[-1]}")
    shutil.rmtree(env, ignore_errors=True)


#: the frozen package list of each environment already smoke-tested (per framework) -> its set
TESTED: dict[tuple[str, str], str] = {}


def freeze(env: Path) -> str:
    """The environment's exact package list (name==version, sorted)."""
    code = (
        "import importlib.metadata as m; "
        "print(sorted(f\"{d.metadata['Name'].lower()}=={d.version}\" for d in m.distributions()))"
    )
    return subprocess.run([str(env / "bin" / "python"), "-c", code], capture_output=True, text=True, check=True).stdout


def check_set(spec: str, expected: set[str], dist: Path, local: str, work: Path, model: Path, data: Path) -> float:
    start = time.monotonic()
    name = spec.replace("[", "-").replace("]", "").replace(",", "-")
    env = work / "venvs" / name
    cmd = installer(env, local)
    run([*cmd, spec], dict(os.environ), work, f"install {spec}")
    py = str(env / "bin" / "python")
    ours = installed_ours(py)
    if set(ours) != expected:
        sys.exit(f"FAIL {spec}: installed openmind distributions {sorted(ours)}, expected {sorted(expected)}")
    built = built_metadata(dist)
    for n, text in ours.items():
        if built.get(n) != text:
            sys.exit(f"FAIL {spec}: {n} is not the distribution built here (an index served another one)")
    version = run([str(env / "bin" / "openmind"), "--version"], dict(os.environ), work, "openmind --version")
    for n in expected:
        if n != "openmind" and f"{n} 2.0" not in version:
            sys.exit(f"FAIL {spec}: --version does not list {n}:\n{version}")
    run([str(env / "bin" / "openmind"), "list", "--check"], dict(os.environ), work, f"list --check in {spec}")
    probe = (
        "import sys, openmind, openmind.core; "
        "bad = [m for m in ('torch', 'mindspore', 'transformers', 'datasets', 'numpy') if m in sys.modules]; "
        "assert not bad, bad; print(openmind.__version__)"
    )
    run([py, "-c", probe], dict(os.environ), work, f"import openmind in {spec}")
    if "openmind-speedups" in expected:  # its wheel carries the compiled module, and openmind-nlp uses it
        speedups = (
            "import openmind.speedups as s; from openmind.nlp.templates import load_template; "
            "assert s.AVAILABLE, 'no compiled module'; assert load_template('phi4')._fill is s.fill_layout"
        )
        run([py, "-c", speedups], dict(os.environ), work, f"openmind.speedups in {spec}")
    print(f"[{spec}] installed {sorted(ours)} in {time.monotonic() - start:.0f} s")
    frozen = freeze(env)
    for d, framework in FRAMEWORKS.items():
        if d in expected:
            same = TESTED.get((framework, frozen))
            if same:  # e.g. [pt,nlp] and [pt,nlp,data] install the very same packages
                print(f"    {framework}: the same packages as {same}, whose chat and training passed")
                continue
            begin = time.monotonic()
            smoke(env, framework, model, data, work)
            TESTED[(framework, frozen)] = spec
            print(f"    {framework}: chat + train in {time.monotonic() - begin:.0f} s")
    seconds = time.monotonic() - start
    print(f"[{spec}] ok in {seconds:.0f} s")
    shutil.rmtree(env, ignore_errors=True)  # keep the disk lean: the next set gets a fresh venv anyway
    return seconds


def main() -> None:
    dist, work, model = (Path(a).resolve() for a in sys.argv[1:4])
    chosen = sys.argv[4:] or list(SETS)
    work.mkdir(parents=True, exist_ok=True)
    local = build_index(dist, work / "index")
    data = work / "sft.jsonl"
    rows = [
        {"messages": [{"role": "user", "content": f"Reverse {n}"}, {"role": "assistant", "content": str(n)[::-1]}]}
        for n in range(1000, 1016)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pip_dry_run(local, work)
    timings = {spec: check_set(spec, SETS[spec], dist, local, work, model, data) for spec in chosen}
    print("install sets ok: " + ", ".join(f"{s} {t:.0f}s" for s, t in timings.items()))


if __name__ == "__main__":
    main()
