"""The MindSpore trainer of ``pt``, ``sft`` and ``dpo`` (full, freeze or LoRA), implementing the trainer contract
of :class:`openmind.core.training.FrameworkTrainer` on the native models.

* data: the data engine (``openmind.data.prepare``) -> fixed-width batches (one compiled graph);
  packed rows (``--packing``) keep their samples apart exactly as the PyTorch trainer does:
  rotary positions restart per sample, a block-diagonal causal mask, no loss across a boundary
  (:mod:`openmind.ms.training.packing`);
* freeze: only the last (or first) ``freeze_trainable_layers`` decoder layers train, as on PyTorch;
* step: ``mindspore.value_and_grad`` + global-norm clipping + ``nn.AdamWeightDecay`` with a
  per-step learning-rate list, compiled with ``mindspore.jit``; gradient accumulation weights each
  micro-batch by its trained tokens (the loss of the big batch);
* outputs: the full model (HF names, safetensors) or a PEFT-format adapter, tokenizer, chat
  template, ``checkpoint-N/`` (weights, optimizer, position; complete once its marker is written),
  ``train_summary.json``, ``train_log.jsonl`` and ``loss.png``;
* ``dpo``: trl's sigmoid DPO loss against reference log-probs of the start weights
  (:mod:`openmind.ms.training.preference`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from openmind.core.logs import logger
from openmind.core.training.contract import FrameworkTrainer, TrainPlan
from openmind.core.training.errors import T_BAD_SETUP, T_DISTRIBUTED, T_EXPORT, T_NO_CHECKPOINT, T_NOT_FINITE
from openmind.core.training.layout import (
    CHECKPOINT_MARKER,
    CHECKPOINT_PREFIX,
    IGNORE_INDEX,
    PLOT_FILE,
    SUMMARY_FILE,
    TrainResult,
    checkpoint_dir,
)
from openmind.ms import runtime

LOG_FILE = "train_log.jsonl"
#: batches are padded to a multiple of this width (one compiled graph for the whole run)
WIDTH_STEP = 16


def _options(args: Any, task: str):
    from openmind.nlp.pipelines.base import LoadOptions

    m = args.model
    return LoadOptions(task=task, device=m.device, dtype=m.dtype, trust_remote_code=m.trust_remote_code)


def _bucket(n: int, step: int = WIDTH_STEP) -> int:
    return max(step, -(-n // step) * step)


class MindSporeTrainer(FrameworkTrainer):
    """``pt`` / ``sft`` / ``dpo`` on MindSpore; see the module docstring."""

    stages = ("pt", "sft", "dpo")
    finetuning_types = ("full", "freeze", "lora")
    #: ``--nproc``/``--nnodes > 1`` re-run ``openmind train`` under msrun (a backend that starts its
    #: own launcher from ``train()``, as mindformers does, sets this to False)
    relaunches = True

    def __init__(self, args: Any, *, stage: str | None = None, plan: TrainPlan | None = None) -> None:
        super().__init__(args, stage=stage, plan=plan)
        if plan is None:  # built outside a trainer wrapper: the NLP steps of the stage
            from openmind.nlp.training.base import check_template, prepare_data

            self.plan.template_check, self.plan.data_step = check_template, prepare_data
        self.checked = False
        self.model = None
        self.tokenizer = None
        self.template = None
        self.model_dir = ""
        self.lora_paths: list[str] = []
        self.rank, self.world = 0, 1

    # ---- check: everything that can fail before step 1 --------------------------------------
    def check(self) -> None:
        if self.checked:
            return
        args = self.args
        ft, t = args.finetuning, args.training
        self.check_supported()
        if ft.finetuning_type == "lora" and ft.use_dora:
            raise T_BAD_SETUP.error("DoRA is not available on MindSpore", location="use_dora")
        if self.stage == "dpo":
            check_preference(args)
        check_distributed(args, launching=not self.relaunches)
        from openmind.ms.training.schedule import SCHEDULES

        if t.lr_scheduler_type not in SCHEDULES:
            from openmind.core.errors import A_BAD_VALUE

            raise A_BAD_VALUE.error(
                f"lr_scheduler_type {t.lr_scheduler_type!r} is not available on MindSpore ({', '.join(SCHEDULES)})",
                location="lr_scheduler_type",
            )
        from openmind.ms.pipelines.loading import check_folder, load_tokenizer
        from openmind.nlp.pipelines.model import resolve_model_dir

        m = args.model
        self.device = runtime.set_device(m.device)
        from openmind.ms.training.distributed import join

        # under msrun: join the cluster before anything is loaded (msrun's scheduler process ends here)
        self.rank, self.world = join()
        self.model_dir = resolve_model_dir(m.model, revision=m.revision, hub=m.hub).path
        check_folder(self.model_dir, _options(args, "chat"))
        self.tokenizer = load_tokenizer(self.model_dir, _options(args, "chat"), padding_side="right")
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.template = self._template()
        self.data = self._data()
        from openmind.ms.models import auto

        self.model, self.config = auto.load(self.model_dir, "causal-lm")
        if m.adapter:
            from openmind.ms.models.lora import adapter_deltas, add_parameters

            add_parameters(self.model, adapter_deltas(self.model, m.adapter))
        if ft.finetuning_type == "freeze":
            from openmind.ms.training.freeze import apply_freeze

            apply_freeze(self.model, ft.freeze_trainable_layers)
        if ft.finetuning_type == "lora":
            from openmind.ms.models.lora import apply_lora

            self.lora_paths = apply_lora(
                self.model,
                ft.lora_target or self._default_targets(),
                r=ft.lora_rank,
                alpha=self.plan.lora_alpha,
                p_dropout=ft.lora_dropout,
                seed=t.seed,
                rslora=ft.use_rslora,
            )
        trainable = sum(int(np.prod(p.shape)) for p in self.model.trainable_params())
        total = sum(int(np.prod(p.shape)) for p in self.model.get_parameters())
        logger.info("trainable parameters: %d / %d (%.2f%%)", trainable, total, 100.0 * trainable / max(total, 1))
        self.params_count = (trainable, total)
        self.checked = True

    def _template(self):
        if self.stage == "pt":
            return None
        from openmind.nlp.templates import resolve_template

        t = self.args.template
        template = resolve_template(
            t.template, model_dir=self.model_dir, tokenizer=self.tokenizer, model_group=self.args.model.model_group
        )
        self.plan.check_template(template, self.tokenizer)  # OM-T002, as on every framework
        return template

    def _default_targets(self) -> list[str]:
        try:
            from openmind.nlp.templates.matching import match_model_dir

            group = match_model_dir(self.model_dir)
        except Exception:  # noqa: BLE001 - no group: every linear layer
            group = None
        return list(getattr(group, "lora_targets", ()) or ()) or ["all"]

    def _data(self):
        """The plan's framework-neutral data step (data engine + OM-T003 cutoff errors)."""
        return self.plan.prepare_data(self.tokenizer, self.template, quiet=True)

    # ---- batches ------------------------------------------------------------------------------
    @staticmethod
    def _rows(dataset: Any) -> list[tuple]:
        """``(input_ids, labels)`` per row; packed rows: ``(input_ids, labels, position_ids)`` with the
        first label of every sample ignored (as the PyTorch collator does)."""
        if dataset is None:
            return []
        ds = dataset.with_format("numpy")
        if "position_ids" not in (dataset.column_names or []):
            return [(np.asarray(r["input_ids"], np.int32), np.asarray(r["labels"], np.int32)) for r in ds]
        from openmind.ms.training.packing import mask_boundaries

        rows = []
        for r in ds:
            pos = np.asarray(r["position_ids"], np.int32)
            rows.append(
                (np.asarray(r["input_ids"], np.int32), mask_boundaries(np.asarray(r["labels"], np.int32), pos), pos)
            )
        return rows

    def _batch(self, rows: list[tuple], width: int, size: int):
        """``(ids, labels, mask)``; for packed rows ``mask`` is the ``(size, width)`` position ids
        (padding and filler rows: a segment of their own) and ``packed`` is set."""
        pad = self.tokenizer.pad_token_id or 0
        ids = np.full((size, width), pad, np.int32)
        labels = np.full((size, width), IGNORE_INDEX, np.int32)
        packed = any(len(r) > 2 for r in rows)
        if packed:
            from openmind.ms.training.packing import padded_positions

            mask = np.tile(np.arange(width, dtype=np.int32), (size, 1))  # filler rows: one padding segment
        else:
            mask = np.zeros((size, width), np.int32)
            mask[:, 0] = 1  # all-padding filler rows still attend to one slot (their labels are ignored)
        for i, row in enumerate(rows):
            x, y = row[0], row[1]
            ids[i, : len(x)] = x
            labels[i, : len(y)] = y
            if packed:
                mask[i] = padded_positions(row[2], width)
            else:
                mask[i, : len(x)] = 1
        return ids, labels, (mask, packed)

    # ---- train --------------------------------------------------------------------------------
    def train(self) -> TrainResult:
        import mindspore as ms
        from mindspore import Tensor, ops

        from openmind.ms.models.llama import sparse_causal_lm_loss, sparse_targets
        from openmind.ms.training.schedule import learning_rates

        self.check()
        args, t = self.args, self.args.training
        out = Path(t.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        dpo = self.stage == "dpo"
        if dpo:
            from openmind.ms.training import preference

            train_rows = preference.pair_rows(self.data.train)
            eval_rows = preference.pair_rows(self.data.eval)
            width = _bucket(max(max(len(r[0]), len(r[2])) for r in train_rows + eval_rows))
            counts = sorted(
                (
                    int((r[1][1:] != IGNORE_INDEX).sum() + (r[3][1:] != IGNORE_INDEX).sum())
                    for r in train_rows + eval_rows
                ),
                reverse=True,
            )
        else:
            train_rows = self._rows(self.data.train)
            eval_rows = self._rows(self.data.eval)
            width = _bucket(max(len(r[0]) for r in train_rows + eval_rows))
            counts = sorted((int((r[1][1:] != IGNORE_INDEX).sum()) for r in train_rows + eval_rows), reverse=True)
        bs, accum = t.per_device_train_batch_size, t.gradient_accumulation_steps
        # trained positions per batch, padded to a fixed count: the worst case of bs rows
        slots = _bucket(sum(counts[: max(bs, t.per_device_eval_batch_size)]))
        rank, world = self.rank, self.world
        main = rank == 0
        # a global batch is `bs` rows per rank, drawn as one process draws `bs * world` rows
        global_bs = bs * world
        micro_per_epoch = -(-len(train_rows) // global_bs)
        steps_per_epoch = max(1, micro_per_epoch // accum)
        total = t.max_steps if t.max_steps > 0 else max(1, int(round(t.num_train_epochs * steps_per_epoch)))
        warmup = int(t.warmup_ratio * total)
        lrs = learning_rates(t.lr_scheduler_type, t.learning_rate, total, warmup)
        model = self.model
        model.set_train(True)
        from openmind.ms.training.optimizer import AdamW

        optimizer = AdamW(model.trainable_params(), lrs, weight_decay=t.weight_decay)

        if dpo:
            beta = float(args.finetuning.pref_beta)

            def forward(ids, cos, sin, mask, positions, targets, segs, ref, valid):
                logps = preference.sequence_logps(model, ids, cos, sin, mask, positions, targets, segs)
                loss, chosen, rejected = preference.dpo_loss(logps, ref, valid, beta)
                return loss, chosen, rejected

        else:

            def forward(ids, cos, sin, mask, positions, targets, weights):
                return sparse_causal_lm_loss(model, ids, cos, sin, mask, positions, targets, weights)

        grad_fn = ms.value_and_grad(forward, None, optimizer.parameters, has_aux=dpo)
        clip = float(t.max_grad_norm or 0)

        @ms.jit
        def grads_of(*inputs):
            return grad_fn(*inputs)

        @ms.jit
        def apply(grads):
            if clip > 0:
                grads = ops.clip_by_global_norm(grads, clip)
            return optimizer(grads)

        @ms.jit
        def loss_only(*inputs):
            return forward(*inputs)

        def inputs(ids, labels, mask):
            mask, packed = mask
            if packed:  # mask holds the position ids of packed rows
                from openmind.ms.models.layers import MASK_VALUE
                from openmind.ms.models.llama import rope_tables
                from openmind.ms.training.packing import block_causal_mask

                cos, sin = (Tensor(t) for t in rope_tables(model.inv_freq, mask))
                attn = Tensor(block_causal_mask(mask, MASK_VALUE, sliding_window=model.sliding_window))
            else:
                cos, sin, attn = model.prepare(mask, width)
            positions, targets, weights = sparse_targets(labels, slots)
            return (Tensor(ids), cos, sin, attn, Tensor(positions), Tensor(targets), Tensor(weights))

        if dpo:
            pad = self.tokenizer.pad_token_id or 0

            def pair_inputs(pairs, refs, size):
                """The forward's inputs for ``pairs`` (``refs``: their reference log-probs or None)."""
                ids, labels, key_mask, valid = preference.pair_batch(pairs, width, size, pad)
                cos, sin, attn = model.prepare(key_mask, width)
                positions, targets, weights = sparse_targets(labels, slots)
                segs = preference.segments(positions, weights, 2 * size, width)
                ref = np.zeros(2 * size, np.float32)
                if refs is not None:
                    for i, (c, r) in enumerate(refs):
                        ref[i], ref[size + i] = c, r
                tensors = (Tensor(ids), cos, sin, attn, Tensor(positions), Tensor(targets), Tensor(segs))
                return tensors, Tensor(ref), Tensor(valid)

            @ms.jit
            def logps_only(*tensors):
                return preference.sequence_logps(model, *tensors)

            def reference(rows: list[tuple]) -> list[tuple[float, float]]:
                """Log-probs of every row under the start weights (computed once, before step 1)."""
                model.set_train(False)
                out = []
                for s in range(0, len(rows), bs):
                    chunk = rows[s : s + bs]
                    tensors, _, _ = pair_inputs(chunk, None, bs)
                    values = logps_only(*tensors).asnumpy()
                    out.extend((float(values[i]), float(values[bs + i])) for i in range(len(chunk)))
                model.set_train(True)
                return out

            train_refs, eval_refs = reference(train_rows), reference(eval_rows)
            self._pair_inputs, self._eval_refs = pair_inputs, eval_refs
        self._inputs = inputs
        summed = None
        if world > 1:
            from openmind.ms.training.distributed import GradientSum

            summed = GradientSum(optimizer.parameters)

        step, start_micro, log = 0, 0, []
        resumed_from = None
        if t.resume:
            resumed_from, step, log = self._resume(out, optimizer)
            start_micro = step * accum
        permutations: dict[int, list[int]] = {}

        def draw(micro_index: int) -> list[int]:
            """The rows of micro-batch ``micro_index``: epochs as PyTorch's loader makes them (every row
            once per epoch in a seeded order, the last batch of an epoch smaller when the rows do not
            divide evenly); a function of the index alone, so a resumed run draws the same batches."""
            epoch, k = divmod(micro_index, micro_per_epoch)
            if epoch not in permutations:
                permutations.clear()
                permutations[epoch] = np.random.default_rng(t.seed + epoch).permutation(len(train_rows)).tolist()
            rows = permutations[epoch][k * global_bs : (k + 1) * global_bs]
            return rows[rank * bs : (rank + 1) * bs]  # this rank's slice (possibly empty)

        from tqdm.auto import tqdm

        tokens_seen = sum(e.get("tokens", 0) for e in log[-1:]) if log else 0
        started = time.perf_counter()
        bar = tqdm(
            total=total, initial=step, desc=f"{self.stage} (ms)", disable=None if main else True, file=sys.stderr
        )
        eval_loss = None
        micro = start_micro
        stopped_early = False
        with bar:
            while step < total:
                acc = None
                loss_sum, count_sum, batch_tokens = 0.0, 0, 0
                rewards: list[np.ndarray] = []
                for _ in range(accum):
                    chosen = draw(micro)
                    micro += 1
                    if dpo:
                        tensors, ref, valid = pair_inputs(
                            [train_rows[i] for i in chosen], [train_refs[i] for i in chosen], bs
                        )
                        (loss, good, bad), grads = grads_of(*tensors, ref, valid)
                        rewards.append(np.stack([good.asnumpy(), bad.asnumpy()])[:, : len(chosen)])
                        n = 1  # trl: the mean of the micro-batches' losses
                        batch_tokens += int(sum(len(train_rows[i][0]) + len(train_rows[i][2]) for i in chosen))
                    else:
                        ids, labels, mask = self._batch([train_rows[i] for i in chosen], width, bs)
                        n = int((labels[:, 1:] != IGNORE_INDEX).sum())
                        batch_tokens += int(sum(len(train_rows[i][0]) for i in chosen))
                        loss, grads = grads_of(*inputs(ids, labels, mask))
                    weight = float(n)
                    # the loss of the big batch: each micro-batch (and each rank) weighs by its tokens
                    grads = tuple(g * weight for g in grads) if accum > 1 or world > 1 else grads
                    acc = grads if acc is None else tuple(a + g for a, g in zip(acc, grads, strict=True))
                    loss_sum += float(loss.asnumpy()) * n
                    count_sum += n
                if summed is not None:  # the sums over every rank (AllReduce), then the token mean
                    loss_sum, count_sum, batch_tokens = summed.numbers(loss_sum, count_sum, batch_tokens)
                    acc = summed.gradients(acc)
                if accum > 1 or world > 1:
                    acc = tuple(g / max(count_sum, 1) for g in acc)
                apply(ms.mutable(acc))
                step += 1
                tokens_seen += batch_tokens
                loss_value = loss_sum / max(count_sum, 1)
                if not np.isfinite(loss_value):
                    raise T_NOT_FINITE.error(f"the training loss became {loss_value} at step {step}")
                elapsed = time.perf_counter() - started
                entry = {"step": step, "loss": loss_value, "lr": lrs[step - 1], "tokens": tokens_seen}
                if rewards:  # trl's reward metrics of the step's pairs
                    good, bad = np.concatenate(rewards, axis=1)
                    entry["rewards/chosen"] = float(good.mean())
                    entry["rewards/rejected"] = float(bad.mean())
                    entry["rewards/accuracies"] = float((good > bad).mean())
                    entry["rewards/margins"] = float((good - bad).mean())
                if eval_rows and t.eval_steps and step % t.eval_steps == 0:
                    eval_loss = self._evaluate(loss_only, eval_rows, width)
                    entry["eval_loss"] = eval_loss
                log.append(entry)
                bar.set_postfix(
                    loss=f"{loss_value:.4f}", lr=f"{lrs[step - 1]:.2e}", tok_s=f"{tokens_seen / elapsed:.0f}"
                )
                bar.update(1)
                if main and t.save_steps and step % t.save_steps == 0 and step < total:
                    self._save_checkpoint(out, step, optimizer, log)
        seconds = time.perf_counter() - started
        model.set_train(False)
        if eval_rows:
            eval_loss = self._evaluate(loss_only, eval_rows, width)
        if main:  # only rank 0 writes the run folder (every rank holds the same weights)
            self._save_final(out)
            self._save_checkpoint(out, step, optimizer, log)
            with open(out / LOG_FILE, "w", encoding="utf-8") as f:
                for entry in log:
                    f.write(json.dumps(entry) + "\n")
        losses = [e["loss"] for e in log]
        result = TrainResult(
            output_dir=str(out),
            stage=self.stage,
            finetuning_type=args.finetuning.finetuning_type,
            global_step=step,
            train_loss=float(np.mean(losses)) if losses else None,
            final_loss=losses[-1] if losses else None,
            eval_loss=eval_loss,
            tokens=tokens_seen,
            seconds=seconds,
            tokens_per_second=tokens_seen / seconds if seconds else 0.0,
            peak_memory_mb=_peak_memory_mb(),
            resumed_from=resumed_from,
            history=log,
            metrics={
                "framework": "ms",
                "device": self.device,
                "world_size": world,
                "width": width,
                "trainable_params": self.params_count[0],
                "total_params": self.params_count[1],
                "early_stopped": stopped_early,
                "data": {"train_rows": len(train_rows), "eval_rows": len(eval_rows)},
            },
        )
        if not main:
            return result
        (out / SUMMARY_FILE).write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
        if t.plot_loss:
            _plot(out / PLOT_FILE, log)
        if "tensorboard" in (t.report_to or []):
            logger.warning("TensorBoard logging is not available on MindSpore; the log is in %s", out / LOG_FILE)
        return result

    def _evaluate(self, loss_only, rows, width: int) -> float:
        bs = self.args.training.per_device_eval_batch_size
        total, count = 0.0, 0
        if self.stage == "dpo":  # the mean over pairs of the DPO loss
            train_bs = self.args.training.per_device_train_batch_size
            for s in range(0, len(rows), train_bs):
                chunk = rows[s : s + train_bs]
                tensors, ref, valid = self._pair_inputs(chunk, self._eval_refs[s : s + train_bs], train_bs)
                total += float(loss_only(*tensors, ref, valid)[0].asnumpy()) * len(chunk)
                count += len(chunk)
            return total / max(count, 1)
        for s in range(0, len(rows), bs):
            chunk = rows[s : s + bs]
            ids, labels, mask = self._batch(chunk, width, bs)
            n = int((labels[:, 1:] != IGNORE_INDEX).sum())
            total += float(loss_only(*self._inputs(ids, labels, mask)).asnumpy()) * n
            count += n
        return total / max(count, 1)

    # ---- outputs ------------------------------------------------------------------------------
    def _save_weights(self, folder: Path) -> None:
        from openmind.ms.models import auto
        from openmind.ms.models.lora import save_adapter

        ft = self.args.finetuning
        if ft.finetuning_type == "lora":
            save_adapter(
                self.model,
                folder,
                r=ft.lora_rank,
                alpha=self.plan.lora_alpha,
                p_dropout=ft.lora_dropout,
                base=self.model_dir,
                rslora=ft.use_rslora,
            )
        else:
            auto.save_pretrained(self.model, self.config, folder)

    def _save_final(self, out: Path) -> None:
        from openmind.ms.models.auto import copy_assets

        self._save_weights(out)
        self.tokenizer.save_pretrained(out)
        copy_assets(self.model_dir, out)
        if self.template is not None:
            (out / "openmind_template.txt").write_text(getattr(self.template, "name", "") + "\n", encoding="utf-8")
            source = getattr(self.template, "source", None)
            if source and not (out / "chat_template.jinja").is_file():
                (out / "chat_template.jinja").write_text(source, encoding="utf-8")

    def _save_checkpoint(self, out: Path, step: int, optimizer: Any, log: list[dict]) -> None:
        import mindspore as ms

        final = checkpoint_dir(out, step)
        tmp = out / f".{CHECKPOINT_PREFIX}{step}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self._save_weights(tmp)
        ms.save_checkpoint(optimizer, str(tmp / "optimizer.ckpt"))
        (tmp / "trainer_state.json").write_text(json.dumps({"global_step": step, "log_history": log}), encoding="utf-8")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
        marker = final / (CHECKPOINT_MARKER + ".tmp")
        marker.write_text(json.dumps({"step": step, "framework": "ms"}), encoding="utf-8")
        os.replace(marker, final / CHECKPOINT_MARKER)
        limit = self.args.training.save_total_limit
        if limit:
            complete = sorted(_complete_checkpoints(out), key=lambda p: int(p.name.split("-")[1]))
            for old in complete[:-limit]:
                shutil.rmtree(old, ignore_errors=True)

    def _resume(self, out: Path, optimizer: Any) -> tuple[str, int, list[dict]]:
        import mindspore as ms
        from mindspore import Tensor

        from openmind.ms.models.weights import load_state_dict, read_safetensors

        found = sorted(_complete_checkpoints(out), key=lambda p: int(p.name.split("-")[1]))
        if not found:
            raise T_NO_CHECKPOINT.error(f"{str(out)!r} holds no complete checkpoint to resume from", location="resume")
        latest = found[-1]
        params = dict(self.model.parameters_and_names())
        if self.args.finetuning.finetuning_type == "lora":
            from openmind.ms.models.lora import PEFT_PREFIX

            state = {
                k[len(PEFT_PREFIX) :]: v for k, v in read_safetensors(latest / "adapter_model.safetensors").items()
            }
        else:
            state = load_state_dict(latest)
        for name, value in state.items():
            if name in params:
                params[name].set_data(Tensor(value, dtype=params[name].dtype))
        ms.load_param_into_net(optimizer, ms.load_checkpoint(str(latest / "optimizer.ckpt")))
        saved = json.loads((latest / "trainer_state.json").read_text(encoding="utf-8"))
        print(f"resuming from {latest}", file=sys.stderr)  # as the PyTorch trainer says it
        return str(latest), int(saved["global_step"]), list(saved.get("log_history", []))

    # ---- launcher and export ---------------------------------------------------------------
    @classmethod
    def launch_command(cls, args: Any, argv: list[str]) -> list[str] | None:
        """``nproc > 1`` or ``nnodes > 1``: msrun (see :mod:`openmind.ms.training.distributed`)."""
        t = args.training
        if not cls.relaunches or (int(t.nproc) <= 1 and int(getattr(t, "nnodes", 1) or 1) <= 1):
            return None
        check_distributed(args, launching=True)  # before anything starts
        if getattr(args.finetuning, "stage", None) == "dpo":
            check_preference(args)  # OM-T014: dpo trains in one process
        from openmind.ms.training.distributed import msrun_command

        return msrun_command(args, argv)

    @classmethod
    def export(cls, args: Any) -> Path:
        return export_model(args)


#: the DPO loss variants the native trainer computes (:mod:`openmind.ms.training.preference`)
PREF_LOSSES = ("sigmoid",)


def check_preference(args: Any) -> None:
    """OM-T008 / OM-T014, naming the field, for what the native DPO does not implement."""
    ft, d, t = args.finetuning, args.data, args.training
    if ft.pref_loss not in PREF_LOSSES:
        raise T_BAD_SETUP.error(
            f"pref_loss {ft.pref_loss!r} is not available for dpo on MindSpore (native trainer: "
            f"{', '.join(PREF_LOSSES)})",
            location="pref_loss",
            hint="Use --pref-loss sigmoid, or train with --framework pt (trl) for hinge/ipo/robust.",
        )
    if d.packing:
        raise T_BAD_SETUP.error(
            "packing is not available for dpo on MindSpore (each chosen/rejected sequence is scored alone)",
            location="packing",
            hint="Drop --packing, or train with --framework pt.",
        )
    if int(t.nproc) > 1 or int(getattr(t, "nnodes", 1) or 1) > 1:
        raise T_DISTRIBUTED.error(
            f"dpo on MindSpore trains in one process (nproc={t.nproc}, nnodes={t.nnodes})",
            location="nproc" if int(t.nproc) > 1 else "nnodes",
            hint="Drop --nproc/--nnodes, or train dpo data-parallel with --framework pt.",
        )


def check_distributed(args: Any, *, launching: bool = False) -> None:
    """OM-T014 for the PyTorch engines (``--fsdp``, ``--deepspeed``): data parallel on MindSpore is
    msrun + gradient AllReduce, each rank holding the whole model; and for ``nproc``/``nnodes > 1``
    in a process msrun did not start (the Python API trains in its own process)."""
    t = args.training
    if t.fsdp or t.deepspeed:
        from openmind.core.training.errors import T_DISTRIBUTED

        engine = "--fsdp" if t.fsdp else "--deepspeed"
        raise T_DISTRIBUTED.error(
            f"{engine} is a PyTorch engine (accelerate); the native MindSpore trainer trains data-parallel "
            "(--nproc N through msrun), each process holding the whole model",
            location="fsdp" if t.fsdp else "deepspeed",
            hint="Drop it (--nproc N alone trains data-parallel on MindSpore), or train with --framework pt.",
        )
    if not launching and (t.nproc > 1 or t.nnodes > 1):
        from openmind.ms.training.distributed import launched_by_msrun

        if not launched_by_msrun():
            from openmind.core.training.errors import T_DISTRIBUTED

            raise T_DISTRIBUTED.error(
                f"nproc={t.nproc}, nnodes={t.nnodes}: data-parallel MindSpore training runs in processes started "
                "by msrun, which `openmind train` launches; this process was not started by it",
                location="nproc" if t.nproc > 1 else "nnodes",
                hint="Run `openmind train ... --nproc N` from the command line (it starts msrun), or drop --nproc/"
                "--nnodes to train in this process.",
            )


def _complete_checkpoints(out: Path) -> list[Path]:
    return [p for p in out.glob(f"{CHECKPOINT_PREFIX}*") if p.is_dir() and (p / CHECKPOINT_MARKER).is_file()]


def _peak_memory_mb() -> float | None:
    try:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    except (ImportError, OSError):
        return None


def _plot(path: Path, log: list[dict]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning(
            'plot_loss: matplotlib is not installed, no %s written (pip install "openmind-ms[plot]")', path.name
        )
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([e["step"] for e in log], [e["loss"] for e in log], label="train loss")
    evals = [e for e in log if "eval_loss" in e]
    if evals:
        ax.plot([e["step"] for e in evals], [e["eval_loss"] for e in evals], "o-", label="eval loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def parse_size(text: str) -> int:
    units = {"KB": 1e3, "MB": 1e6, "GB": 1e9, "KIB": 1024, "MIB": 1024**2, "GIB": 1024**3, "B": 1}
    value = str(text).strip().upper()
    for unit, factor in sorted(units.items(), key=lambda u: -len(u[0])):
        if value.endswith(unit):
            return int(float(value[: -len(unit)]) * factor)
    return int(value)


def export_model(args: Any) -> Path:
    """``openmind export`` on MindSpore: merge ``--adapter`` into ``--model`` natively, write sharded
    safetensors (HF names, ``{"format": "pt"}``), tokenizer and chat template."""
    from openmind.ms.models import auto
    from openmind.ms.models.lora import adapter_deltas, add_parameters
    from openmind.ms.models.weights import save_state_dict
    from openmind.nlp.pipelines.model import resolve_model_dir

    m, e = args.model, args.export
    out = Path(e.out)
    if out.exists() and any(out.iterdir()):
        raise T_EXPORT.error(f"export folder {str(out)!r} is not empty", location="out")
    if e.export_dtype == "bfloat16":
        raise T_EXPORT.error("bfloat16 export is not available on MindSpore", location="export_dtype")
    base = resolve_model_dir(m.model, revision=m.revision, hub=m.hub).path
    adapter = Path(os.path.expanduser(m.adapter)) if m.adapter else None
    if adapter is not None and not (adapter / "adapter_config.json").is_file():
        raise T_EXPORT.error(
            f"{str(adapter)!r} holds no LoRA adapter (adapter_config.json); a full fine-tuning run folder is a "
            "model already: pass it as --model without --adapter",
            location="adapter",
        )
    runtime.set_device("cpu")
    model, config = auto.load(base, "causal-lm")
    if adapter is not None:
        add_parameters(model, adapter_deltas(model, adapter))
    out.mkdir(parents=True, exist_ok=True)
    dtype = "float16" if e.export_dtype == "float16" else "float32"
    save_state_dict(auto.state_dict(model, dtype=dtype), out, max_shard_bytes=parse_size(e.max_shard_size))
    cfg = dict(config)
    cfg["dtype"] = dtype
    cfg.pop("torch_dtype", None)
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    source = adapter if adapter is not None and (adapter / "tokenizer_config.json").is_file() else Path(base)
    auto.copy_assets(source, out)
    for name in ("openmind_template.txt", "chat_template.jinja"):
        if (source / name).is_file() and not (out / name).is_file():
            shutil.copy(source / name, out / name)
    return out
