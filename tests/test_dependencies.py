"""Each distribution declares exactly what it imports (issues 12 and 13).

Walks every ``packages/openmind-*/src`` file's imports (AST, no import of the code) and compares them
with that package's ``pyproject.toml``:

- an openmind portion (``openmind.nlp`` ...) or a third-party module imported anywhere must be a
  declared dependency of the package (a required one, or one of its extras when the import is lazy:
  inside a function, or guarded by ``try: ... except ImportError``);
- an import at module level in a module that loading the package's plugins imports (its
  ``openmind`` entry points and what they import at module level, transitively) must be a required
  dependency, or guarded: an extra that is not installed must never break loading the plugin;
- ``openmind.core`` (the ``openmind`` distribution) never imports a framework or a domain/backend
  portion at module level, and never a domain/backend portion at all (it finds them through the
  registry: specs name implementations as ``"module:attr"`` strings);
- declared dependencies that nothing imports are reported too (exactly what it imports).

Third-party modules are mapped to distributions by the table below (``MODULE_TO_DIST``), so the test
needs none of them installed.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p for p in (ROOT / "packages").glob("openmind-*") if (p / "pyproject.toml").exists())

#: top-level module -> the distribution that provides it (where the two names differ, or to pin the
#: choice); a module missing here maps to the distribution of the same name.
MODULE_TO_DIST = {
    "yaml": "pyyaml",
    "openmind_hub": "openmind-hub",
    "google": "protobuf",
    "sklearn": "scikit-learn",
    "PIL": "pillow",
    "rouge_score": "rouge-score",
    "lm_eval": "lm-eval",
    "sentence_transformers": "sentence-transformers",
    "torch_npu": "torch-npu",
    "mistral_common": "mistral-common",
    # modelscope >= 1.40 installs its hub client as the module modelscope_hub (guarded import)
    "modelscope_hub": "modelscope",
}
#: frameworks that openmind.core never imports at module level
FRAMEWORKS = {"torch", "mindspore", "transformers", "datasets", "diffusers", "peft", "trl", "mindformers", "mindnlp"}
#: declared but only used indirectly (by a library at run time, not imported by name)
INDIRECT: dict[str, set[str]] = {
    # transformers' Trainer needs accelerate; `report_to tensorboard` needs tensorboard
    # openmind-data: the training plan loads its data step by name (openmind.data.training:prepare_for_training)
    "openmind-pt": {"accelerate", "tensorboard", "openmind-data"},
    # bounds only: the releases of openmind-data's pyarrow / datasets that accept MindSpore's numpy<2
    "openmind-ms": {"pyarrow", "datasets", "openmind-data"},
    # uvicorn imports them when openmind.nlp.serve.server picks loop="uvloop" / http="httptools"
    "openmind-nlp": {"uvloop", "httptools"},
}
#: known, tracked exceptions: (distribution, imported distribution) -> why. The test fails when an entry is no longer
#: needed, so each is removed as soon as its cause is fixed.
KNOWN: dict[tuple[str, str], str] = {}


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(requirement: str) -> str:
    return normalise(re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].strip())


@dataclass
class Meta:
    name: str
    required: set[str]
    extras: dict[str, set[str]]

    @property
    def optional(self) -> set[str]:
        return set().union(*self.extras.values()) if self.extras else set()


def entry_modules(package: Path) -> list[str]:
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    modules = [v.split(":")[0] for v in project.get("entry-points", {}).get("openmind", {}).values()]
    if project["name"] == "openmind":
        modules += ["openmind", "openmind.core", "openmind.core.plugins", "openmind.core.builtins"]
        modules += [v.split(":")[0] for v in project.get("scripts", {}).values()]
    return modules


def module_file(package: Path, module: str) -> Path | None:
    base = package / "src" / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.exists():
            return candidate
    return None


def eager_files(package: Path) -> set[Path]:
    """Files that loading the package's plugins imports: the entry-point modules and, transitively,
    the modules of the same package they import at module level (and the packages' __init__s)."""
    seen: set[Path] = set()
    todo = list(entry_modules(package))
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):  # parents are imported first
            path = module_file(package, ".".join(parts[:i]))
            if path is None or path in seen:
                continue
            seen.add(path)
            for use in imports(path):
                if use.module_level and not use.guarded and use.module.startswith("openmind."):
                    todo.append(use.module)
    return seen


def metadata(package: Path) -> Meta:
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    return Meta(
        normalise(project["name"]),
        {req_name(r) for r in project.get("dependencies", [])},
        {k: {req_name(r) for r in v} for k, v in project.get("optional-dependencies", {}).items()},
    )


def portions() -> dict[str, str]:
    """openmind portion (``nlp``) -> distribution name (``openmind-nlp``)."""
    out = {}
    for package in PACKAGES:
        name = metadata(package).name
        for sub in (package / "src" / "openmind").iterdir():
            if sub.is_dir() and sub.name != "__pycache__":
                out[sub.name] = name
    return out


@dataclass(frozen=True)
class Use:
    module: str  # the imported module, dotted
    file: Path
    line: int
    module_level: bool  # runs when the importing module is imported
    guarded: bool  # inside try: ... except ImportError / ModuleNotFoundError, or under TYPE_CHECKING


