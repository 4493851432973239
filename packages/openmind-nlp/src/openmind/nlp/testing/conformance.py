"""The shared conformance suite: one base test class per task, parametrised only by framework.

A backend package subclasses each class with its framework and the fixtures/reference functions
below, so every backend is held to the same contract (:mod:`openmind.nlp.pipelines.base`)::

    # packages/openmind-pt/tests/test_conformance.py
    from openmind.nlp.testing import conformance as C

    class TestChat(C.ChatConformance):
        framework = "pt"
        def reference_greedy(self, model_dir, prompt_ids, max_new_tokens): ...

Fixtures a subclass (or its conftest) provides, all paths of model folders:

=========================  ====================================================================
``chat_model_dir``         a causal LM with a real tokenizer and a chat template (parametrise it
                           over tokenizers: Llama-2, Mistral)
``minilm_dir``             the pretrained all-MiniLM-L6-v2 sentence encoder
``seq_cls_model_dir``      a sequence classifier (labels in ``id2label``)
``token_cls_model_dir``    a token classifier whose labels include ``O`` and B-/I- tags
``masked_lm_model_dir``    a masked LM with a tokenizer that has a mask token
=========================  ====================================================================

Reference functions (the framework's own, without openmind) are methods named ``reference_*``.
The classes are not collected on their own (their names do not start with ``Test``).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NoReturn

import pytest

from openmind.core.errors import OpenMindError

CONVERSATIONS = [
    [{"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "What is the capital of France? Answer in one word."}],
    [
        {"role": "user", "content": "Name a colour."},
        {"role": "assistant", "content": "Blue."},
        {"role": "user", "content": "And another one, please, a bit longer this time?"},
    ],
    [{"role": "user", "content": "Zwei plus zwei ist"}],
    [{"role": "user", "content": "A much longer prompt with many many words in it, so that padding really matters."}],
]


def backend_hook_missing(case: object, hook: str) -> NoReturn:
    """Fail the test, naming the reference hook the backend's subclass did not provide."""
    pytest.fail(
        f"{type(case).__name__} does not define {hook}(): each backend's conformance subclass provides "
        "the framework's own reference (see openmind.nlp.testing.conformance)",
        pytrace=False,
    )


def raises_code(code: str):
    """``with raises_code("OM-I003"):`` — an OpenMindError with that code."""

    class _Ctx:
        def __enter__(self):
            self.ctx = pytest.raises(OpenMindError)
            self.info = self.ctx.__enter__()
            return self.info

        def __exit__(self, *exc):
            handled = self.ctx.__exit__(*exc)
            assert self.info.value.code == code, f"expected {code}, got {self.info.value.code}: {self.info.value}"
            return handled

    return _Ctx()


class Conformance:
    """(The task suites below check openmind's structured outputs, ``return_format="openmind"``;
    the default 1.0 / transformers shapes are compared with transformers' own pipelines in the
    PyTorch package's tests.)"""

    framework: ClassVar[str] = ""

    def make(self, task: str, model_dir: Any, **kwargs: Any) -> Any:
        from openmind import pipeline

        return pipeline(task, model=str(model_dir), framework=self.framework, **kwargs)


