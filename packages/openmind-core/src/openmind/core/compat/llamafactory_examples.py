"""What each of LLaMA-Factory 0.9.5's example YAML files does in openmind.

The table is asserted, file by file, by ``packages/openmind-pt/tests/training/test_llamafactory_examples.py``
(each file run with only the model, output folder and tiny-run sizes overridden) and printed in
``docs/MIGRATING.md``. An example either runs (``RUNS``) or stops with a coded error that names the key
(its ``file:line``) or the field, and the fix.
"""

from __future__ import annotations

RUNS = "runs"

#: example file (relative to LLaMA-Factory's folder) -> (outcome, key or ``at: field``, what happens)
OUTCOMES: dict[str, tuple[str, str, str]] = {
    "examples/extras/adam_mini/qwen2_full_sft.yaml": ("OM-C002", "use_adam_mini", "Adam-mini is not in openmind"),
    "examples/extras/apollo/llama3_full_sft.yaml": (
        "OM-C002",
        "use_apollo",
        "use transformers' `optim: apollo_adamw` (pip install apollo-torch)",
    ),
    "examples/extras/asft/llama2_full_asft.yaml": ("OM-C002", "use_asft_loss", "the ASFT loss is not in openmind"),
    "examples/extras/asft/qwen2_full_asft.yaml": ("OM-C002", "use_asft_loss", "the ASFT loss is not in openmind"),
    "examples/extras/badam/llama3_full_sft.yaml": ("OM-C002", "use_badam", "BAdam is not in openmind"),
    "examples/extras/dft/qwen2_full_sft.yaml": ("OM-C002", "use_dft_loss", "the DFT loss is not in openmind"),
    "examples/extras/eaft/qwen25_05b_eaft_full.yaml": ("OM-C002", "use_eaft_loss", "the EAFT loss is not in openmind"),
    "examples/extras/fp8/llama3_fp8_deepspeed_sft.yaml": ("OM-C002", "fp8", "FP8 training is not in openmind"),
    "examples/extras/fp8/llama3_fp8_fsdp_sft.yaml": ("OM-C002", "fp8", "FP8 training is not in openmind"),
    "examples/extras/fsdp_qlora/llama3_lora_sft.yaml": (
        "OM-T005",
        "finetuning_type",
        "QLoRA (bitsandbytes) needs a CUDA device; runs there",
    ),
    "examples/extras/galore/llama3_full_sft.yaml": (
        "OM-C002",
        "use_galore",
        "use transformers' `optim: galore_adamw` (pip install galore-torch)",
    ),
    "examples/extras/llama_pro/llama3_freeze_sft.yaml": (
        "OM-C002",
        "use_llama_pro",
        "LLaMA Pro block expansion is not in openmind (finetuning_type freeze trains the last layers)",
    ),
    "examples/extras/loraplus/llama3_lora_sft.yaml": ("OM-C002", "loraplus_lr_ratio", "LoRA+ is not in openmind"),
    "examples/extras/mod/llama3_full_sft.yaml": (
        "OM-C002",
        "mixture_of_depths",
        "mixture-of-depths is not in openmind (and `optim: paged_adamw_8bit` needs bitsandbytes: OM-X001)",
    ),
    "examples/extras/muon/qwen2_full_sft.yaml": ("OM-C002", "use_muon", "Muon is not in openmind"),
    "examples/extras/nlg_eval/llama3_lora_predict.yaml": (
        "OM-C002",
        "do_predict",
        "prediction runs through `openmind eval` / `openmind run`",
    ),
    "examples/extras/oft/llama3_oft_sft.yaml": ("OM-C002", "finetuning_type", "OFT is not in openmind"),
    "examples/extras/oft/qwen2_5vl_oft_sft.yaml": ("OM-C002", "finetuning_type", "OFT is not in openmind"),
    "examples/extras/pissa/llama3_lora_sft.yaml": ("OM-C002", "pissa_init", "PiSSA init is not in openmind"),
    "examples/extras/qoft/llama3_oft_sft_awq.yaml": ("OM-C002", "finetuning_type", "OFT is not in openmind"),
    "examples/extras/qoft/llama3_oft_sft_bnb_npu.yaml": (
        "OM-C002",
        "double_quantization",
        "openmind's QLoRA always double-quantises; OFT is not in openmind",
    ),
    "examples/extras/qoft/llama3_oft_sft_gptq.yaml": ("OM-C002", "finetuning_type", "OFT is not in openmind"),
    "examples/inference/qwen3.yaml": (RUNS, "", "`openmind chat` with the file's template"),
    "examples/inference/qwen3_full_sft.yaml": (RUNS, "", "`openmind chat` with the file's template"),
    "examples/inference/qwen3_lora_sft.yaml": (RUNS, "", "`openmind chat` with the file's adapter and template"),
    "examples/inference/qwen3vl.yaml": (
        "OM-I102",
        "at: template",
        "runs with a Qwen3-VL folder (qwen3_vl_nothink renders text exactly as Qwen3-VL-Instruct's own "
        "template, which is then used); the test's tiny VL model is a Qwen2-VL, whose template differs, so here "
        "the named template is refused",
    ),
    "examples/merge_lora/qwen3_full_sft.yaml": (RUNS, "", "`openmind export` writes the model to export_dir"),
    "examples/merge_lora/qwen3_gptq.yaml": (
        "OM-C002",
        "export_quantization_bit",
        "GPTQ export is not in openmind (it exports unquantised safetensors)",
    ),
    "examples/merge_lora/qwen3_lora_sft.yaml": (RUNS, "", "`openmind export` merges the adapter into export_dir"),
    "examples/merge_lora/qwen3vl_lora_sft.yaml": (RUNS, "", "`openmind export` merges the VL adapter"),
    "examples/train_full/qwen3_full_sft.yaml": (
        "OM-T014",
        "deepspeed",
        "the DeepSpeed file needs the deepspeed package (pip install deepspeed)",
    ),
    "examples/train_full/qwen3vl_full_sft.yaml": (
        "OM-T014",
        "deepspeed",
        "the DeepSpeed file needs the deepspeed package (pip install deepspeed)",
    ),
    "examples/train_lora/qwen3_lora_dpo.yaml": (RUNS, "", "DPO with LoRA"),
    "examples/train_lora/qwen3_lora_kto.yaml": (
        "OM-T008",
        "per_device_train_batch_size",
        "KTO (trl) estimates its KL term from other rows of the batch: per_device_train_batch_size >= 2 "
        "(the file has 1); with 2 it trains, kto_tag honoured",
    ),
    "examples/train_lora/qwen3_lora_pretrain.yaml": (RUNS, "", "continued pre-training with LoRA"),
    "examples/train_lora/qwen3_lora_reward.yaml": (RUNS, "", "reward model with LoRA"),
    "examples/train_lora/qwen3_lora_sft.yaml": (RUNS, "", "SFT with LoRA"),
    "examples/train_lora/qwen3_lora_sft_ds3.yaml": (
        "OM-T014",
        "deepspeed",
        "the DeepSpeed file needs the deepspeed package (pip install deepspeed)",
    ),
    "examples/train_lora/qwen3_lora_sft_ray.yaml": (
        "OM-C002",
        "ray_num_workers",
        "Ray is not used: `--nproc N` (torchrun)",
    ),
    "examples/train_lora/qwen3_preprocess.yaml": (
        "OM-C002",
        "tokenized_path",
        "openmind caches prepared data itself; `openmind data prepare`",
    ),
    "examples/train_lora/qwen3vl_lora_dpo.yaml": (
        "OM-D009",
        "names: llamafactory/RLHF-V",
        "its dataset is on the Hugging Face hub: offline, refused at once (online it is downloaded)",
    ),
    "examples/train_lora/qwen3vl_lora_sft.yaml": (RUNS, "", "mm-sft with LoRA on images + text data"),
    "examples/train_qlora/llama3_lora_sft_aqlm.yaml": (RUNS, "", "LoRA on the model the file names"),
    "examples/train_qlora/llama3_lora_sft_awq.yaml": (RUNS, "", "LoRA on the model the file names"),
    "examples/train_qlora/llama3_lora_sft_gptq.yaml": (RUNS, "", "LoRA on the model the file names"),
    "examples/train_qlora/qwen3_lora_sft_bnb_npu.yaml": (
        "OM-C002",
        "double_quantization",
        "openmind's QLoRA always double-quantises: remove the key",
    ),
    "examples/train_qlora/qwen3_lora_sft_otfq.yaml": (
        "OM-T005",
        "finetuning_type",
        "QLoRA (bitsandbytes) needs a CUDA device; runs there",
    ),
}


def markdown_rows() -> list[list[str]]:
    """Rows of the table in docs/MIGRATING.md."""
    rows = []
    for name, (outcome, where, what) in OUTCOMES.items():
        short = name.removeprefix("examples/")
        if outcome == RUNS:
            rows.append([f"`{short}`", "runs", what])
        else:
            if where.startswith("names: "):
                at = f"`{where.removeprefix('names: ')}`"
            elif where.startswith("at: "):
                at = f"`{where.removeprefix('at: ')}`"
            else:
                at = f"`{where}` (file:line)"
            rows.append([f"`{short}`", f"{outcome} at {at}", what])
    return rows
