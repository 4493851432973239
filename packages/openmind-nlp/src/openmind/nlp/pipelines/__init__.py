"""Framework-neutral pipeline wrappers, one per task; see :mod:`openmind.nlp.pipelines.base` for
the contract with the per-framework pipelines.

Importing a wrapper module imports no framework; the per-framework pipeline is imported when
a wrapper is built (``openmind.pipeline(task, model=...)``).
"""
