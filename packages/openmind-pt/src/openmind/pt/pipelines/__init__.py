"""PyTorch pipelines (transformers) implementing :mod:`openmind.nlp.pipelines.base`."""
