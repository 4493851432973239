"""Every label and message of the page, in English and Chinese.

The inputs of generated forms are labelled with their argument keys (``learning_rate``: the same
key as in YAML and ``--learning-rate``), which are identifiers and stay as they are in both
languages; everything else the page says is here.
"""

from __future__ import annotations

LANGUAGES = {"en": "English", "zh": "中文"}

STRINGS: dict[str, tuple[str, str]] = {
    # page
    "title": ("# openmind web UI", "# openmind 网页界面"),
    "language": ("Language", "语言"),
    # tabs
    "tab_chat": ("Chat", "对话"),
    "tab_data": ("Data", "数据"),
    "tab_train": ("Train", "训练"),
    "tab_eval": ("Evaluate", "评测"),
    "tab_serve": ("Serve", "部署"),
    "tab_hub": ("Hub", "模型仓库"),
    "tab_support": ("Support matrix", "支持矩阵"),
    # chat
    "chat_load": ("Load model", "加载模型"),
    "chat_unload": ("Unload", "卸载"),
    "chat_status": ("Model status", "模型状态"),
    "chat_params": ("Generation parameters", "生成参数"),
    "chat_stream": ("Stream the answer", "流式输出"),
    "chat_box": ("Conversation", "对话记录"),
    "chat_message": ("Message", "消息"),
    "chat_image": (
        "Image for the next message (vision-language models)",
        "随下一条消息发送的图片（视觉语言模型）",
    ),
    "chat_send": ("Send", "发送"),
    "chat_clear": ("Clear conversation", "清空对话"),
    "chat_not_loaded": (
        "No model loaded: fill in the model and press Load model.",
        "尚未加载模型：请填写模型并点击“加载模型”。",
    ),
    "chat_loaded": (
        "Loaded {model} (framework {framework}, template {template}).",
        "已加载 {model}（框架 {framework}，模板 {template}）。",
    ),
    "chat_unloaded": ("Model unloaded.", "模型已卸载。"),
    # data
    "data_dataset": ("Dataset: registered name, file or folder", "数据集：已注册名称、文件或文件夹"),
    "data_dataset_dir": ("Folder with dataset_info.json (optional)", "包含 dataset_info.json 的文件夹（可选）"),
    "data_stage": ("Stage (format to check against)", "训练阶段（按其格式检查）"),
    "data_model": ("Model or tokenizer folder (for the preview)", "模型或分词器文件夹（用于预览）"),
    "data_validate": ("Validate", "校验"),
    "data_preview": ("Preview", "预览"),
    "data_report": ("Validation report", "校验报告"),
    "data_problems": ("Problems (where, why)", "问题（位置、原因）"),
    "data_rendered": ("Rendered samples (trained spans between « »)", "渲染后的样本（训练部分以 « » 标出）"),
    "data_previewed": ("{n} samples rendered with the model's template.", "已用模型模板渲染 {n} 个样本。"),
    "data_ok": (
        "{rows} rows read, {kept} valid, {rejected} rejected.",
        "读取 {rows} 行，有效 {kept} 行，拒绝 {rejected} 行。",
    ),
    # train
    "train_groups_help": (
        "Every field below is an argument of `openmind train` (same key as in the YAML file).",
        "以下每个字段都是 `openmind train` 的参数（与 YAML 文件中的键相同）。",
    ),
    "group_model": ("Model", "模型"),
    "group_template": ("Template", "模板"),
    "group_data": ("Data", "数据"),
    "group_finetuning": ("Fine-tuning", "微调"),
    "group_training": ("Training", "训练"),
    "train_preview": ("Preview YAML", "预览 YAML"),
    "train_start": ("Start training", "开始训练"),
    "train_stop": ("Stop", "停止"),
    "train_resume": ("Resume", "继续训练"),
    "train_refresh": ("Refresh", "刷新"),
    "train_yaml": ("The YAML it runs (openmind train CONFIG.yaml)", "执行的 YAML（openmind train CONFIG.yaml）"),
    "train_runs": ("Runs (started here or from the CLI)", "训练任务（本页面或命令行启动）"),
    "train_loss": ("Training loss", "训练损失"),
    "train_log": ("Log (last lines)", "日志（最后几行）"),
    "train_started": ("Started: {cmd}", "已启动：{cmd}"),
    "train_stopped": ("Stopped {run}.", "已停止 {run}。"),
    "train_not_running": ("{run} is not running.", "{run} 未在运行。"),
    "train_no_run": ("No run selected.", "未选择训练任务。"),
    "status_running": ("running", "运行中"),
    "status_finished": ("finished", "已完成"),
    "status_stopped": ("stopped", "已停止"),
    "train_progress": (
        "**{status}** · step {step} / {total} · elapsed {elapsed} · ETA {eta} · last loss {loss}\n\nRun folder: `{path}`",
        "**{status}** · 步数 {step} / {total} · 已用时 {elapsed} · 预计剩余 {eta} · 最新损失 {loss}\n\n输出文件夹：`{path}`",
    ),
    # eval
    "eval_start": ("Start evaluation", "开始评测"),
    "eval_stop": ("Stop evaluation", "停止评测"),
    "eval_status": ("Evaluation status", "评测状态"),
    "eval_results": ("Results", "评测结果"),
    "eval_samples": ("Per-sample view", "逐样本查看"),
    "eval_sample_task": ("Task to show samples of", "查看样本的任务"),
    # serve
    "serve_start": ("Start server", "启动服务"),
    "serve_stop": ("Stop server", "停止服务"),
    "serve_snippets": ("How to call it", "调用方式"),
    "serve_log": ("Server log (last lines)", "服务日志（最后几行）"),
    "serve_up": (
        "**up** · endpoint `{endpoint}` · requests served {requests} · batches {batches} · queued {queued}",
        "**运行中** · 接口地址 `{endpoint}` · 已处理请求 {requests} · 批次 {batches} · 排队 {queued}",
    ),
    "serve_starting": ("**starting** · `{endpoint}` (loading the model)", "**启动中** · `{endpoint}`（正在加载模型）"),
    "serve_down": ("**not running**", "**未运行**"),
    # hub
    "hub_id": ("Model id (hf::org/name, om::org/name, ...)", "模型 ID（hf::org/name、om::org/name 等）"),
    "hub_revision": ("Revision (empty: default branch)", "版本（留空为默认分支）"),
    "hub_pull": ("Pull", "下载"),
    "hub_progress": ("Download progress", "下载进度"),
    "hub_cache": ("Cache", "缓存"),
    "hub_refresh": ("Refresh cache list", "刷新缓存列表"),
    "hub_verify": ("Verify", "校验"),
    "hub_remove": ("Remove from cache", "从缓存删除"),
    "hub_selected": ("Cached repository (hub:org/name)", "缓存的仓库（hub:org/name）"),
    "hub_result": ("Result", "结果"),
    # support matrix
    "support_section": ("Section", "类别"),
    "support_search": ("Search", "搜索"),
    "support_table": ("Registered by the installed openmind packages", "已安装的 openmind 软件包注册的内容"),
    # generic
    "error": ("Error", "错误"),
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The text of ``key`` in ``lang`` (English when a language lacks it), formatted with ``values``."""
    en, zh = STRINGS[key]
    text = zh if lang == "zh" else en
    return text.format(**values) if values else text
