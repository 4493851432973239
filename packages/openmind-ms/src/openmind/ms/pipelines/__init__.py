"""MindSpore pipelines (the per-framework side of :mod:`openmind.nlp.pipelines.base`)."""
