"""An argument group of the test plugin: its flags appear in ``openmind run --help`` and
``openmind deploy --help`` (recipe "an argument group" of docs/EXTENDING.md)."""

from __future__ import annotations

from dataclasses import dataclass

from openmind.core.args import arg


@dataclass
class PoemArguments:
    rhyme_scheme: str = arg("AABB", "Rhyme scheme of generated poems.", ("AABB", "ABAB", "free"))
    poem_lines: int = arg(4, "Lines per poem.")
