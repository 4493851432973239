"""Typed specs: what plugins register.

A spec is data. It names its implementation as a ``"module:attr"`` string and its needs as
requirement strings (``"torch>=2.1"``), so the whole support matrix can be listed without
importing a framework. :meth:`Spec.load` imports the implementation, and only then.

Relations (validated by :class:`openmind.core.registry.Registry`):

=================  ==========================  ===========================================
spec               key                         relation
=================  ==========================  ===========================================
TaskSpec           name                        top concept
PipelineWrapper    task                        1:1 with a task
PipelineSpec       (task, framework, backend)  a wrapper has one pipeline per framework
TrainerWrapper     task                        1:1 with a (training) task
TrainerSpec        (task, framework, backend)  a trainer wrapper has one trainer per framework
ModelGroupSpec     name                        N:M with tasks; names exactly one template
TemplateSpec       name                        1:1 with a model group
DatasetSpec        task                        1:1 with a (training) task: its standard format
HubSpec            name                        pluggable hubs
CommandSpec        name                        CLI verbs
FrameworkSpec      name                        a framework (pt, ms, ...): availability, auto order
ArgumentGroupSpec  name                        a unified argument group added to some verbs
RouteSpec          (path, methods)             an HTTP route of ``openmind deploy``'s server
EvalKindSpec       name                        a kind of evaluation task (how items are scored)
ConfigDialectSpec  name                        other tools' config keys mapped onto ours
RewardSpec         name                        a reward function of online RL stages (grpo)
=================  ==========================  ===========================================
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

from openmind.core.errors import Component

#: the frameworks openmind-core itself registers (see :class:`FrameworkSpec`); the registry holds
#: the full, extensible list (``registry.framework_names()``).
FRAMEWORKS = ("pt", "ms")
_IMPL_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True)
class Spec:
    """Common fields. ``component`` is filled in by the registry with the registering plugin."""

    kind: ClassVar[str] = "spec"
    #: "module:attr" of the implementation, or "" for pure metadata specs.
    impl: str = field(default="", kw_only=True)
    #: requirement strings the implementation needs at use time.
    requires: tuple[str, ...] = field(default=(), kw_only=True)
    description: str = field(default="", kw_only=True)
    component: Component | None = field(default=None, kw_only=True, compare=False)

    @property
    def key(self) -> Any:
        return self.name  # type: ignore[attr-defined]

    def label(self) -> str:
        key = self.key
        return "/".join(key) if isinstance(key, tuple) else str(key)

    def load(self) -> Any:
        """Import and return the implementation. Raises OM-R007 / OM-X001 with the install hint."""
        from openmind.core.lazy import import_string

        return import_string(
            self.impl, feature=f"{self.kind} {self.label()!r}", requires=self.requires, component=self.component
        )

    def to_dict(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "component":
                value = (
                    {"distribution": value.distribution, "version": value.version, "plugin": value.plugin}
                    if value
                    else None
                )
            elif isinstance(value, tuple):
                value = [asdict(v) if is_dataclass(v) else v for v in value]
            out[f.name] = value
        return out


@dataclass(frozen=True)
class DefaultModel:
    """A task's default model: a hub id pinned to a revision, for one framework (and backend).

    Used by ``pipeline(task)`` when no model is given (pulled on demand through the hub layer),
    shown by ``openmind list tasks``. openMind 1.0's ``native_pipelines.json`` is the source of
    the defaults registered by openmind's own plugins.
    """

    #: a hub id with its hub prefix, e.g. ``"om::PyTorch-NPU/bert_base_uncased"``
    model_id: str
    revision: str = ""
    framework: str = "pt"
    backend: str = ""

    def label(self) -> str:
        return f"{self.model_id}@{self.revision}" if self.revision else self.model_id


@dataclass(frozen=True)
class TaskSpec(Spec):
    """A task: ``chat``, ``text2emb``, ``sft`` ...

    :param kind_of: ``"inference"`` (has a PipelineWrapper) or ``"training"`` (has a
        TrainerWrapper and a Dataset format).
    :param default_models: models ``pipeline(task)`` uses when none is given, in order of
        preference (the first one of the chosen framework wins).
    """

    kind: ClassVar[str] = "task"
    name: str
    domain: str = "nlp"
    kind_of: str = "inference"
    aliases: tuple[str, ...] = ()
    input_schema: str = ""
    output_schema: str = ""
    #: what the task's wrapper can do, read by CLI verbs and servers instead of closed task lists:
    #: ``"generative"`` (takes generation arguments), ``"chat"`` (renders messages through a
    #: template; takes template arguments), ``"embedding"`` ...
    capabilities: tuple[str, ...] = ()
    default_models: tuple[DefaultModel, ...] = ()

    def __post_init__(self) -> None:
        # specs rebuilt from their dicts (the registry snapshot) get their DefaultModels back
        models = tuple(DefaultModel(**m) if isinstance(m, dict) else m for m in self.default_models)
        object.__setattr__(self, "default_models", models)

    def default_model(self, framework: str | None = None) -> DefaultModel | None:
        """The first default model of ``framework`` (any framework when ``None``/``auto``)."""
        for model in self.default_models:
            if framework in (None, "", "auto") or model.framework == framework:
                return model
        return None


@dataclass(frozen=True)
class PipelineWrapperSpec(Spec):
    kind: ClassVar[str] = "pipeline-wrapper"
    task: str

    @property
    def key(self) -> str:
        return self.task


@dataclass(frozen=True)
class PipelineSpec(Spec):
    """A per-framework pipeline for a task. ``backend`` distinguishes e.g. mindnlp from mindformers."""

    kind: ClassVar[str] = "pipeline"
    task: str
    framework: str
    backend: str = "default"
    #: higher wins when several backends of one framework implement a task.
    priority: int = 0
    #: free text shown in the support matrix, e.g. "needs Ascend".
    note: str = ""
    #: ``config.json`` ``model_type`` values this pipeline runs (empty: any model of the task).
    model_types: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task, self.framework, self.backend)


@dataclass(frozen=True)
class TrainerWrapperSpec(Spec):
    kind: ClassVar[str] = "trainer-wrapper"
    task: str

    @property
    def key(self) -> str:
        return self.task


@dataclass(frozen=True)
class TrainerSpec(Spec):
    kind: ClassVar[str] = "trainer"
    task: str
    framework: str
    backend: str = "default"
    priority: int = 0
    note: str = ""
    #: finetuning types supported, e.g. ("full", "freeze", "lora").
    finetuning_types: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.task, self.framework, self.backend)


@dataclass(frozen=True)
class ModelGroupSpec(Spec):
    """A model family.

    :param architectures: ``config.json`` ``architectures`` values that identify the group.
    :param model_types: ``config.json`` ``model_type`` values that identify the group.
    :param hub_ids: ``{"huggingface": ("org/name", ...), "modelers": (...), ...}``.
    :param template: name of the group's template (1:1).
    :param lora_targets: default LoRA target modules.
    """

    kind: ClassVar[str] = "model-group"
    name: str
    tasks: tuple[str, ...] = ()
    template: str = ""
    architectures: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    hub_ids: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    sizes: tuple[str, ...] = ()
    lora_targets: tuple[str, ...] = ()
    frameworks: tuple[str, ...] = FRAMEWORKS
    #: matching evidence, to tell the group from others that share its architecture:
    #: strings its official chat_template contains (any one is enough) ...
    template_markers: tuple[str, ...] = ()
    #: ... strings whose presence in the chat_template rules the group out ...
    template_excludes: tuple[str, ...] = ()
    #: ... vocabulary sizes of its released checkpoints (another size rules it out) ...
    vocab_sizes: tuple[int, ...] = ()
    #: ... a regular expression on the model's name or path ...
    name_pattern: str = ""
    #: ... and whether it is the generic member of its architecture (chosen when nothing points elsewhere).
    generic: bool = False


@dataclass(frozen=True)
class TemplateSpec(Spec):
    """A prompt template. ``impl`` points at the renderer; ``template_kind`` is e.g.
    ``"native"`` (openmind renderer) or ``"jinja"`` (the tokenizer's own chat_template)."""

    kind: ClassVar[str] = "template"
    name: str
    template_kind: str = "native"
    #: strings that end generation besides the tokenizer's EOS (the one place they are written)
    stop_words: tuple[str, ...] = ()
    #: official chat_template revisions the renderer reproduces: ``(label, sha256)`` pairs, the
    #: hash of the normalised text (:func:`openmind.core.templates.template_hash`)
    revisions: tuple[tuple[str, str], ...] = ()
    #: other names that resolve to this template (e.g. LLaMA-Factory's template names)
    aliases: tuple[str, ...] = ()
    #: render options this name fixes (e.g. ``{"enable_thinking": False}`` for ``qwen3_nothink``)
    options: dict[str, Any] = field(default_factory=dict, hash=False)
    #: the tool-call parser of the family (``"hermes"``, ``"llama3_json"``, ``"mistral"``, ``"glm4"``
    #: or a plugin's ``"module:attr"`` ToolParser class); ``""``: the template class's own choice
    tool_parser: str = ""


@dataclass(frozen=True)
class DatasetSpec(Spec):
    """The standard training format of a training task (``sft``, ``pretrain``, ``preference``)."""

    kind: ClassVar[str] = "dataset"
    name: str
    task: str
    columns: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True)
