"""``question-answering`` on transformers: ``AutoModelForQuestionAnswering`` + span decoding.

transformers 5 dropped its question-answering pipeline; this is the same procedure openMind 1.0
ran through it: the context is cut into windows of ``max_seq_len`` tokens overlapping by
``doc_stride``; per window, start/end logits outside the context are masked, each is
softmax-normalised, the CLS position is taken out (kept as the "no answer" score when
``handle_impossible_answer``), and the best ``top_k`` spans ``start <= end < start +
max_answer_len`` by ``p(start) * p(end)`` across windows are mapped back to character offsets.
"""

from __future__ import annotations

from typing import Any

from openmind.core.api import read_config
from openmind.nlp.pipelines.base import LoadOptions, Pipeline
from openmind.pt.device import import_torch
from openmind.pt.pipelines.loading import check_head, dtype_name, load_model, load_tokenizer


class TorchQuestionAnswering(Pipeline):
    framework = "pt"
    backend = "transformers"

    def __init__(self, model: Any, tokenizer: Any, *, model_dir: str, device: str, dtype: Any) -> None:
        self.task = "question-answering"
        self.model = model
        self.tokenizer = tokenizer
        self.model_dir = model_dir
        self.device = device
        self.dtype = dtype_name(dtype)

    @classmethod
    def load(cls, model_dir: str, options: LoadOptions) -> TorchQuestionAnswering:
        from transformers import AutoModelForQuestionAnswering

        check_head(read_config(model_dir), options.task, model_dir)
        tokenizer = load_tokenizer(model_dir, options, padding_side="right")
        model, device, dtype = load_model(model_dir, AutoModelForQuestionAnswering, options)
        return cls(model, tokenizer, model_dir=model_dir, device=device, dtype=dtype)

    def encode(self, item: dict[str, str], params: Any) -> Any:
        question = item["question"].lstrip()  # leading spaces make some tokenizers fail (as transformers)
        ids = self.tokenizer(question, add_special_tokens=False)["input_ids"]
        if len(ids) > params.max_question_len:
            question = self.tokenizer.decode(ids[: params.max_question_len])
        return self.tokenizer(
            question,
            item["context"],
            truncation="only_second",
            max_length=params.max_seq_len,
            stride=min(params.doc_stride, params.max_seq_len // 2),
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding=True,
            return_tensors="pt",
        )

    def preprocess(self, inputs: list[dict[str, str]], params: Any) -> list[tuple[dict[str, str], Any]]:
        return [(item, self.encode(item, params)) for item in inputs]

    def forward(self, features: list[tuple[dict[str, str], Any]], params: Any) -> list[tuple[Any, Any, Any, Any]]:
        torch = import_torch()
        names = ("input_ids", "attention_mask", "token_type_ids")
        out = []
        with torch.inference_mode():
            for item, enc in features:
                batch = {k: enc[k].to(self.device) for k in names if k in enc}
                result = self.model(**batch)
                out.append((item, enc, result.start_logits.float().cpu(), result.end_logits.float().cpu()))
        return out

    def postprocess(self, outputs: list[tuple[Any, Any, Any, Any]], params: Any) -> list[list[dict[str, Any]]]:
        torch = import_torch()
        results = []
        for item, enc, start_logits, end_logits in outputs:
            context = item["context"]
            candidates: list[dict[str, Any]] = []
            null_score = 1.0
            for w in range(start_logits.shape[0]):
                sequence_ids = enc.sequence_ids(w)
                cls_index = [i for i, t in enumerate(enc["input_ids"][w].tolist()) if t == self.tokenizer.cls_token_id]
                wanted = torch.tensor([s == 1 for s in sequence_ids])
                for i in cls_index:
                    wanted[i] = True
                wanted &= enc["attention_mask"][w].bool()
                start = torch.softmax(start_logits[w].masked_fill(~wanted, -10000.0), -1)
                end = torch.softmax(end_logits[w].masked_fill(~wanted, -10000.0), -1)
                if params.handle_impossible_answer:
                    null_score = min(null_score, float(start[0] * end[0]))
                start[0] = end[0] = 0.0
                scores = torch.triu(start[:, None] * end[None, :])
                scores = torch.tril(scores, params.max_answer_len - 1)
                context_mask = torch.tensor([s == 1 for s in sequence_ids])
                scores[~context_mask, :] = 0.0
                scores[:, ~context_mask] = 0.0
                flat = scores.flatten()
                k = min(params.top_k, int((flat > 0).sum()) or 1)
                values, indices = flat.topk(k)
                offsets = enc["offset_mapping"][w].tolist()
                width = scores.shape[1]
                for value, index in zip(values.tolist(), indices.tolist()):
                    s, e = divmod(index, width)
                    if not (context_mask[s] and context_mask[e]):
                        continue
                    begin, finish = offsets[s][0], offsets[e][1]
                    candidates.append({"score": value, "start": begin, "end": finish, "answer": context[begin:finish]})
            if params.handle_impossible_answer:
                candidates.append({"score": null_score, "start": 0, "end": 0, "answer": ""})
            candidates.sort(key=lambda c: -c["score"])
            results.append(candidates[: params.top_k])
        return results