def _guards_import_error(node: ast.Try) -> bool:
    for handler in node.handlers:
        names = []
        if handler.type is None:
            return True
        for t in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
            names.append(getattr(t, "id", getattr(t, "attr", "")))
        if {"ImportError", "ModuleNotFoundError", "Exception"} & set(names):
            return True
    return False


def imports(path: Path) -> list[Use]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    uses: list[Use] = []

    def visit(node: ast.AST, module_level: bool, guarded: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                uses.append(Use(alias.name, path, node.lineno, module_level, guarded))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            uses.append(Use(node.module, path, node.lineno, module_level, guarded))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level:
            pass  # relative imports stay inside the package
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            module_level = False
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                visit(child, module_level, True)
            for child in node.orelse:
                visit(child, module_level, guarded)
            return
        if isinstance(node, ast.Try) and _guards_import_error(node):
            for child in node.body:
                visit(child, module_level, True)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                visit(child, module_level, guarded)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, module_level, guarded)

    for statement in tree.body:
        visit(statement, True, False)
    return uses


def distribution_of(module: str, owners: dict[str, str]) -> str | None:
    """The distribution an import needs (None: standard library)."""
    parts = module.split(".")
    top = parts[0]
    if top == "openmind":
        if len(parts) == 1:
            return "openmind"
        return owners.get(parts[1], "openmind")
    if top in sys.stdlib_module_names or top == "__future__":
        return None
    return normalise(MODULE_TO_DIST.get(top, top))


def problems() -> tuple[list[str], set[tuple[str, str]]]:
    owners = portions()
    found: list[str] = []
    used_known: set[tuple[str, str]] = set()
    for package in PACKAGES:
        meta = metadata(package)
        is_core = meta.name == "openmind"
        used: set[str] = set()
        eager = eager_files(package)
        ours = set(owners.values()) - {meta.name}
        for path in sorted((package / "src").rglob("*.py")):
            rel = path.relative_to(ROOT)
            for use in imports(path):
                dist = distribution_of(use.module, owners)
                if dist is None or dist == meta.name:
                    continue
                used.add(dist)
                where = f"{rel}:{use.line}"
                top = use.module.split(".")[0]
                key = (meta.name, dist)
                if key in KNOWN:
                    used_known.add(key)
                    continue
                if is_core and dist in ours:
                    found.append(f"{where}: openmind.core imports {use.module} ({dist}); find it through the registry")
                    continue
                if is_core and top in FRAMEWORKS and use.module_level and not use.guarded:
                    found.append(f"{where}: openmind.core imports the framework {top} at module level")
                    continue
                if dist in meta.required:
                    continue
                if dist in meta.optional and (not use.module_level or use.guarded or path not in eager):
                    continue
                if dist in meta.optional:
                    found.append(
                        f"{where}: {meta.name} imports {use.module} at module level on its plugin-loading path, "
                        f"but {dist} is only an extra"
                    )
                else:
                    found.append(f"{where}: {meta.name} imports {use.module}, but does not declare {dist}")
        unused = meta.required - used - INDIRECT.get(meta.name, set())
        if not is_core:
            unused |= meta.optional - used - INDIRECT.get(meta.name, set())
        for dist in sorted(unused):
            found.append(
                f"{package.relative_to(ROOT)}/pyproject.toml: {meta.name} declares {dist} but never imports it"
            )
    return found, used_known


def test_each_distribution_declares_exactly_what_it_imports() -> None:
    found, used_known = problems()
    stale = sorted(set(KNOWN) - used_known)
    assert not found, "\n".join(found)
    assert not stale, f"KNOWN entries no longer needed (remove them): {stale}"


# ---- the checker itself can fail ----------------------------------------------------------------


def test_checker_sees_undeclared_and_module_level_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import os\nimport torch\ntry:\n    import matplotlib\nexcept ImportError:\n    matplotlib = None\n"
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import peft\n"
        "def f():\n    import openmind.nlp.x\n"
    )
    uses = {u.module: u for u in imports(source)}
    assert uses["torch"].module_level and not uses["torch"].guarded
    assert uses["matplotlib"].guarded and uses["peft"].guarded
    assert not uses["openmind.nlp.x"].module_level
    owners = portions()
    assert distribution_of("os", owners) is None
    assert distribution_of("openmind.nlp.x", owners) == "openmind-nlp"
    assert distribution_of("openmind.core.errors", owners) == "openmind"
    assert distribution_of("yaml", owners) == "pyyaml"


@pytest.mark.parametrize("package", [p.name for p in PACKAGES])
def test_versions_and_internal_ranges(package: str) -> None:
    """Every openmind distribution has the same minor version; internal dependencies are the
    compatible range of that minor (``>=2.0,<2.1``), never a bare lower bound."""
    text = (ROOT / "packages" / package / "pyproject.toml").read_text()
    project = tomllib.loads(text)["project"]
    reqs = [*project.get("dependencies", []), *sum(project.get("optional-dependencies", {}).values(), [])]
    for req in reqs:
        if req_name(req) == "openmind" or req_name(req).startswith("openmind-") and req_name(req) != "openmind-hub":
            assert re.fullmatch(r"openmind(-[a-z]+)?>=2\.0,<2\.1", req), f"{package}: {req!r} is not >=2.0,<2.1"