class ChatConformance(Conformance):
    """``chat``: greedy output equals the framework's raw generate token for token; batching and
    streaming do not change results; stop strings, history, system prompt, logprobs, loglikelihood."""

    max_new_tokens: ClassVar[int] = 12

    def reference_greedy(self, model_dir: str, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
        """The framework's own greedy generate on ``prompt_ids``: the new token ids (EOS included)."""
        backend_hook_missing(self, "reference_greedy")

    def reference_apply_chat_template(self, model_dir: str, messages: list[dict]) -> list[int]:
        """The tokenizer's own ``apply_chat_template(messages, add_generation_prompt=True)`` ids."""
        backend_hook_missing(self, "reference_apply_chat_template")

    @pytest.fixture(scope="class")
    def chat(self, chat_model_dir):
        return self.make("chat", chat_model_dir, max_new_tokens=self.max_new_tokens, temperature=0)

    def test_prompt_is_the_models_chat_template(self, chat, chat_model_dir):
        pipe = self.make("chat", chat_model_dir, template="jinja", temperature=0)
        for conversation in CONVERSATIONS:
            assert pipe.prompt(conversation, {}) == self.reference_apply_chat_template(chat_model_dir, conversation)

    def test_greedy_equals_reference_generate(self, chat, chat_model_dir):
        for conversation in CONVERSATIONS[:3]:
            ids = chat.prompt(conversation, {})
            generation = chat.generate([conversation])[0]
            reference = self.reference_greedy(str(chat_model_dir), ids, self.max_new_tokens)
            assert generation.token_ids == reference[: len(generation.token_ids)]
            assert len(generation.token_ids) == len(reference) or reference[len(generation.token_ids)] in (
                chat.backend.eos_ids
            )
            assert generation.prompt_tokens == len(ids)
            assert chat(conversation)["content"] == chat.backend.tokenizer.decode(
                generation.token_ids, skip_special_tokens=True
            )

    def test_batched_equals_unbatched(self, chat):
        single = [chat(c) for c in CONVERSATIONS]
        assert chat(CONVERSATIONS, batch_size=4) == single
        assert chat(CONVERSATIONS, batch_size=len(CONVERSATIONS)) == single
        tokens = [g.token_ids for g in chat.generate(CONVERSATIONS, batch_size=5)]
        assert tokens == [chat.generate([c])[0].token_ids for c in CONVERSATIONS]

    def test_streaming_equals_non_streaming(self, chat):
        for conversation in CONVERSATIONS[:3]:
            deltas = list(chat(conversation, stream=True))
            assert "".join(deltas) == chat(conversation)["content"]
            assert len(deltas) > 1

    def test_stop_string_ends_and_is_stripped(self, chat):
        full = chat(CONVERSATIONS[0], max_new_tokens=24)["content"]
        stop = full[len(full) // 2 : len(full) // 2 + 3]
        assert stop.strip()
        expected = full[: full.index(stop)]
        generation = chat.generate([CONVERSATIONS[0]], max_new_tokens=24, stop=[stop])[0]
        assert generation.text == expected
        assert generation.finish_reason == "stop"
        assert len(generation.token_ids) < 24
        assert "".join(chat(CONVERSATIONS[0], max_new_tokens=24, stop=[stop], stream=True)) == expected
        batched = chat.generate(CONVERSATIONS[:3], max_new_tokens=24, stop=[stop], batch_size=3)
        assert batched[0].text == expected

    def test_length_finish_reason(self, chat):
        generation = chat.generate([CONVERSATIONS[1]], max_new_tokens=3)[0]
        assert generation.completion_tokens <= 3
        assert generation.finish_reason == ("length" if generation.completion_tokens == 3 else "stop")

    def test_history_and_session(self, chat):
        session = chat.session()
        first = session.send("Name a colour.")
        second = "".join(session.send("And another one?", stream=True))
        assert [m["role"] for m in session.history] == ["user", "assistant", "user", "assistant"]
        conversation = [
            {"role": "user", "content": "Name a colour."},
            {"role": "assistant", "content": first},
            {"role": "user", "content": "And another one?"},
        ]
        assert second == chat(conversation)["content"]
        session.clear()
        assert session.history == []

    def test_system_prompt(self, chat):
        messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}]
        rendered = chat.render(CONVERSATIONS[0], system="You are terse.")
        assert "You are terse." in rendered
        assert chat(CONVERSATIONS[0], system="You are terse.") == chat(messages)
        assert chat.prompt(CONVERSATIONS[0], {"system": "You are terse."}) != chat.prompt(CONVERSATIONS[0], {})

    def test_per_request_params_in_one_call(self, chat):
        from openmind.nlp.pipelines.base import GenerationParams

        params = [GenerationParams.build(chat.defaults, max_new_tokens=n) for n in (2, 5, 2)]
        prompts = [chat.prompt(c, {}) for c in CONVERSATIONS[:3]]
        together = chat.backend.generate(prompts, params, batch_size=4)
        alone = [chat.backend.generate([p], q)[0] for p, q in zip(prompts, params, strict=True)]
        assert [g.token_ids for g in together] == [g.token_ids for g in alone]
        assert [len(g.token_ids) <= q.max_new_tokens for g, q in zip(together, params, strict=True)] == [True] * 3

    def test_logprobs_and_loglikelihood(self, chat):
        generation = chat.generate([CONVERSATIONS[0]], max_new_tokens=6, logprobs=True, top_logprobs=3)[0]
        assert len(generation.logprobs) == len(generation.token_ids)
        for item, token in zip(generation.logprobs, generation.token_ids, strict=True):
            assert item.token_id == token
            assert item.logprob <= 0
            # greedy: the chosen token is the best alternative
            assert item.top[0][1] == pytest.approx(item.logprob, abs=1e-5)
            assert [t[1] for t in item.top] == sorted((t[1] for t in item.top), reverse=True)
        tokenizer = chat.backend.tokenizer
        context = "The capital of France is"
        greedy = chat.backend.generate([context], chat.defaults.__class__.build(max_new_tokens=4, temperature=0))[0]
        continuation = tokenizer.decode(greedy.token_ids, skip_special_tokens=True)
        (logp, is_greedy), (other_logp, other_greedy) = chat.loglikelihood(
            [(context, continuation), (context, " zebra zebra")]
        )
        assert logp < 0 and other_logp < 0
        if tokenizer(context + continuation)["input_ids"] == tokenizer(context)["input_ids"] + greedy.token_ids:
            assert is_greedy
            expected = sum(
                t.logprob
                for t in chat.backend.generate(
                    [context], chat.defaults.__class__.build(max_new_tokens=4, temperature=0, logprobs=True)
                )[0].logprobs
            )
            assert logp == pytest.approx(expected, abs=1e-3)
        assert not other_greedy
        # the sum over the continuation tokens of the whole sequence's token logprobs
        ctx_ids = tokenizer(context)["input_ids"]
        whole = tokenizer(context + " zebra zebra")["input_ids"]
        assert whole[: len(ctx_ids)] == ctx_ids
        scored = chat.backend.prompt_logprobs([whole])[0]
        assert other_logp == pytest.approx(sum(t.logprob for t in scored[len(ctx_ids) :]), abs=1e-3)
        alone = chat.loglikelihood([(context, continuation)], batch_size=1)[0]
        together = chat.loglikelihood([(context, continuation), (context, " zebra zebra")], batch_size=2)[0]
        assert alone[0] == pytest.approx(together[0], abs=1e-4) and alone[1] == together[1]

    def test_cancel(self, chat):
        prompts = [chat.prompt(c, {}) for c in CONVERSATIONS[:2]]
        out = chat.backend.generate(
            prompts, chat.defaults, batch_size=2, is_cancelled=lambda i: i == 1, on_text=lambda i, d: None
        )
        assert out[1].finish_reason == "cancelled" and out[1].completion_tokens <= 1
        assert out[0].token_ids == chat.generate([CONVERSATIONS[0]])[0].token_ids

    def test_bad_inputs_are_coded(self, chat):
        with raises_code("OM-I003"):
            chat(123)
        with raises_code("OM-I003") as info:
            chat([{"role": "bogus", "content": "x"}])
        assert "role" in info.value.location
        with raises_code("OM-I003"):
            chat([{"role": "user", "content": 5}])
        with raises_code("OM-I102"):
            chat("Hi", temperature=-1)
        with raises_code("OM-I102"):
            chat("Hi", max_new_token=3)
        with raises_code("OM-I102"):
            chat(["a", "b"], stream=True)
        with raises_code("OM-I003"):
            chat.loglikelihood([("only context",)])


