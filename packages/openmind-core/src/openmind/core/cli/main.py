"""Entry point of the ``openmind`` CLI.

Verbs come from the registry (:class:`~openmind.core.specs.CommandSpec`), so a plugin adds a
verb without touching this file. Only the verb being run is imported; ``openmind --help`` and
``openmind list`` import no framework. ``openmind --help`` reads the command list straight from
the registry snapshot (:func:`openmind.core.snapshot.command_rows`) and imports neither the
registry nor the error catalogue unless something goes wrong.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from openmind.core.version import __version__

PROG = "openmind"
DESCRIPTION = (
    "openmind: download, run, prepare data for, train, evaluate, deploy and export models "
    "on PyTorch or MindSpore, from one CLI."
)
EPILOG = """quick tour:
  openmind quickstart                   train, chat with and serve a tiny model end to end
  openmind list [tasks|models|...]      what is supported, by which package, what is missing
  openmind run chat --model DIR --input "Hello"
  openmind train sft.yaml --learning-rate 1e-4
  openmind deploy --model RUN_DIR --port 8000
  openmind env                          versions, frameworks and devices (paste it in bug reports)

Errors print a code (OM-...), the component at fault, a hint and the path of a full log;
add --debug to see the traceback."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse usage errors become coded errors
        from openmind.core.errors import A_UNKNOWN_KEY

        raise A_UNKNOWN_KEY.error(f"{self.prog}: {message}", hint=f"See `{self.prog} --help`.")


