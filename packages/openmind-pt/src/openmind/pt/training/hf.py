"""transformers / trl Trainer subclasses: only what openmind adds to them.

* atomic checkpoints (:mod:`openmind.pt.training.checkpoints`): the completion marker is
  written after every rank finished writing, and old checkpoints are rotated out only after it;
* effective-token counting (non-padding tokens, exact across processes, persisted in the
  trainer state so it survives a resume);
* for causal-LM losses, logits only where a label is trained (``logits_to_keep`` with a
  boolean mask): with a 32k-150k vocabulary the output projection is most of the compute of a
  small model, and prompt tokens need none. The loss is the same token-mean cross-entropy.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import Trainer

from openmind.core.training.layout import IGNORE_INDEX, checkpoint_dir
from openmind.pt.training.checkpoints import mark_complete

__all__ = ["IGNORE_INDEX", "OpenMindMixin"]


class OpenMindMixin:
    """Mixed into transformers' ``Trainer`` and trl's trainers."""

    #: checkpoints to keep; transformers' own rotation is off (``save_total_limit=None`` in its
    #: arguments) so that old checkpoints are deleted only after the new one is complete
    keep_checkpoints: int | None = None

    # ---- atomic checkpoints ----------------------------------------------------------
    def _save_checkpoint(self, model, trial):  # noqa: D401 - transformers hook
        super()._save_checkpoint(model, trial)
        run_dir = self._get_output_dir(trial=trial)
        folder = str(checkpoint_dir(run_dir, self.state.global_step))
        self.accelerator.wait_for_everyone()  # every rank's RNG state is on disk
        if self.args.should_save:
            mark_complete(folder, self.state.global_step)
            if self.keep_checkpoints:
                from transformers.trainer_utils import rotate_checkpoints

                rotate_checkpoints(
                    output_dir=run_dir,
                    save_total_limit=self.keep_checkpoints,
                    best_model_checkpoint=self.state.best_model_checkpoint,
                    use_mtime=False,
                )
        self.accelerator.wait_for_everyone()

    # ---- tokens ----------------------------------------------------------------------
    def count_tokens(self, inputs: dict[str, Any]) -> None:
        """Count the batch's non-padding tokens (the collator's exact count when it gives one)."""
        from openmind.pt.training.data import TOKENS_KEY

        given = inputs.pop(TOKENS_KEY, None)
        if not self.model.training:
            return
        if given is not None:
            n = given
        elif (
            "attention_mask" in inputs and inputs["attention_mask"] is not None and inputs["attention_mask"].dim() == 2
        ):
            n = inputs["attention_mask"].sum()
        elif "input_ids" in inputs:
            n = torch.tensor(inputs["input_ids"].numel())
        else:
            return
        n = torch.as_tensor(n, device=self.args.device, dtype=torch.int64)
        self.state.num_input_tokens_seen += int(self.accelerator.gather(n).sum().item())


def causal_lm_loss(model, inputs: dict[str, Any], num_items_in_batch=None):
    """Token-mean cross-entropy of a causal LM, projecting to the vocabulary only where trained.

    Returns ``(loss, outputs, normalised_by_num_items)``.
    """
    labels = inputs.pop("labels")
    keep = torch.zeros_like(labels, dtype=torch.bool)
    keep[:, :-1] = labels[:, 1:] != IGNORE_INDEX
    targets = labels[:, 1:][keep[:, :-1]]
    inputs.setdefault("use_cache", False)
    outputs = model(**inputs, logits_to_keep=keep)
    logits = outputs.logits.reshape(-1, outputs.logits.shape[-1])
    total = torch.nn.functional.cross_entropy(logits.float(), targets, reduction="sum")
    if num_items_in_batch is not None:
        if torch.is_tensor(num_items_in_batch):
            num_items_in_batch = num_items_in_batch.to(total.device)
        return total / num_items_in_batch, outputs, True
    return total / keep.sum().clamp(min=1), outputs, False


class CausalLMTrainer(OpenMindMixin, Trainer):
    """pt / sft: transformers' Trainer with the sparse-logits loss."""

    sparse_logits = True

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        self.count_tokens(inputs)
        if not self.sparse_logits or "labels" not in inputs:
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        inputs = dict(inputs)
        loss, outputs, normalised = causal_lm_loss(model, inputs, num_items_in_batch)
        self.loss_is_scaled_for_ga = normalised
        if normalised and self.args.average_tokens_across_devices:
            loss = loss * self.accelerator.num_processes
        return (loss, outputs) if return_outputs else loss


