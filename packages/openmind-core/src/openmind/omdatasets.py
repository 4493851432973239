"""openMind 1.0's ``OmDataset``: ``OmDataset.load_dataset(path, ...)`` returns a ``datasets`` dataset.

A local folder or file is read by ``datasets.load_dataset`` (its packaged json/csv/parquet/text
builders, as 1.0 did after downloading); a hub id is first downloaded through openmind's hub layer
(:func:`openmind.utils.hub.snapshot_download`), then read the same way. ``datasets`` is imported
on call, never on ``import openmind``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

_SUFFIX_BUILDERS = {
    ".json": "json",
    ".jsonl": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".txt": "text",
}


class OmDataset:
    @staticmethod
    def load_dataset(
        path: str | None = None,
        name: str | None = None,
        revision: str | None = "main",
        split: str | None = None,
        data_dir: str | None = None,
        data_files: str | Sequence[str] | Mapping[str, str | Sequence[str]] | None = None,
        download_mode: Any = None,
        cache_dir: str | None = None,
        token: str | None = None,
        dataset_info_only: bool | None = False,
        trust_remote_code: bool | None = None,
        streaming: bool = False,
        **config_kwargs: Any,
    ):
        """1.0's signature; returns what ``datasets.load_dataset`` returns for the same files."""
        from openmind.core.compat.errors import C_REMOVED

        if not path:
            raise C_REMOVED.error("OmDataset.load_dataset needs a path (a local folder/file or a hub id)")
        if dataset_info_only:
            raise C_REMOVED.error(
                "OmDataset.load_dataset(dataset_info_only=True) is not supported",
                hint="Read the repository's files after `openmind pull`, or use `openmind data inspect`.",
            )
        if trust_remote_code:
            raise C_REMOVED.error(
                "dataset loading scripts (trust_remote_code=True) are not run by openmind",
                hint="Point path at the data files (json, jsonl, csv, parquet, arrow, txt).",
            )
        try:
            import datasets
        except ImportError:
            from openmind.core.errors import X_MISSING

            raise X_MISSING.error(
                "OmDataset.load_dataset needs the `datasets` package", hint='pip install "openmind[data]" (or datasets)'
            ) from None

        kwargs: dict[str, Any] = dict(
            name=name, split=split, data_dir=data_dir, data_files=data_files, cache_dir=cache_dir, streaming=streaming
        )
        if download_mode is not None:
            kwargs["download_mode"] = download_mode
        kwargs.update(config_kwargs)
        if os.path.isfile(path):
            builder = _SUFFIX_BUILDERS.get(os.path.splitext(path)[1].lower())
            if builder is None:
                raise C_REMOVED.error(f"{path!r}: unsupported data file type", location=path)
            kwargs["data_files"] = path
            kwargs.pop("name")
            return datasets.load_dataset(builder, **kwargs)
        if not os.path.isdir(path):
            from openmind.utils.hub import snapshot_download

            path = snapshot_download(path, revision=revision, token=token, cache_dir=cache_dir)
        return datasets.load_dataset(path, **kwargs)
