"""Error codes owned by openmind-data (``OM-D0xx``). Messages name the file, line/row and field."""

from __future__ import annotations

from openmind.core.errors import DataError, define

D_BAD_ROW = define(
    "OM-D001",
    "Invalid row",
    "Fix the row (the message names the file, line and field), or pass --on-error skip to set it aside: "
    "skipped rows are counted and written to a side file.",
    DataError,
)
D_BAD_LINE = define(
    "OM-D002",
    "Malformed line in a data file",
    "Each line of a .jsonl file must be one complete JSON object; fix the line or pass --on-error skip.",
    DataError,
)
D_NOT_FOUND = define(
    "OM-D003",
    "Dataset not found",
    "Pass a file or folder that exists, or a dataset name registered in DATASET_DIR/dataset_info.json "
    "(or a *.dataset.yaml file); `openmind data validate --help` shows the accepted forms.",
    DataError,
)
D_FILE_TYPE = define(
    "OM-D004",
    "Unsupported data file type",
    "Use .json, .jsonl, .csv, .txt (one text per line), .parquet or .arrow files (or a folder of them).",
    DataError,
)
D_BAD_REGISTRY = define(
    "OM-D005",
    "Invalid dataset registration",
    "A dataset entry needs file_name (or hf_hub_url / ms_hub_url / om_hub_url), an optional formatting "
    "(alpaca, sharegpt, openai, sft, pretrain, preference) and optional columns/tags mappings.",
    DataError,
)
D_FORMAT = define(
    "OM-D006",
    "Cannot tell the data format",
    "Pass --formatting alpaca|sharegpt|openai|sft|pretrain|preference, or map the columns in a dataset entry.",
    DataError,
)
D_TOO_LONG = define(
    "OM-D007",
    "Sample longer than cutoff_len",
    "Raise --cutoff-len, or choose --truncation right|left (cut) or drop (leave the sample out, counted).",
    DataError,
)
D_EMPTY = define(
    "OM-D008",
    "No usable rows",
    "Every row was rejected, dropped or the input is empty; look at the reported problems and the side file.",
    DataError,
)
D_HUB = define(
    "OM-D009",
    "Hub dataset unavailable",
    "The hub cannot be reached or the dataset id is wrong; download the files and register them with file_name.",
    DataError,
)
D_COLUMN = define(
    "OM-D010",
    "Mapped column missing",
    "The columns mapping names a column the file does not have; fix the mapping or the file.",
    DataError,
)
D_TEMPLATE = define(
    "OM-D011",
    "Row does not fit the template",
    "The chat template refused this conversation (e.g. roles out of the order it expects); fix the row, "
    "pick another --template or pass --on-error skip.",
    DataError,
)
D_STAGE = define(
    "OM-D012",
    "Data does not match the training stage",
    "pt needs text rows, sft conversations, dpo/rm chosen/rejected pairs; check --stage and --formatting.",
    DataError,
)
D_ENCODING = define(
    "OM-D013",
    "Data file is not UTF-8",
    "openmind reads data files as UTF-8; convert the file (the message names the file and line), e.g. with "
    "`iconv -f GB18030 -t UTF-8` for Chinese GBK files or `iconv -f LATIN1 -t UTF-8` for Western European ones.",
    DataError,
)
D_MEDIA = define(
    "OM-D014",
    "Media file unusable",
    "The message names the row and the media entry (images[i], videos[i], audios[i]): fix the path (relative "
    "paths are looked up in --media-dir, beside the data file, then in --dataset-dir), replace the file, list a "
    "video under videos with a <video> placeholder, or pass --on-error skip to set the row aside.",
    DataError,
)
D_MEDIA_MODEL = define(
    "OM-D015",
    "Media rows do not fit the model",
    "Multimodal rows need a vision-language model folder with an image processor (preprocessor_config.json) "
    "and a chat template; the message says what is missing or which media the model cannot take.",
    DataError,
)