class _VersionAction(argparse.Action):
    """``--version``: every installed openmind distribution's version (read only when asked)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from openmind.core.distributions import version_text

        print(version_text())
        parser.exit()


class _Verb:
    """One command as the parser needs it: from the snapshot's plain data (no registry, no spec
    classes) or from a :class:`~openmind.core.specs.CommandSpec` when there is no snapshot."""

    def __init__(self, name: str, aliases: list[str], help: str, impl: str, requires: list[str], component: Any):
        self.name, self.aliases, self.help = name, list(aliases), help
        self.impl, self.requires, self.component = impl, tuple(requires), component

    def owner(self) -> Any:
        """The registering component as a :class:`~openmind.core.errors.Component` (or ``None``);
        built on demand, so ``--help`` never imports the error catalogue."""
        from openmind.core.errors import Component

        return Component(**self.component) if isinstance(self.component, dict) else self.component

    def load(self) -> Any:
        from openmind.core.lazy import import_string

        return import_string(
            self.impl, feature=f"command {self.name!r}", requires=self.requires, component=self.owner()
        )

    @property
    def own(self) -> bool:
        """Registered by the core (the `openmind` distribution) itself (no plugin to blame for errors)."""
        c = self.component
        dist = c.get("distribution") if isinstance(c, dict) else getattr(c, "distribution", None)
        return c is None or dist == "openmind"


def verbs() -> list[_Verb]:
    """Every command, sorted: from a valid registry snapshot when there is one (what keeps
    ``openmind --help`` and ``openmind list`` from importing the registry), else the registry."""
    from openmind.core import snapshot
    from openmind.core.entrypoints import DEFAULT_PLUGINS

    rows = snapshot.command_rows(DEFAULT_PLUGINS)
    if rows is None:
        from openmind.core.plugins import get_registry

        rows = [
            {
                "name": s.name,
                "aliases": s.aliases,
                "help": s.help,
                "impl": s.impl,
                "requires": s.requires,
                "component": s.component,
            }
            for s in get_registry().all("command")
        ]
    return sorted((_Verb(**row) for row in rows), key=lambda v: v.name)


def build_parser(selected: str | None):
    parser = _Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument(
        "--version", action=_VersionAction, help="print the version of every installed openmind distribution"
    )
    parser.add_argument("--debug", action="store_true", help="print tracebacks of errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands = {}
    registered = verbs()
    for verb in registered:
        is_selected = selected is not None and (selected == verb.name or selected in verb.aliases)
        if is_selected:
            command = verb.load()()
            command.verb = verb.name
            sub = subparsers.add_parser(
                verb.name,
                aliases=verb.aliases,
                help=verb.help,
                description=command.description or verb.help,
                epilog=command.epilog or None,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                allow_abbrev=False,
            )
            command.configure(sub)
            sub.add_argument(
                "--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks of errors"
            )
            commands[verb.name] = (verb, command)
        else:
            subparsers.add_parser(verb.name, aliases=verb.aliases, help=verb.help, add_help=False)
    _add_missing_verbs(subparsers, registered, selected)
    return parser, commands


def _add_missing_verbs(subparsers: Any, registered: list[_Verb], selected: str | None) -> None:
    """Verbs of first-party distributions that are not installed: listed by ``--help`` with the
    package that adds them; running one is OM-X001 naming the install command (never argparse's
    "invalid choice")."""
    from openmind.core.distributions import FIRST_PARTY, install_hint

    have = {n for v in registered for n in (v.name, *v.aliases)}
    for dist, info in FIRST_PARTY.items():
        for name in info["commands"]:  # type: ignore[attr-defined]
            if name in have:
                continue
            if name == selected:
                from openmind.core.errors import X_MISSING
                from openmind.core.requirements import installed_version

                ver = installed_version(dist)
                state = (
                    f"{dist} {ver} is installed but its plugin did not register it (disabled, or failed to load: "
                    "see `openmind list plugins`)"
                    if ver
                    else "which is not installed"
                )
                raise X_MISSING.error(
                    f"the command {name!r} is added by {dist} ({info['adds']}), {state}",
                    hint=f"Install it: {install_hint(dist)}",
                )
            subparsers.add_parser(name, help=f"(not installed: {install_hint(dist)})", add_help=False)


def _first_positional(argv: list[str]) -> str | None:
    for token in argv:
        if not token.startswith("-"):
            return token
    return None


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def split_argv(parser: Any, commands: dict, argv: list[str]) -> tuple[list[str], list[str]]:
    """Normalise the verb's options before argparse sees them; returns (argv, extra overrides).

    * ``--output_dir`` is ``--output-dir`` (underscore spellings of every flag);
    * ``--learning-rate -1e-4``: a negative number is the option's value, not an option;
    * for verbs that take the unified arguments, options argparse does not know (another tool's
      keys such as ``--model_name_or_path``) and ``key=value`` tokens (``llamafactory-cli`` style)
      are set aside and resolved by :func:`openmind.core.args.parse`, which maps them through a
      config dialect or reports them all at once with a suggestion.
    """
    selected = _first_positional(argv)
    if selected is None:
        return argv, []
    sub, command = None, None
    subparsers = parser._subparsers
    for action in subparsers._group_actions if subparsers is not None else ():
        sub = getattr(action, "choices", {}).get(selected)
        if sub is not None:
            break
    for _verb, cmd in commands.values():
        if selected in (_verb.name, *_verb.aliases):
            command = cmd
    if sub is None:
        return argv, []
    takes_keys = bool(getattr(command, "groups", ()))
    start = argv.index(selected) + 1
    kept, extra = argv[:start], []
    i = start
    while i < len(argv):
        token = argv[i]
        if token == "--":
            kept += argv[i:]
            break
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if token.startswith("--"):
            key, eq, value = token[2:].partition("=")
            dashed = "--" + key.replace("_", "-")
            if dashed in sub._option_string_actions:
                if not eq and nxt is not None and nxt.startswith("-") and _is_number(nxt):
                    kept.append(f"{dashed}={nxt}")
                    i += 2
                    continue
                if (
                    not eq
                    and nxt is not None
                    and not nxt.startswith("-")
                    and sub._option_string_actions[dashed].nargs is None
                ):
                    kept += [dashed, nxt]  # the option's own value (e.g. --set size=64x64): never a key=value override
                    i += 2
                    continue
                kept.append(dashed + (eq + value if eq else ""))
            elif takes_keys:
                extra.append(token)
                if not eq and nxt is not None and (not nxt.startswith("-") or _is_number(nxt)):
                    extra.append(nxt)
                    i += 1
            else:
                kept.append(token)
        elif takes_keys and not token.startswith("-") and "=" in token and token.split("=", 1)[0].isidentifier():
            extra.append(token)
        else:
            kept.append(token)
        i += 1
    return kept, extra


def report(exc: BaseException, debug: bool) -> int:
    import traceback

    from openmind.core.errors import OpenMindError
    from openmind.core.logs import write_log

    tb = "".join(traceback.format_exception(exc))
    log = write_log(f"openmind {__version__}\nargv: {sys.argv}\n\n{tb}")
    if isinstance(exc, OpenMindError):
        component = f" [{exc.component}]" if exc.component else ""
        print(f"error {exc.code}{component}: {exc.message}", file=sys.stderr)
        if exc.location:
            print(f"  at: {exc.location}", file=sys.stderr)
        if exc.hint:
            print(f"  hint: {exc.hint}", file=sys.stderr)
    else:
        print(f"internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        print("  hint: this is a bug in openmind or a plugin; please report it with the log below.", file=sys.stderr)
    if log:
        print(f"  log: {log}", file=sys.stderr)
    if debug:
        print(tb, file=sys.stderr)
    return 2 if getattr(exc, "code", "").startswith("OM-A") else 1


def main(argv: list[str] | None = None, *, prefer_dialect: str | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        selected = _first_positional(argv)
        parser, commands = build_parser(selected)
        argv, extra = split_argv(parser, commands, argv)
        args = parser.parse_args(argv)
        args._extra_overrides = extra
        args._prefer_dialect = prefer_dialect
        if not args.command:
            parser.print_help()
            return 0
        name = args.command
        for verb, command in commands.values():
            if name == verb.name or name in verb.aliases:
                if verb.own:
                    return int(command.run(args) or 0)
                from openmind.core.plugins import attributed

                with attributed(verb.owner()):
                    return int(command.run(args) or 0)
        parser.error(f"unknown command {name!r}")
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - coded errors and last-resort reporting alike
        return report(exc, debug)


if __name__ == "__main__":  # pragma: no cover
    from openmind.core.exiting import exit_process

    exit_process(main())  # sys.exit, or os._exit after the atexit functions when a plugin asks (torchrun workers)
