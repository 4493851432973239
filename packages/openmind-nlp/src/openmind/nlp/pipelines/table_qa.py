"""``table-question-answering``: answer a question about a table (TAPAS-style models)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openmind.core.errors import I_BAD_INPUT
from openmind.nlp.pipelines.wrapper import PipelineWrapper, type_name


@dataclass(frozen=True)
class TableQuestionAnsweringParams:
    """transformers' table-question-answering parameters (same names, same defaults)."""

    sequential: bool = False
    padding: bool | str = True
    truncation: bool | str = True

    def check(self) -> None:
        return None


def _check_table(table: Any, where: str) -> dict[str, list[str]]:
    """A table as ``{column: [cells]}`` (all columns equally long, cells as strings)."""
    if isinstance(table, list) and table and all(isinstance(r, dict) for r in table):  # records
        columns = list(table[0])
        table = {c: [row.get(c, "") for row in table] for c in columns}
    if not isinstance(table, dict) or not table:
        raise I_BAD_INPUT.error(
            f"{where}: field 'table' must be a mapping column -> list of cells (or a list of row mappings); "
            f"got {type_name(table)}",
            location=f"{where} field 'table'",
        )
    lengths = {c: len(v) if isinstance(v, list) else -1 for c, v in table.items()}
    if -1 in lengths.values() or len(set(lengths.values())) != 1:
        raise I_BAD_INPUT.error(
            f"{where}: every column of 'table' must be a list of the same length; lengths: {lengths}",
            location=f"{where} field 'table'",
        )
    return {str(c): [str(cell) for cell in cells] for c, cells in table.items()}


class TableQuestionAnsweringPipeline(PipelineWrapper):
    """A table and a question in, ``{"answer", "coordinates", "cells", "aggregator"}`` out.

    Example::

        tqa = pipeline("table-question-answering", model="./tapas-wtq")
        table = {"Repository": ["transformers", "datasets"], "Stars": ["36542", "4512"]}
        tqa(table=table, query="How many stars does the transformers repository have?")

    Options: ``sequential``, ``padding``, ``truncation`` (as transformers').
    """

    task = "table-question-answering"
    params_cls = TableQuestionAnsweringParams
    accepts = "a {table, query} mapping"
    record_keys = ("query",)

    def check_item(self, item: Any, index: int | None) -> dict[str, Any]:
        where = f"input[{index}]" if index is not None else "input"
        if not isinstance(item, dict):
            raise I_BAD_INPUT.error(
                f"task 'table-question-answering' takes {{table, query}} mappings; got {type_name(item)} at {where}",
                location=where,
            )
        query = item.get("query", item.get("question"))
        if not isinstance(query, str) or not query.strip():
            raise I_BAD_INPUT.error(
                f"{where}: field 'query' must be a non-empty string", location=f"{where} field 'query'"
            )
        return {"table": _check_table(item.get("table"), where), "query": query}

    def split(self, inputs: Any) -> tuple[bool, list[Any]]:
        if isinstance(inputs, dict):
            return True, [self.check_item(inputs, None)]
        return super().split(inputs)

    def from_record(self, record: Any, where: str) -> Any:
        return record

    def __call__(self, inputs: Any = None, *, table: Any = None, query: Any = None, **params: Any) -> Any:
        if inputs is None:
            if isinstance(query, list):
                inputs = [{"table": table, "query": q} for q in query]
            else:
                inputs = {"table": table, "query": query}
        return super().__call__(inputs, **params)

    def to_text(self, output: Any) -> str:
        return output["answer"]
