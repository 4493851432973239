"""Error codes of templates (``OM-TP0xx``) and model-group matching (``OM-M2xx``)."""

from __future__ import annotations

from openmind.core.errors import ModelError, TemplateError, define

TP_NO_TEMPLATE = define(
    "OM-TP001",
    "No chat template for this model",
    "Pass --template NAME (see `openmind list templates`) or --model-group NAME; a tokenizer with "
    "a chat_template is used as is.",
    TemplateError,
)
TP_BAD_MESSAGES = define(
    "OM-TP002",
    "Conversation does not fit the template",
    "Messages are a list of {role, content} with roles system/user/assistant/tool; check the order "
    "the template expects (e.g. a system message first).",
    TemplateError,
)
TP_RENDER = define(
    "OM-TP003",
    "Template failed to render",
    "The chat template raised while rendering; check the conversation against the model's expected format.",
    TemplateError,
)
TP_UNKNOWN = define(
    "OM-TP004",
    "Unknown template",
    "Pass one of the names `openmind list templates` shows, or omit --template to use the model group's "
    "template or the tokenizer's own chat_template.",
    TemplateError,
)
TP_BAD_TRAIN_ON = define(
    "OM-TP005",
    "Unknown train_on value",
    "train_on is one of: assistant (every assistant turn), last (the last assistant turn), all (every token).",
    TemplateError,
)

M_NO_GROUP = define(
    "OM-M201",
    "Model does not match any model group",
    "Pass --model-group NAME (see `openmind list models`) or --template NAME; a tokenizer with a "
    "chat_template works without either.",
    ModelError,
)
M_AMBIGUOUS_GROUP = define(
    "OM-M202",
    "Model matches several model groups",
    "Pass --model-group NAME with one of the candidates (or --template NAME) to choose.",
    ModelError,
)
M_UNKNOWN_GROUP = define(
    "OM-M203",
    "Unknown model group",
    "Pass one of the names `openmind list models` shows.",
    ModelError,
)
M_BAD_CONFIG = define(
    "OM-M204",
    "Unreadable model config",
    "The model folder needs a valid config.json (JSON object with 'architectures' or 'model_type').",
    ModelError,
)