class DatasetFormatSpec(Spec):
    """An input ``formatting`` of dataset rows and its converter (``alpaca``, ``sharegpt`` ... or a
    plugin's): ``impl`` is a callable ``convert(row: dict) -> dict`` that returns the row in the
    built-in input format ``produces`` (``openai``, ``sft``, ``alpaca``, ``pretrain``,
    ``preference``); it raises ``ValueError("field: reason")`` for a bad row. ``columns`` are the
    source columns a row must have (also how ``formatting: auto`` recognises the format). The
    built-in formats are registered by openmind-data with ``produces`` equal to their own name.
    """

    kind: ClassVar[str] = "dataset-format"
    name: str
    produces: str = ""
    columns: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True)
class HubSpec(Spec):
    """A model/dataset hub. ``prefix`` enables ids like ``hf::org/name``."""

    kind: ClassVar[str] = "hub"
    name: str
    prefix: str = ""
    endpoint_env: str = ""


@dataclass(frozen=True)
class CommandSpec(Spec):
    """A CLI verb. ``impl`` names a class with ``add_arguments(parser)`` and ``run(args) -> int``.

    ``help`` is shown by ``openmind --help`` without importing ``impl``.
    """

    kind: ClassVar[str] = "command"
    name: str
    help: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class FrameworkSpec(Spec):
    """A deep-learning framework pipelines and trainers run on (``pt``, ``ms``, ...).

    :param modules: import names whose presence (``find_spec``, nothing imported) means the
        framework is installed.
    :param aliases: other names users may write (``torch``, ``pytorch``).
    :param priority: ``framework="auto"`` takes the installed framework with the highest priority.
    :param display_name: shown in messages and docs (``PyTorch``).
    """

    kind: ClassVar[str] = "framework"
    name: str
    display_name: str = ""
    aliases: tuple[str, ...] = ()
    modules: tuple[str, ...] = ()
    priority: int = 0


