"""The first-party openmind distributions and what each adds (data, no imports).

The core (the ``openmind`` distribution) knows its first-party providers so that a missing piece
names its package: ``openmind run ...`` with the core alone says that openmind-nlp adds the verb,
``pipeline("chat", ...)`` without a backend names openmind-pt and openmind-ms. Third-party plugins
are found through the registry as usual; this table only words the messages.

Versions: every first-party distribution of the same minor version (``2.0.x``) works with every
other one of that minor; internal dependencies are ranges ``>=2.0,<2.1`` (see docs/RELEASING.md).
"""

from __future__ import annotations

#: distribution -> (extra of `openmind` that installs it, what it adds, verbs, tasks with a pipeline,
#: training stages with a trainer)
FIRST_PARTY: dict[str, dict[str, object]] = {
    "openmind": {
        "extra": "",
        "adds": "the core: facade, registry, plugins, arguments, coded errors, hubs, CLI",
        "commands": ("cache", "docs", "env", "list", "pull", "push", "rm"),
    },
    "openmind-nlp": {
        "extra": "nlp",
        "adds": "NLP tasks, model groups, templates, pipeline wrappers, training/serving/evaluation frames",
        "commands": ("chat", "deploy", "eval", "export", "run", "train"),
    },
    "openmind-data": {
        "extra": "data",
        "adds": "the data engine: formats, validation, tokenisation, packing, caching",
        "commands": ("data",),
    },
    "openmind-mm": {
        "extra": "mm",
        "adds": "multimodal tasks (vision, audio, diffusion) and their pipeline wrappers",
        "commands": (),
    },
    "openmind-pt": {
        "extra": "pt",
        "adds": "the PyTorch backend: pipelines and trainers",
        "commands": ("quickstart",),
        "pipelines": (
            "chat",
            "text-generation",
            "summarization",
            "translation",
            "text2emb",
            "text-classification",
            "token-classification",
            "fill-mask",
            # openMind 1.0's NLP tasks
            "question-answering",
            "zero-shot-classification",
            "table-question-answering",
            "text2text-generation",
            "feature-extraction",
            # openmind-mm's tasks (extra openmind-pt[mm])
            "text2image",
            "image-to-image",
            "inpainting",
            "text-to-video",
            "image-classification",
            "zero-shot-image-classification",
            "object-detection",
            "zero-shot-object-detection",
            "depth-estimation",
            "mask-generation",
            "image-to-text",
            "visual-question-answering",
            "image-feature-extraction",
            "automatic-speech-recognition",
            "audio-classification",
            "text-to-speech",
            "mm-chat",
        ),
        "trainers": ("pt", "sft", "rm", "dpo", "kto", "orpo", "simpo", "grpo", "mm-sft"),
    },
    "openmind-webui": {
        "extra": "webui",
        "adds": "the web UI (Gradio): chat, data, train, evaluate, serve, hub and the support matrix",
        "commands": ("webui",),
    },
    "openmind-speedups": {
        "extra": "speedups",
        "adds": "optional C speedups (the native chat templates' render): the same results, faster",
        "commands": (),
    },
    "openmind-ms": {
        "extra": "ms",
        "adds": "the MindSpore backend: pipelines and trainers",
        "commands": (),
        "pipelines": (
            "chat",
            "text-generation",
            "summarization",
            "translation",
            "text2emb",
            "text-classification",
            "feature-extraction",
            "fill-mask",
        ),
        "trainers": ("pt", "sft", "dpo"),
    },
}


def install_hint(distribution: str) -> str:
    extra = FIRST_PARTY.get(distribution, {}).get("extra")
    return f'pip install "openmind[{extra}]"' if extra else f"pip install {distribution}"


def command_provider(name: str) -> str | None:
    """The first-party distribution that adds the verb ``name`` (None: unknown)."""
    for dist, info in FIRST_PARTY.items():
        if name in info["commands"]:  # type: ignore[operator]
            return dist
    return None


def providers(kind: str, task: str) -> list[str]:
    """First-party distributions that register a ``kind`` (``pipelines``/``trainers``) for ``task``."""
    return [dist for dist, info in FIRST_PARTY.items() if task in info.get(kind, ())]  # type: ignore[operator]


def installed_versions() -> dict[str, str]:
    """Version of every installed openmind distribution: the first-party ones and any distribution
    that registers ``openmind`` plugins (reads metadata only; imports none of them)."""
    from importlib.metadata import PackageNotFoundError, version

    from openmind.core.entrypoints import discover

    found: dict[str, str] = {}
    for name in FIRST_PARTY:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    for ep in discover("openmind"):
        found.setdefault(ep.distribution, ep.version)
    return found


def version_text() -> str:
    """What ``openmind --version`` prints: this package's version, then every installed one."""
    from openmind.core.version import __version__

    lines = [f"openmind {__version__}"]
    for name, ver in installed_versions().items():
        if name != "openmind":
            lines.append(f"  {name} {ver}")
    return "\n".join(lines)
