"""Framework- and domain-neutral inference contracts.

* :mod:`.base` — the :class:`~.base.Pipeline` ABC (what a ``PipelineSpec.impl`` names) and
  :class:`~.base.LoadOptions`.
* :mod:`.wrapper` — the base of every pipeline wrapper (what ``openmind.pipeline(...)`` returns).
* :mod:`.model` — model folders: resolving what the user passed and recognising it as a model
  (transformers, diffusers, sentence-transformers, processor folders), overridable per task.
* :mod:`.errors` — the coded errors of the above.

A domain (openmind-nlp, openmind-mm, a plugin) adds its task-specific parameter and output types
and subclasses these; nothing here imports a framework.
"""
