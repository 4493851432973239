"""Framework-neutral training: trainer wrappers (1:1 with training tasks) and the `train` verb."""
