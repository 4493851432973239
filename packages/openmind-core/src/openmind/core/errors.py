"""Coded errors.

Every user-facing failure is an :class:`OpenMindError` carrying a stable code
(``OM-<area><nnn>``), a message, a hint saying how to fix it, the component at fault
(distribution, version, plugin) and, where there is one, a location (file, line, field).

Codes are *declared* with :func:`define` in the ``errors`` module of the package that owns
them; the catalogue (``docs/errors.md``) is generated from these declarations by
``openmind docs``. A code is never reused for another meaning.

Example::

    from openmind.core.errors import define, DataError

    D_BAD_ROW = define("OM-D001", "Invalid row", "Fix the row or pass --on-error skip.", DataError)
    raise D_BAD_ROW.error("field 'messages' is missing", location="train.jsonl:12")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_CODE_RE = re.compile(r"^OM-[A-Z]{1,2}\d{3}$")


@dataclass(frozen=True)
class Component:
    """Who is at fault: a distribution (with version) and, optionally, a plugin name."""

    distribution: str
    version: str = ""
    plugin: str = ""

    def __str__(self) -> str:
        text = self.distribution + (f" {self.version}" if self.version else "")
        if self.plugin and self.plugin != self.distribution:
            text += f" (plugin {self.plugin!r})"
        return text


class OpenMindError(Exception):
    """Base class of every error openmind raises on purpose.

    :param code: a declared :class:`ErrorCode` (or its string form).
    :param message: what went wrong, concretely (name the value, file, field).
    :param hint: how to fix it; defaults to the code's hint.
    :param component: the distribution / plugin at fault.
    :param location: where, e.g. ``"data/train.jsonl:12 field 'messages'"``.
    """

    area = ""

    def __init__(
        self,
        code: ErrorCode | str,
        message: str,
        *,
        hint: str | None = None,
        component: Component | None = None,
        location: str | None = None,
    ) -> None:
        if isinstance(code, str):
            code = CODES.get(code) or ErrorCode(code, "", "", type(self))
        self.code = code.code
        self.title = code.title
        self.message = message
        self.hint = hint if hint is not None else code.hint
        self.component = component
        self.location = location
        super().__init__(message)

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.location:
            text += f" (at {self.location})"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "title": self.title,
            "message": self.message,
            "hint": self.hint,
            "location": self.location,
            "component": str(self.component) if self.component else None,
        }


class RegistryError(OpenMindError):
    area = "R"


class PluginError(OpenMindError):
    area = "P"


class ArgumentError(OpenMindError, ValueError):
    area = "A"


class DependencyError(OpenMindError, ImportError):
    area = "X"


class ModelError(OpenMindError):
    area = "M"


class TemplateError(OpenMindError):
    area = "TP"


class PipelineError(OpenMindError):
    area = "I"


class DataError(OpenMindError, ValueError):
    area = "D"


class HubError(OpenMindError):
    area = "H"


class TrainingError(OpenMindError):
    area = "T"


class ServingError(OpenMindError):
    area = "S"


class EvalError(OpenMindError):
    area = "E"


class DeviceError(OpenMindError):
    area = "V"


@dataclass(frozen=True)
class ErrorCode:
    """A declared error code; ``code.error(msg, ...)`` builds the matching exception."""

    code: str
    title: str
    hint: str
    cls: type[OpenMindError] = OpenMindError
    module: str = field(default="", compare=False)

    def error(self, message: str, **kwargs) -> OpenMindError:
        return self.cls(self, message, **kwargs)

    def __str__(self) -> str:
        return self.code


CODES: dict[str, ErrorCode] = {}


def define(code: str, title: str, hint: str = "", cls: type[OpenMindError] = OpenMindError) -> ErrorCode:
    """Declare a stable error code. Declaring one code twice with another meaning is a bug."""
    import sys

    if not _CODE_RE.match(code):
        raise ValueError(f"error code {code!r} does not match OM-<area><nnn>")
    module = sys._getframe(1).f_globals.get("__name__", "")
    existing = CODES.get(code)
    if existing is not None and (existing.title, existing.module) != (title, module):
        raise ValueError(f"error code {code} declared twice: {existing.module} and {module}")
    declared = ErrorCode(code, title, hint, cls, module)
    CODES[code] = declared
    return declared


# ---- codes owned by the core (openmind) -------------------------------------------------------

R_DUPLICATE = define(
    "OM-R001",
    "Duplicate registration",
    "Two plugins register the same name; disable one with OPENMIND_DISABLE_PLUGINS=<name>.",
    RegistryError,
)
R_DANGLING = define(
    "OM-R002",
    "Dangling reference",
    "A spec names something no installed plugin registers; install the plugin that provides it "
    "or fix the name in the spec.",
    RegistryError,
)
R_UNKNOWN_TASK = define(
    "OM-R003",
    "Spec for an unknown task",
    "Register the task first (openmind_register_tasks) or fix the task name; `openmind list tasks` "
    "shows the known ones.",
    RegistryError,
)
R_NOT_FOUND = define(
    "OM-R004",
    "Name not registered",
    "Run `openmind list` to see what is registered and which package provides it.",
    RegistryError,
)
R_BAD_SPEC = define(
    "OM-R005",
    "Malformed spec",
    "Specs name implementations as 'module:attr' and requirements as requirement strings.",
    RegistryError,
)
R_RELATION = define(
    "OM-R006",
    "Relation violated",
    "Each task has one wrapper, each group one template and each template one group; fix the "
    "plugin that breaks the relation.",
    RegistryError,
)
R_IMPORT = define(
    "OM-R007",
    "Implementation cannot be imported",
    "The spec's 'module:attr' does not resolve; reinstall the package that provides it.",
    RegistryError,
)
P_LOAD = define(
    "OM-P001",
    "Plugin failed to load",
    "Reinstall or upgrade the plugin, or skip it with OPENMIND_DISABLE_PLUGINS=<name>.",
    PluginError,
)
P_HOOK = define(
    "OM-P002",
    "Plugin hook raised",
    "The plugin's registration hook failed; upgrade it or skip it with OPENMIND_DISABLE_PLUGINS=<name>.",
    PluginError,
)
P_UNKNOWN_HOOK = define(
    "OM-P003",
    "Unknown hook implementation",
    "The plugin implements a hook that openmind does not define (a typo or a newer plugin API); "
    "check the hook name against openmind/core/hookspecs.py.",
    PluginError,
)
P_RAISED = define(
    "OM-P004",
    "Error inside a plugin",
    "The error escaped plugin code; report it to the plugin's authors with the log file.",
    PluginError,
)
A_UNKNOWN_KEY = define(
    "OM-A001",
    "Unknown argument",
    "Check the spelling; `openmind <verb> --help` lists every accepted key.",
    ArgumentError,
)
A_BAD_VALUE = define(
    "OM-A002",
    "Invalid argument value",
    "Pass a value of the documented type and choices (`openmind <verb> --help`).",
    ArgumentError,
)
A_BAD_FILE = define(
    "OM-A003",
    "Unreadable argument file",
    "The YAML/JSON argument file must be a mapping of key: value; check the path and syntax.",
    ArgumentError,
)
A_MISSING = define(
    "OM-A004",
    "Missing required argument",
    "Pass the argument on the command line (--key value) or in the YAML file.",
    ArgumentError,
)
X_MISSING = define(
    "OM-X001",
    "Missing dependency",
    "Install the package named in the message.",
    DependencyError,
)
X_FRAMEWORK = define(
    "OM-X002",
    "No usable framework",
    'Install a backend: pip install "openmind[pt]" (PyTorch) or "openmind[ms]" (MindSpore).',
    DependencyError,
)
X_CONFLICT = define(
    "OM-X003",
    "Frameworks cannot share this process",
    "Run the other framework in its own process (a separate `openmind` command or venv).",
    DependencyError,
)
I_UNKNOWN_TASK = define(
    "OM-I001",
    "Unknown task",
    "`openmind list tasks` shows the known tasks and their aliases.",
    PipelineError,
)
I_NO_PIPELINE = define(
    "OM-I002",
    "No pipeline for this task and framework",
    "`openmind list pipelines` shows which frameworks implement each task; install the backend "
    "or choose another framework.",
    PipelineError,
)
I_BAD_INPUT = define(
    "OM-I003",
    "Invalid pipeline input",
    "Check the input type the task expects (`openmind list tasks`).",
    PipelineError,
)
I_TASK_UNKNOWN_FOR_MODEL = define(
    "OM-I004",
    "Cannot infer the task from the model",
    "Pass the task explicitly: pipeline('chat', model=...) or `openmind run TASK --model ...`.",
    PipelineError,
)
