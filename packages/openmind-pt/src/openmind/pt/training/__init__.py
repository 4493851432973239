"""PyTorch trainers (transformers Trainer, peft, trl)."""