@dataclass(frozen=True)
class ArgumentGroupSpec(Spec):
    """A group of unified arguments (``impl``: a dataclass whose fields are the keys, each made with
    :func:`openmind.core.args.arg`) that ``verbs`` accept and show in their ``--help``."""

    kind: ClassVar[str] = "argument-group"
    name: str
    verbs: tuple[str, ...] = ()


@dataclass(frozen=True)
class RouteSpec(Spec):
    """An HTTP route of the serving app. ``impl`` names ``async def handler(request)``; the serving
    context (engine, settings, helpers) is ``request.app.state.context``."""

    kind: ClassVar[str] = "route"
    path: str
    methods: tuple[str, ...] = ("POST",)
    #: lower first: the order routes are mounted in (built-in routes use 0-100).
    order: int = 500
    #: tasks whose pipeline this route serves: ``openmind deploy`` on a model folder of such a task
    #: (e.g. ``text2image``) loads it through the task's registered pipeline for this route
    tasks: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.path, ",".join(self.methods))

    @property
    def name(self) -> str:
        return f"{','.join(self.methods)} {self.path}"

    def label(self) -> str:
        return self.name


@dataclass(frozen=True)
class EvalKindSpec(Spec):
    """A kind of evaluation task: how items are scored (``multiple-choice``, ``generate``, ...).

    ``impl`` names the scorer; ``capability`` is the task capability the evaluated pipeline needs.
    """

    kind: ClassVar[str] = "eval-kind"
    name: str
    capability: str = "generative"


@dataclass(frozen=True)
class ConfigDialectSpec(Spec):
    """A configuration dialect: another tool's YAML keys mapped onto openmind's arguments.

    ``impl`` names a :class:`openmind.core.dialects.Dialect` object (pure data: importing it
    imports no framework). ``priority`` breaks ties of the auto-detection (higher wins); ``aliases``
    are other names accepted by the ``dialect:`` marker key and ``--dialect``.
    """

    kind: ClassVar[str] = "config-dialect"
    name: str
    aliases: tuple[str, ...] = ()
    priority: int = 0


@dataclass(frozen=True)
class RewardSpec(Spec):
    """A reward function of the online RL stages (``grpo``), used as ``--reward-funcs NAME`` or
    ``NAME:PARAM``.

    ``impl`` names a factory ``make(param: str | None) -> reward`` where ``reward(prompts,
    completions, **columns) -> list[float | None]`` (trl's reward-function signature: the dataset
    columns, e.g. ``answer``, arrive as keyword lists). ``takes_param``: whether ``NAME:PARAM``
    is required (``regex:PATTERN``) or optional (``length``).
    """

    kind: ClassVar[str] = "reward"
    name: str
    takes_param: str = "no"  # "no", "optional" or "required"


SPEC_KINDS: dict[str, type[Spec]] = {
    cls.kind: cls
    for cls in (
        TaskSpec,
        PipelineWrapperSpec,
        PipelineSpec,
        TrainerWrapperSpec,
        TrainerSpec,
        ModelGroupSpec,
        TemplateSpec,
        DatasetSpec,
        HubSpec,
        CommandSpec,
        FrameworkSpec,
        ArgumentGroupSpec,
        RouteSpec,
        EvalKindSpec,
        DatasetFormatSpec,
        ConfigDialectSpec,
        RewardSpec,
    )
}


def check_impl(impl: str) -> bool:
    return bool(_IMPL_RE.match(impl))