class TextGenerationConformance(Conformance):
    def reference_greedy(self, model_dir: str, prompt_ids: list[int], max_new_tokens: int) -> list[int]:
        backend_hook_missing(self, "reference_greedy")

    @pytest.fixture(scope="class")
    def generator(self, chat_model_dir):
        return self.make("text-generation", chat_model_dir, max_new_tokens=10, temperature=0, return_format="openmind")

    def test_continues_the_prompt(self, generator, chat_model_dir):
        prompt = "Once upon a time"
        out = generator(prompt)
        assert out["generated_text"].startswith(prompt)
        ids = list(generator.backend.tokenizer(prompt)["input_ids"])
        generation = generator.generate(prompt)[0]
        reference = self.reference_greedy(str(chat_model_dir), ids, 10)
        assert generation.token_ids == reference[: len(generation.token_ids)]
        assert generator(prompt, return_full_text=False)["generated_text"] == generation.text
        assert "".join(generator(prompt, stream=True)) == generation.text

    def test_batch(self, generator):
        prompts = ["Once upon a time", "The quick brown fox jumps over the lazy dog and", "1, 2, 3,"]
        assert generator(prompts, batch_size=3) == [generator(p) for p in prompts]

    def test_bad_input(self, generator):
        with raises_code("OM-I003"):
            generator([{"role": "user", "content": "x"}])


