"""The MindSpeed backend: PyTorch training on Ascend NPUs through MindSpeed-LLM (Megatron-based).

openmind's unified training arguments and data are translated into MindSpeed-LLM's own steps
(``preprocess_data.py``, ``convert_ckpt_v2.py`` hf->mg, ``torchrun posttrain_gpt.py`` /
``pretrain_gpt.py``, ``convert_ckpt_v2.py`` mg->hf), which are then run as subprocesses from a
MindSpeed-LLM checkout. Import-guarded: nothing here imports torch, torch_npu or MindSpeed until a
trainer of this backend trains, and then only on Ascend (:mod:`openmind.pt.mindspeed.guard`).

Interface followed: Ascend/MindSpeed-LLM at commit c77308a14bfcb1aa7ca61da9c1aa24a893cb1b91
(2026-08-21): ``posttrain_gpt.py``, ``pretrain_gpt.py``, ``preprocess_data.py``,
``convert_ckpt_v2.py``, ``mindspeed_llm/features_manager/{finetune,dpo,convert_checkpoint,
megatron_basic}``, ``mindspeed_llm/tasks/preprocess/{data_handler,parser,utils}.py``,
``configs/finetune/templates.json`` and ``examples/mcore/{llama2,qwen25,qwen3}/*.sh``.
"""
