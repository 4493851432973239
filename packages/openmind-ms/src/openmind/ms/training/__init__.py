"""MindSpore trainers (the per-framework side of :mod:`openmind.core.training`)."""