class InstructionConformance(Conformance):
    """``summarization`` and ``translation`` are chat-style instruction tasks on chat models."""

    def test_summarization_is_a_chat_instruction(self, chat_model_dir):
        summarize = self.make(
            "summarization", chat_model_dir, max_new_tokens=8, temperature=0, return_format="openmind"
        )
        chat = self.make("chat", chat_model_dir, max_new_tokens=8, temperature=0)
        text = "The cat sat on the mat all day long and did nothing else."
        out = summarize(text)
        message = summarize.instruction.format(text=text)
        assert out == {"summary_text": chat(message)["content"].strip()}
        assert summarize([text, text], batch_size=2) == [out, out]

    def test_translation_names_the_languages(self, chat_model_dir):
        translate = self.make(
            "translation",
            chat_model_dir,
            max_new_tokens=8,
            temperature=0,
            target_lang="French",
            return_format="openmind",
        )
        chat = self.make("chat", chat_model_dir, max_new_tokens=8, temperature=0)
        out = translate("Good morning", source_lang="English")
        message = (
            "Translate the following text from English into French. Answer with the translation only.\n\nGood morning"
        )
        assert out == {"translation_text": chat(message)["content"].strip()}
        with raises_code("OM-I003"):
            translate([{"role": "user", "content": "x"}])


class Text2EmbConformance(Conformance):
    """``text2emb`` on the real pretrained MiniLM."""

    @pytest.fixture(scope="class")
    def embed(self, minilm_dir):
        return self.make("text2emb", minilm_dir)

    def test_unit_vectors_and_paraphrase_ranking(self, embed):
        sentences = [
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The new movie is awesome.",
            "The film was great and I loved it.",
            "A monkey is playing drums.",
        ]
        vectors = embed(sentences)
        assert len(vectors) == 5 and len(vectors[0]) == 384
        for v in vectors:
            assert math.sqrt(sum(x * x for x in v)) == pytest.approx(1.0, abs=1e-5)

        def cos(a, b):
            return sum(x * y for x, y in zip(a, b, strict=True))

        assert cos(vectors[0], vectors[1]) > max(cos(vectors[0], vectors[2]), cos(vectors[0], vectors[4])) + 0.2
        assert cos(vectors[2], vectors[3]) > max(cos(vectors[2], vectors[0]), cos(vectors[2], vectors[4])) + 0.2

    def test_batch_equals_single(self, embed):
        sentences = ["short", "a somewhat longer sentence with more tokens in it", "medium length text"]
        batched = embed(sentences, batch_size=3)
        for sentence, vector in zip(sentences, batched, strict=True):
            assert embed(sentence) == pytest.approx(vector, abs=1e-5)

    def test_pooling_and_normalisation_options(self, embed):
        mean = embed("hello world")
        raw = embed("hello world", normalize=False)
        assert math.sqrt(sum(x * x for x in raw)) != pytest.approx(1.0, abs=1e-3)
        norm = math.sqrt(sum(x * x for x in raw))
        assert [x / norm for x in raw] == pytest.approx(mean, abs=1e-5)
        assert embed("hello world", pooling="cls") != pytest.approx(mean, abs=1e-3)
        with raises_code("OM-I102"):
            embed("x", pooling="median")

    def test_bad_input(self, embed):
        with raises_code("OM-I003") as info:
            embed(["ok", 3])
        assert info.value.location == "input[1]"


class TextClassificationConformance(Conformance):
    def reference_logits(self, model_dir: str, text: str) -> list[float]:
        """Sequence-classification logits of ``text`` from the framework directly."""
        backend_hook_missing(self, "reference_logits")

    @pytest.fixture(scope="class")
    def classify(self, seq_cls_model_dir):
        return self.make("text-classification", seq_cls_model_dir, return_format="openmind")

    def test_label_and_scores_match_the_model(self, classify, seq_cls_model_dir):
        labels = classify.config["id2label"]
        for text in ("I loved this movie", "terrible, just terrible"):
            logits = self.reference_logits(str(seq_cls_model_dir), text)
            exp = [math.exp(v - max(logits)) for v in logits]
            probs = [e / sum(exp) for e in exp]
            best = max(range(len(probs)), key=probs.__getitem__)
            out = classify(text)
            assert out["label"] == labels[str(best)]
            assert out["score"] == pytest.approx(probs[best], abs=1e-5)
            every = classify(text, top_k=None)
            assert len(every) == len(labels)
            assert sum(o["score"] for o in every) == pytest.approx(1.0, abs=1e-5)

    def test_batch_equals_single(self, classify):
        texts = ["good", "a much longer review that goes on and on", "bad"]
        batched = classify(texts, batch_size=3)
        for text, out in zip(texts, batched, strict=True):
            single = classify(text)
            assert single["label"] == out["label"] and single["score"] == pytest.approx(out["score"], abs=1e-5)

    def test_bad_input(self, classify):
        with raises_code("OM-I003"):
            classify({"text": "x"})
        with raises_code("OM-I102"):
            classify("x", function_to_apply="tanh")


