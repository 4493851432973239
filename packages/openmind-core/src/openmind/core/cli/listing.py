"""``openmind list``: the support matrix, built from the registry without importing frameworks."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from openmind.core.cli.command import Command
from openmind.core.requirements import RequirementStatus, check, requirement_name
from openmind.core.tables import markdown_table, text_table

if TYPE_CHECKING:
    from openmind.core.registry import Registry
    from openmind.core.specs import Spec

KINDS = {
    "tasks": "task",
    "pipelines": "pipeline",
    "trainers": "trainer",
    "models": "model-group",
    "templates": "template",
    "datasets": "dataset",
    "formats": "dataset-format",
    "hubs": "hub",
    "commands": "command",
    "frameworks": "framework",
    "argument-groups": "argument-group",
    "routes": "route",
    "eval-kinds": "eval-kind",
    "dialects": "config-dialect",
    "rewards": "reward",
    "plugins": None,
}


def provider(spec: Spec) -> str:
    c = spec.component
    return f"{c.distribution} {c.version}".strip() if c else "?"


def requirement_text(spec: Spec, with_install: bool = True) -> str:
    parts = []
    for req in spec.requires:
        status = check(req)
        if status.satisfied:
            parts.append(f"{req} (ok {status.installed})")
        elif with_install:
            parts.append(f"{req} (MISSING: {status.install_command})")
        else:
            parts.append(req)
    return ", ".join(parts)


def rows_for(registry: Registry, what: str, framework: str | None, installed: bool = True):
    """Headers and rows of one section. ``installed=False`` leaves out machine-dependent state."""
    req = (lambda s: requirement_text(s)) if installed else (lambda s: ", ".join(s.requires))
    if what == "tasks":
        frameworks = list(registry.framework_names())
        headers = ["task", "kind", "domain", "aliases", "wrapper", *frameworks, "default model", "provided by"]
        rows = []
        for t in sorted(registry.tasks(), key=lambda t: (t.kind_of, t.name)):
            impls = registry.all("pipeline" if t.kind_of == "inference" else "trainer")
            wrapper_kind = "pipeline-wrapper" if t.kind_of == "inference" else "trainer-wrapper"
            wrapper = registry.find(wrapper_kind, t.name)
            per_fw = {
                fw: ", ".join(sorted(p.backend for p in impls if p.task == t.name and p.framework == fw))
                for fw in frameworks
            }
            if framework and not per_fw.get(framework):
                continue
            rows.append(
                [
                    t.name,
                    t.kind_of,
                    t.domain,
                    ", ".join(t.aliases),
                    "yes" if wrapper else "MISSING",
                    *[per_fw[fw] or "-" for fw in frameworks],
                    ", ".join(
                        (f"{d.framework}: " if len(t.default_models) > 1 else "") + d.label() for d in t.default_models
                    )
                    or "-",
                    provider(t),
                ]
            )
        return headers, rows
    if what in ("pipelines", "trainers"):
        headers = ["task", "framework", "backend", "requires", "note", "provided by"]
        specs = sorted(registry.all(KINDS[what]), key=lambda p: (p.task, p.framework, -p.priority))
        rows = [
            [p.task, p.framework, p.backend, req(p), p.note, provider(p)]
            for p in specs
            if not framework or p.framework == framework
        ]
        if what == "trainers":
            headers.insert(3, "finetuning")
            for row, p in zip(rows, [p for p in specs if not framework or p.framework == framework]):
                row.insert(3, ", ".join(p.finetuning_types))
        return headers, rows
    if what == "models":
        headers = [
            "group",
            "tasks",
            "template",
            "architectures / model_type",
            "frameworks",
            "lora targets",
            "provided by",
        ]
        rows = [
            [
                g.name,
                ", ".join(g.tasks),
                g.template,
                ", ".join(g.architectures + g.model_types),
                ", ".join(registry.group_frameworks(g)),
                ", ".join(g.lora_targets),
                provider(g),
            ]
            for g in sorted(registry.all("model-group"), key=lambda g: g.name)
            if not framework or framework in registry.group_frameworks(g)
        ]
        return headers, rows
    if what == "templates":
        owners: dict[str, list[str]] = {}
        for g in registry.all("model-group"):
            owners.setdefault(g.template, []).append(g.name)
        headers = ["template", "kind", "model group", "official revisions", "aliases", "stop words", "provided by"]
        rows = [
            [
                t.name,
                t.template_kind,
                ", ".join(owners.get(t.name, [])),
                "; ".join(f"{label} ({digest[:8]})" for label, digest in getattr(t, "revisions", ())),
                ", ".join(getattr(t, "aliases", ())),
                " ".join(t.stop_words),
                provider(t),
            ]
            for t in sorted(registry.all("template"), key=lambda t: t.name)
        ]
        return headers, rows
    if what == "datasets":
        headers = ["format", "task", "columns", "provided by"]
        rows = [
            [d.name, d.task, ", ".join(d.columns), provider(d)]
            for d in sorted(registry.all("dataset"), key=lambda d: d.name)
        ]
        return headers, rows
    if what == "formats":
        headers = ["formatting", "converts to", "columns", "provided by"]
        rows = [
            [d.name, d.produces or d.name, ", ".join(d.columns), provider(d)]
            for d in sorted(registry.all("dataset-format"), key=lambda d: d.name)
        ]
        return headers, rows
    if what == "hubs":
        headers = ["hub", "prefix", "endpoint variable", "requires", "provided by"]
        rows = [
            [h.name, f"{h.prefix}::" if h.prefix else "", h.endpoint_env, req(h), provider(h)]
            for h in sorted(registry.all("hub"), key=lambda h: h.name)
        ]
        return headers, rows
    if what == "commands":
        headers = ["command", "aliases", "help", "provided by"]
        rows = [
            [c.name, ", ".join(c.aliases), c.help, provider(c)]
            for c in sorted(registry.all("command"), key=lambda c: c.name)
        ]
        return headers, rows
    if what == "frameworks":
        headers = ["framework", "name", "aliases", "detected by", "auto order", "provided by"]
        rows = [
            [f.name, f.display_name, ", ".join(f.aliases), ", ".join(f.modules), str(i + 1), provider(f)]
            for i, f in enumerate(registry.frameworks())
        ]
        return headers, rows
    if what == "argument-groups":
        headers = ["group", "verbs", "impl", "provided by"]
        rows = [
            [g.name, ", ".join(g.verbs), g.impl, provider(g)]
            for g in sorted(registry.all("argument-group"), key=lambda g: g.name)
        ]
        return headers, rows
    if what == "routes":
        headers = ["route", "methods", "impl", "provided by"]
        rows = [[r.path, ", ".join(r.methods), r.impl, provider(r)] for r in registry.routes()]
        return headers, rows
    if what == "eval-kinds":
        headers = ["kind", "needs", "description", "provided by"]
        rows = [
            [k.name, k.capability, k.description, provider(k)]
            for k in sorted(registry.all("eval-kind"), key=lambda k: k.name)
        ]
        return headers, rows
    if what == "dialects":
        headers = ["dialect", "aliases", "priority", "description", "provided by"]
        rows = [
            [d.name, ", ".join(d.aliases), str(d.priority), d.description, provider(d)]
            for d in sorted(registry.all("config-dialect"), key=lambda d: (-d.priority, d.name))
        ]
        return headers, rows
    if what == "rewards":
        headers = ["reward", "parameter", "description", "provided by"]
        rows = [
            [r.name, r.takes_param, r.description, provider(r)]
            for r in sorted(registry.all("reward"), key=lambda r: r.name)
        ]
        return headers, rows
    raise ValueError(what)


def plugin_rows():
    from openmind.core.plugins import get_registry

    headers = ["plugin", "distribution", "version", "loaded", "error"]
    rows = [
        [p.name, p.component.distribution, p.component.version, "yes" if p.loaded else "NO", p.error]
        for p in get_registry().plugin_infos
    ]
    return headers, rows


def _dump(out: dict) -> None:
    # indented for people at a terminal; compact (C encoder, ~5x faster) when piped to a program
    # (json.dumps, not json.dump: only a one-shot encode without indent uses the C encoder)
    print(json.dumps(out, indent=2 if sys.stdout.isatty() else None, default=str))


def as_json(registry: Registry, sections: list[str], framework: str | None) -> dict:
    out: dict = {}
    for section in sections:
        if section == "plugins":
            out["plugins"] = [p.to_dict() for p in registry.plugin_infos]
            continue
        items = []
        for spec in registry.all(KINDS[section]):
            if framework and getattr(spec, "framework", framework) != framework:
                continue
            if framework and section == "models" and framework not in spec.frameworks:
                continue
            data = spec.to_dict()
            data["requirements"] = [check(r).to_dict() for r in spec.requires]
            items.append(data)
        out[section] = items
    out["problems"] = [p.to_dict() for p in registry.problems]
    return out


def as_json_data(data: dict, sections: list[str], framework: str | None) -> dict | None:
    """:func:`as_json` from the registry snapshot's plain data (see :mod:`openmind.core.snapshot`):
    the same output without building a registry, which keeps ``openmind list --json`` fast.
    ``None`` when the snapshot records registry problems (the registry path reports them)."""
    if data.get("problems"):
        return None
    by_kind: dict[str, list[dict]] = {}
    for spec in data["specs"]:
        by_kind.setdefault(spec["kind"], []).append(spec)
    statuses = data.get("requirements", {})

    def status(req: str) -> dict:
        known = statuses.get(req)
        if known is None:
            return check(req).to_dict()
        return RequirementStatus(req, requirement_name(req), known[0], bool(known[1])).to_dict()

    out: dict = {}
    for section in sections:
        if section == "plugins":
            out["plugins"] = data["plugins"]
            continue
        items = []
        for spec in by_kind.get(KINDS[section], []):
            if framework and spec.get("framework", framework) != framework:
                continue
            if framework and section == "models" and framework not in spec["frameworks"]:
                continue
            items.append(dict(spec, requirements=[status(r) for r in spec.get("requires", ())]))
        out[section] = items
    out["problems"] = []
    return out


class ListCommand(Command):
    description = (
        "Show everything registered by the installed openmind packages and plugins: which package "
        "provides it, its relations, and whether each requirement is installed (or the command that installs it)."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("what", nargs="?", choices=list(KINDS), help="section to show (default: all)")
        parser.add_argument("--framework", choices=["pt", "ms"], help="only what this framework implements")
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument("--markdown", action="store_true", help="Markdown tables")
        parser.add_argument("--check", action="store_true", help="exit non-zero on any registry inconsistency")

    def run(self, args: argparse.Namespace) -> int:
        sections = [args.what] if args.what else list(KINDS)
        if args.json and not args.check:
            from openmind.core import snapshot
            from openmind.core.entrypoints import DEFAULT_PLUGINS

            data = snapshot.load_data(DEFAULT_PLUGINS)
            out = as_json_data(data, sections, args.framework) if data is not None else None
            if out is not None:
                _dump(out)
                return 0
        from openmind.core.plugins import get_registry

        registry = get_registry()
        if args.json:
            _dump(as_json(registry, sections, args.framework))
        elif not args.check:
            render = markdown_table if args.markdown else text_table
            for section in sections:
                headers, rows = plugin_rows() if section == "plugins" else rows_for(registry, section, args.framework)
                print(f"\n{section.upper()} ({len(rows)})" if not args.markdown else f"\n## {section}\n")
                print(render(headers, rows) if rows else "(none)")
        if registry.problems:
            stream = sys.stderr if not args.check else sys.stdout
            print(f"\n{len(registry.problems)} registry problem(s):", file=stream)
            for problem in registry.problems:
                comp = f" [{problem.component}]" if problem.component else ""
                print(f"  {problem.code}{comp}: {problem.message}", file=stream)
            return 1 if args.check else 0
        if args.check:
            counts = ", ".join(f"{len(registry.all(k))} {s}" for s, k in KINDS.items() if k)
            print(f"registry ok: {counts}")
        return 0
