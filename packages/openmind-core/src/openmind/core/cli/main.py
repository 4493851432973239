"""Entry point of the ``openmind`` CLI.

Verbs come from the registry (:class:`~openmind.core.specs.CommandSpec`), so a plugin adds a
verb without touching this file. Only the verb being run is imported; ``openmind --help`` and
``openmind list`` import no framework.
"""

from __future__ import annotations

import argparse
import sys
import traceback

from openmind.core.errors import A_UNKNOWN_KEY, OpenMindError
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
        raise A_UNKNOWN_KEY.error(f"{self.prog}: {message}", hint=f"See `{self.prog} --help`.")


def build_parser(selected: str | None):
    from openmind.core.plugins import get_registry

    registry = get_registry()
    parser = _Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"openmind {__version__}")
    parser.add_argument("--debug", action="store_true", help="print tracebacks of errors")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands = {}
    for spec in sorted(registry.all("command"), key=lambda s: s.name):
        is_selected = selected is not None and (selected == spec.name or selected in spec.aliases)
        if is_selected:
            cls = spec.load()
            command = cls()
            sub = subparsers.add_parser(
                spec.name,
                aliases=list(spec.aliases),
                help=spec.help,
                description=command.description or spec.help,
                epilog=command.epilog or None,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                allow_abbrev=False,
            )
            command.configure(sub)
            sub.add_argument(
                "--debug", action="store_true", default=argparse.SUPPRESS, help="print tracebacks of errors"
            )
            commands[spec.name] = (spec, command)
        else:
            subparsers.add_parser(spec.name, aliases=list(spec.aliases), help=spec.help, add_help=False)
    return parser, commands


def _first_positional(argv: list[str]) -> str | None:
    for token in argv:
        if not token.startswith("-"):
            return token
    return None


def report(exc: BaseException, debug: bool) -> int:
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


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        selected = _first_positional(argv)
        parser, commands = build_parser(selected)
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 0
        name = args.command
        for spec, command in commands.values():
            if name == spec.name or name in spec.aliases:
                import contextlib

                from openmind.core.plugins import attributed

                own = spec.component is None or spec.component.distribution == "openmind-core"
                with contextlib.nullcontext() if own else attributed(spec.component):
                    return int(command.run(args) or 0)
        parser.error(f"unknown command {name!r}")
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OpenMindError as exc:
        return report(exc, debug)
    except Exception as exc:  # noqa: BLE001 - last-resort reporting
        return report(exc, debug)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
