"""Training of vision-language models (task ``mm-sft``): the framework-neutral trainer wrapper,
its argument group and the data step (see :mod:`openmind.mm.training.wrapper`)."""