def dpo_trainer_class():
    """trl's DPOTrainer taking openmind's pre-tokenised rows (the template did the tokenising)."""
    from trl import DPOTrainer

    class OpenMindDPOTrainer(OpenMindMixin, DPOTrainer):
        def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
            if "prompt_ids" in dataset.column_names:
                return dataset  # already tokenised by openmind-data with the model's template
            return super()._prepare_dataset(dataset, processing_class, args, dataset_name)

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            self.count_tokens(inputs)
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    return OpenMindDPOTrainer


def reward_trainer_class():
    from trl import RewardTrainer

    class OpenMindRewardTrainer(OpenMindMixin, RewardTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            self.count_tokens(inputs)
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    return OpenMindRewardTrainer


class _CountPairs:
    """Token count for trainers whose batches carry ``*_attention_mask`` columns (no ``input_ids``)."""

    def count_pair_tokens(self, inputs: dict[str, Any]) -> None:
        if not self.model.training:
            return
        masks = [v for k, v in inputs.items() if k.endswith("attention_mask") and not k.startswith(("prompt", "KL"))]
        if not masks:
            return
        n = sum(torch.as_tensor(m).sum() for m in masks)
        n = torch.as_tensor(n, device=self.args.device, dtype=torch.int64)
        self.state.num_input_tokens_seen += int(self.accelerator.gather(n).sum().item())


def paired_token_trainer_class(kind: str):
    """trl's ORPO (``orpo``) or CPO (``cpo``: SimPO is CPO with ``loss_type="simpo"``) trainer taking
    openmind's tokenised pairs (:func:`openmind.pt.training.adapters.trl_paired_tokens`)."""
    if kind == "orpo":
        from trl.experimental.orpo import ORPOTrainer as Base
    else:
        from trl.experimental.cpo import CPOTrainer as Base

    class OpenMindPairTrainer(OpenMindMixin, _CountPairs, Base):
        def tokenize_row(self, feature, model=None):
            if "chosen_input_ids" in feature:
                return feature  # tokenised by openmind-data with the model's template
            return super().tokenize_row(feature, model)

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            self.count_pair_tokens(inputs)
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    OpenMindPairTrainer.__name__ = f"OpenMind{Base.__name__}"
    return OpenMindPairTrainer


def kto_trainer_class():
    """trl's KTOTrainer taking openmind's ``prompt_ids``/``completion_ids``/``label`` rows."""
    from trl import KTOTrainer

    class OpenMindKTOTrainer(OpenMindMixin, _CountPairs, KTOTrainer):
        def _prepare_dataset(self, dataset, processing_class, args, dataset_name):
            if "prompt_ids" not in dataset.column_names:
                return super()._prepare_dataset(dataset, processing_class, args, dataset_name)
            if self.calculate_KL:  # trl's mismatched pairs for the KL estimate (same rotation as trl)

                def add_kl(examples):
                    examples["KL_completion_ids"] = [examples["completion_ids"][-1]] + examples["completion_ids"][:-1]
                    return examples

                dataset = dataset.map(add_kl, batched=True, batch_size=args.per_device_train_batch_size)
            return dataset

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            self.count_pair_tokens(inputs)
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    return OpenMindKTOTrainer


def grpo_trainer_class():
    """trl's GRPOTrainer generating from openmind's prompt tokens (the template's rendering, not a
    re-tokenisation of the decoded text)."""
    from trl import GRPOTrainer

    class OpenMindGRPOTrainer(OpenMindMixin, GRPOTrainer):
        prompt_ids_of: dict[str, list[int]] = {}

        def _tokenize_prompts(self, prompts):
            if prompts and all(isinstance(p, str) and p in self.prompt_ids_of for p in prompts):
                return [list(self.prompt_ids_of[p]) for p in prompts], None, {}
            return super()._tokenize_prompts(prompts)

    return OpenMindGRPOTrainer
