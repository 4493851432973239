"""MindSpore trainers (the per-framework side of :mod:`openmind.nlp.training.base`)."""
