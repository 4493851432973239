"""transformers / trl Trainer subclasses: only what openmind adds to them.

* atomic checkpoints (:mod:`openmind.pt.training.checkpoints`): the completion marker is
  written after every rank finished writing, and old checkpoints are rotated out only after it;
* effective-token counting (non-padding tokens, exact across processes, persisted in the
  trainer state so it survives a resume);
* for causal-LM losses, logits only where a label is trained (``logits_to_keep`` with a
  boolean mask): with a 32k-150k vocabulary the output projection is most of the compute of a
  small model, and prompt tokens need none. The loss is the same token-mean cross-entropy;
* where the model's logits are plainly ``lm_head(hidden)`` (no soft-capping or scaling after it),
  the projection and the cross-entropy are fused (:class:`LinearCrossEntropy`): chunk by chunk of
  trained positions, the logits, their log-sum-exp and the gradient ``softmax - onehot`` are
  computed in one pass and the ``[tokens, vocab]`` logits never exist whole, nor their
  log-softmax, its backward or the zero-filled gradient of the loss.
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


#: logits computed at once by :class:`LinearCrossEntropy` (``chunk x vocab`` floats, 32 MB: 262
#: rows of a 32k vocabulary; measured on one CPU thread, 64 rows were 1.25x slower and 512 no faster)
FUSED_CHUNK_ELEMENTS = 2**23


class LinearCrossEntropy(torch.autograd.Function):
    """``sum(cross_entropy(hidden @ weight.T, targets))`` with its gradients computed in the forward
    pass, ``chunk`` rows at a time (the memory of the logits is ``chunk x vocab``, not
    ``tokens x vocab``). The gradient is the textbook one: ``d loss / d logits = softmax - onehot``,
    then ``grad_hidden = g @ weight`` and ``grad_weight = g.T @ hidden`` (only when the weight is
    trained); the backward only scales them by the incoming gradient."""

    @staticmethod
    def forward(ctx, hidden, weight, targets, chunk, with_grad):  # noqa: D102
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad_hidden = torch.empty_like(hidden) if with_grad and ctx.needs_input_grad[0] else None
        grad_weight = (
            torch.zeros(weight.shape, dtype=torch.float32, device=weight.device)
            if with_grad and ctx.needs_input_grad[1]
            else None
        )
        for a in range(0, hidden.shape[0], chunk):
            h, t = hidden[a : a + chunk], targets[a : a + chunk]
            x = (h @ weight.t()).float()
            picked = x.gather(1, t[:, None])
            top = x.amax(dim=-1, keepdim=True)
            e = x.sub_(top).exp_()  # in place: exp(logits - max)
            norm = e.sum(dim=-1, keepdim=True)
            total += (norm.log() + top - picked).sum()  # log-sum-exp - logit of the target
            if grad_hidden is None and grad_weight is None:
                continue
            # d loss / d logits = e / norm - onehot(t): the 1/norm is applied to the small results
            if grad_hidden is not None:
                gh = (e.to(weight.dtype) @ weight).float().div_(norm) - weight[t].float()
                grad_hidden[a : a + chunk] = gh.to(hidden.dtype)
            if grad_weight is not None:
                hf = h.float()
                grad_weight.addmm_(e.t(), hf / norm)
                grad_weight.index_add_(0, t, hf, alpha=-1.0)
        ctx.save_for_backward(
            grad_hidden if grad_hidden is not None else hidden.new_empty(0),
            grad_weight if grad_weight is not None else weight.new_empty(0),
        )
        ctx.has = (grad_hidden is not None, grad_weight is not None)
        ctx.weight_dtype = weight.dtype
        return total

    @staticmethod
    def backward(ctx, grad_output):  # noqa: D102
        grad_hidden, grad_weight = ctx.saved_tensors
        has_h, has_w = ctx.has
        gh = (grad_hidden * grad_output.to(grad_hidden.dtype)) if has_h else None
        gw = (grad_weight * grad_output).to(ctx.weight_dtype) if has_w else None
        return gh, gw, None, None, None


def linear_cross_entropy(hidden, weight, targets, chunk: int | None = None):
    """Summed cross-entropy of ``hidden @ weight.T`` against ``targets`` (see :class:`LinearCrossEntropy`)."""
    chunk = chunk or max(1, FUSED_CHUNK_ELEMENTS // weight.shape[0])
    return LinearCrossEntropy.apply(hidden, weight, targets, chunk, torch.is_grad_enabled())


#: config attributes that transform the logits after the output projection (the fused loss would
#: not see them): soft-capping (Gemma 2/3), logit scaling (Cohere), router losses (MoE)
_LOGIT_TRANSFORMS = ("final_logit_softcapping", "logit_scale", "output_router_logits", "logits_scaling")


def fusable_output(model):
    """The plain ``torch.nn.Linear`` output projection of a causal LM whose logits are exactly
    ``lm_head(hidden)``, else None (the fused loss is then not used)."""
    base = model
    for _ in range(4):  # DDP / peft wrappers
        inner = getattr(base, "module", None) or (base.get_base_model() if hasattr(base, "get_base_model") else None)
        if inner is None or inner is base:
            break
        base = inner
    config = getattr(base, "config", None)
    head = getattr(base, "lm_head", None)
    if config is None or type(head) is not torch.nn.Linear or head.bias is not None:
        return None
    if type(head.weight.data) is not torch.Tensor:  # a DTensor / sharded parameter (tensor parallel)
        return None
    if any(getattr(config, name, None) not in (None, False, 1, 1.0) for name in _LOGIT_TRANSFORMS):
        return None
    if not hasattr(config, "vocab_size") or head.weight.shape[0] != config.vocab_size:
        return None
    return head


def causal_lm_loss(model, inputs: dict[str, Any], num_items_in_batch=None, fused: bool = True):
    """Token-mean cross-entropy of a causal LM, projecting to the vocabulary only where trained
    (and, with ``fused`` where the model allows it, fused with the projection:
    :func:`linear_cross_entropy`).

    Returns ``(loss, outputs, normalised_by_num_items)``.
    """
    labels = inputs.pop("labels")
    keep = torch.zeros_like(labels, dtype=torch.bool)
    keep[:, :-1] = labels[:, 1:] != IGNORE_INDEX
    targets = labels[:, 1:][keep[:, :-1]]
    inputs.setdefault("use_cache", False)
    head = fusable_output(model) if fused else None
    if head is not None:
        captured: list = []

        def take_hidden(module, args):  # the kept hidden states; the head itself projects nothing
            captured.append(args[0])
            return (args[0][..., :0, :],)

        handle = head.register_forward_pre_hook(take_hidden)
        try:
            outputs = model(**inputs, logits_to_keep=keep)
        finally:
            handle.remove()
        hidden = captured[-1]
        total = linear_cross_entropy(hidden.reshape(-1, hidden.shape[-1]), head.weight, targets)
    else:
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
        # sharded weights (FSDP, DeepSpeed) are only whole inside the module's own forward
        fused = not (getattr(self, "is_fsdp_enabled", False) or getattr(self, "is_deepspeed_enabled", False))
        loss, outputs, normalised = causal_lm_loss(model, inputs, num_items_in_batch, fused=fused)
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
