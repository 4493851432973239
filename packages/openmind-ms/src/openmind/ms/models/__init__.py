"""Native MindSpore models that load Hugging Face safetensors checkpoints as they are."""
