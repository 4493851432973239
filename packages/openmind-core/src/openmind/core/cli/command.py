"""Base class of CLI verbs. A verb is registered as a :class:`~openmind.core.specs.CommandSpec`
whose ``impl`` names a :class:`Command` subclass; it is imported only when the verb runs."""

from __future__ import annotations

import abc
import argparse
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from openmind.core import args as A


class Command(abc.ABC):
    #: unified argument groups this verb accepts (see :mod:`openmind.core.args`).
    groups: ClassVar[tuple[str, ...]] = ()
    #: whether the verb takes an optional positional CONFIG file (YAML/JSON) or run folder.
    takes_config: ClassVar[bool] = False
    #: longer description shown by ``openmind VERB --help``.
    description: ClassVar[str] = ""
    epilog: ClassVar[str] = ""
    #: the verb's registered name (set by the CLI before :meth:`configure`): registered argument
    #: groups naming this verb (``ArgumentGroupSpec.verbs``) are added to :attr:`groups`.
    verb: str = ""

    def all_groups(self) -> tuple[str, ...]:
        """:attr:`groups` plus the registered argument groups for this verb."""
        if not self.verb:
            return self.groups
        from openmind.core import snapshot
        from openmind.core.entrypoints import DEFAULT_PLUGINS

        data = snapshot.load_data(DEFAULT_PLUGINS)  # fast path: no registry for verbs without groups
        if data is not None:
            names = [
                s["name"] for s in data["specs"] if s["kind"] == "argument-group" and self.verb in s.get("verbs", ())
            ]
        else:
            from openmind.core.plugins import get_registry

            names = [g.name for g in get_registry().argument_groups_for(self.verb)]
        return self.groups + tuple(n for n in names if n not in self.groups)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Add verb-specific options; the unified groups are added by :meth:`configure`."""

    def configure(self, parser: argparse.ArgumentParser) -> None:
        if self.takes_config:
            parser.add_argument("config", nargs="?", help="YAML/JSON argument file, or a run folder to start from.")
        self.add_arguments(parser)
        groups = self.all_groups()
        if groups:
            from openmind.core import args as A

            A.add_to_parser(parser, groups)

    def resolve(self, ns: argparse.Namespace, groups: tuple[str, ...] | None = None) -> A.Namespace:
        """Resolve the unified arguments from the config file / run folder and the flags given."""
        from openmind.core import args as A

        groups = groups or self.all_groups()
        keys = {f for g in groups for f in A.group_class(g).__dataclass_fields__}
        given: dict[str, Any] = {}
        for key, value in vars(ns).items():
            if key in keys:
                given[key] = "true" if value is None else value
        config = getattr(ns, "config", None)
        base = None
        if config is not None:
            import os

            if os.path.isdir(config):
                base = A.load_run(config)
                if base is None:
                    # a plain model folder given positionally
                    given.setdefault("model", config)
                config = None
        return A.parse(groups, config=config, overrides=given, base=base)

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> int:
        """Do the work; return the exit code."""