class TokenClassificationConformance(Conformance):
    def reference_token_logits(self, model_dir: str, text: str) -> tuple[list[list[float]], list[tuple[int, int]]]:
        """Per-token logits of ``text`` and each token's character span ((0, 0) for special tokens)."""
        backend_hook_missing(self, "reference_token_logits")

    @pytest.fixture(scope="class")
    def tagger(self, token_cls_model_dir):
        return self.make("token-classification", token_cls_model_dir, return_format="openmind")

    def test_tokens_match_the_model(self, tagger, token_cls_model_dir):
        text = "My name is Wolfgang and I live in Berlin"
        labels = tagger.config["id2label"]
        logits, spans = self.reference_token_logits(str(token_cls_model_dir), text)
        expected = []
        for row, (start, end) in zip(logits, spans, strict=True):
            if start == end:
                continue
            best = max(range(len(row)), key=row.__getitem__)
            if labels[str(best)] != "O":
                expected.append((labels[str(best)], text[start:end], start, end))
        got = tagger(text, aggregation_strategy="none")
        assert [(o["entity"], text[o["start"] : o["end"]], o["start"], o["end"]) for o in got] == expected
        assert all(0 < o["score"] <= 1 for o in got)
        grouped = tagger(text)
        assert all(text[o["start"] : o["end"]].strip() for o in grouped)
        assert all("-" not in o["entity"] for o in grouped)

    def test_batch_equals_single(self, tagger):
        texts = ["Angela Merkel visited Paris", "nothing here", "Berlin"]
        batched = tagger(texts, batch_size=3)
        for text, out in zip(texts, batched, strict=True):
            assert [(o["entity"], o["start"], o["end"]) for o in tagger(text)] == [
                (o["entity"], o["start"], o["end"]) for o in out
            ]


class FillMaskConformance(Conformance):
    def reference_mask_logits(self, model_dir: str, text: str) -> list[float]:
        """Masked-LM logits at the mask position of ``text``."""
        backend_hook_missing(self, "reference_mask_logits")

    @pytest.fixture(scope="class")
    def fill(self, masked_lm_model_dir):
        return self.make("fill-mask", masked_lm_model_dir)

    def test_candidates_match_the_model(self, fill, masked_lm_model_dir):
        text = f"Paris is the {fill.mask_token} of France."
        logits = self.reference_mask_logits(str(masked_lm_model_dir), text)
        ranked = sorted(range(len(logits)), key=logits.__getitem__, reverse=True)[:3]
        out = fill(text, top_k=3)
        assert [o["token"] for o in out] == ranked
        assert [o["score"] for o in out] == sorted((o["score"] for o in out), reverse=True)
        assert fill.mask_token not in out[0]["sequence"]
        assert fill([text, text], batch_size=2) == [fill(text)] * 2

    def test_mask_token_required(self, fill):
        with raises_code("OM-I003") as info:
            fill("no mask here")
        assert fill.mask_token in info.value.hint


class ErrorConformance(Conformance):
    """Bad models and tasks give coded errors with hints, before any framework work."""

    def test_unknown_task(self, chat_model_dir):
        with raises_code("OM-I001") as info:
            self.make("chatt", chat_model_dir)
        assert "chat" in str(info.value)

    def test_folder_is_not_a_model(self, tmp_path):
        with raises_code("OM-M002"):
            self.make("chat", tmp_path)

    def test_missing_tokenizer(self, chat_model_dir, tmp_path):
        import shutil

        folder = tmp_path / "no-tokenizer"
        folder.mkdir()
        for name in ("config.json", "model.safetensors", "generation_config.json"):
            shutil.copy(chat_model_dir / name, folder / name)
        with raises_code("OM-M101") as info:
            self.make("chat", folder)
        assert info.value.hint

    def test_pickle_weights_refused(self, chat_model_dir, tmp_path):
        import shutil

        folder = tmp_path / "pickled"
        shutil.copytree(chat_model_dir, folder)
        (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
        with raises_code("OM-M102") as info:
            self.make("chat", folder)
        assert "allow_pickle" in info.value.hint

    def test_wrong_head(self, chat_model_dir):
        with raises_code("OM-M106"):
            self.make("text-classification", chat_model_dir)

    def test_task_inferred_from_the_model(self, chat_model_dir, minilm_dir):
        from openmind import pipeline

        assert pipeline(model=str(chat_model_dir), framework=self.framework).task == "chat"
        assert pipeline(model=str(minilm_dir), framework=self.framework).task == "text2emb"
