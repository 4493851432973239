"""Framework-free parts of inference: parameters, stop strings, model folders, task inference,
registration, and the wrappers driven by a scripted backend (no torch in this environment)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openmind.core.errors import OpenMindError
from openmind.nlp.pipelines.base import Generation, GenerationParams, GenerativePipeline, LoadOptions, Pipeline
from openmind.nlp.pipelines.model import infer_task, resolve_model_dir
from openmind.nlp.pipelines.stopping import StopText, truncate_at_stop


def code_of(fn, *args, **kwargs) -> OpenMindError:
    with pytest.raises(OpenMindError) as info:
        fn(*args, **kwargs)
    return info.value


# ---- generation parameters ---------------------------------------------------------------
def test_generation_params_build_and_validate():
    p = GenerationParams.build(max_new_tokens=5, temperature=0, stop="###", generation_seed=3)
    assert (p.do_sample, p.temperature, p.stop, p.seed, p.max_new_tokens) == (False, None, ("###",), 3, 5)
    q = GenerationParams.build(p, top_p=0.5, stop=["a", ""])
    assert (q.max_new_tokens, q.top_p, q.stop) == (5, 0.5, ("a",))
    for bad, field in (
        ({"max_new_tokens": 0}, "max_new_tokens"),
        ({"temperature": -0.1}, "temperature"),
        ({"top_p": 1.5}, "top_p"),
        ({"num_beams": 0}, "num_beams"),
        ({"top_logprobs": -1}, "top_logprobs"),
    ):
        err = code_of(GenerationParams.build, **bad)
        assert err.code == "OM-I102" and err.location == field
    assert code_of(GenerationParams.build, temprature=1).code == "OM-I102"


# ---- stop strings --------------------------------------------------------------------------
def test_truncate_at_earliest_stop():
    assert truncate_at_stop("hello ### world <end>", ["<end>", "###"]) == ("hello ", True)
    assert truncate_at_stop("hello", ["x"]) == ("hello", False)


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab#\ufffd ", max_size=30),
    stops=st.lists(st.text(alphabet="ab#", min_size=1, max_size=4), max_size=3),
    cuts=st.lists(st.integers(min_value=0, max_value=30), max_size=8),
)
def test_stop_text_streams_exactly_the_final_text(text, stops, cuts):
    """Whatever the chunking, streamed deltas join to the final text and never show a stop string."""
    row = StopText(stops)
    pieces = []
    generated = text  # generation ends where a stop string first appears: nothing after it exists
    for cut in sorted(cuts):
        pieces.append(row.update(text[:cut]))
        if row.stopped:
            generated = text[:cut]
            break
    pieces.append(row.update(text, final=True))
    streamed = "".join(pieces)
    expected, _ = truncate_at_stop(generated, stops)
    assert streamed == expected
    for stop in stops:
        assert stop not in streamed


# ---- model folders ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer_files(tmp_path_factory):
    from openmind.nlp.testing.assets import save_llama2_tokenizer

    return save_llama2_tokenizer(tmp_path_factory.mktemp("tok"))


def make_model_dir(folder, tokenizer_files=None, config=None, weights="model.safetensors"):
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or {"architectures": ["LlamaForCausalLM"]}))
    if weights:
        (folder / weights).write_bytes(b"\0")
    if tokenizer_files is not None:
        for f in tokenizer_files.iterdir():
            shutil.copy(f, folder / f.name)
    return folder


def test_model_folder_errors(tmp_path, tokenizer_files):
    assert code_of(resolve_model_dir, None).code == "OM-A004"
    (tmp_path / "file.txt").write_text("x")
    assert code_of(resolve_model_dir, tmp_path / "file.txt").code == "OM-M002"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert code_of(resolve_model_dir, empty).code == "OM-M002"
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    assert "adapter=" in code_of(resolve_model_dir, adapter).hint
    no_weights = make_model_dir(tmp_path / "no-weights", tokenizer_files, weights=None)
    err = code_of(resolve_model_dir, no_weights)
    assert err.code == "OM-M002" and err.location.endswith("config.json")
    pickled = make_model_dir(tmp_path / "pickled", tokenizer_files, weights="pytorch_model.bin")
    err = code_of(resolve_model_dir, pickled)
    assert err.code == "OM-M102" and "pytorch_model.bin" in err.message
    assert resolve_model_dir(pickled, allow_pickle=True).weights == "pickle"
    no_tok = make_model_dir(tmp_path / "no-tok")
    err = code_of(resolve_model_dir, no_tok)
    assert err.code == "OM-M101" and "tokenizer=PATH" in err.hint
    assert resolve_model_dir(no_tok, tokenizer=str(tokenizer_files)).weights == "safetensors"
    broken = make_model_dir(tmp_path / "broken", tokenizer_files)
    (broken / "config.json").write_text("{not json")
    assert code_of(resolve_model_dir, broken).code == "OM-M002"


def test_task_inference(tmp_path, tokenizer_files):
    cases = {
        "LlamaForCausalLM": "chat",  # the llama2 tokenizer files carry a chat template
        "BertForSequenceClassification": "text-classification",
        "BertForTokenClassification": "token-classification",
        "BertForMaskedLM": "fill-mask",
        "BertModel": "text2emb",
        "GPT2LMHeadModel": "chat",
    }
    for arch, task in cases.items():
        folder = make_model_dir(tmp_path / arch, tokenizer_files, {"architectures": [arch]})
        assert infer_task(folder, {"architectures": [arch]}) == task
    plain = make_model_dir(tmp_path / "plain", None, {"architectures": ["LlamaForCausalLM"]})
    assert infer_task(plain, {"architectures": ["LlamaForCausalLM"]}) == "text-generation"
    (plain / "modules.json").write_text("[]")
    assert infer_task(plain, {}) == "text2emb"
    assert infer_task(tmp_path, {"architectures": ["Mystery"]}) is None

    from openmind.core.api import infer_task as core_infer

    weird = make_model_dir(tmp_path / "weird", tokenizer_files, {"architectures": ["Mystery"]})
    assert core_infer(str(tmp_path / "BertForMaskedLM")) == "fill-mask"
    assert code_of(core_infer, str(weird)).code == "OM-I004"


# ---- registration ----------------------------------------------------------------------------
def test_every_inference_task_has_a_wrapper_and_the_verbs_exist():
    from openmind.core.plugins import get_registry
    from openmind.core.specs import CommandSpec, PipelineWrapperSpec

    registry = get_registry()
    inference = [t.name for t in registry.tasks() if t.kind_of == "inference" and t.component.plugin == "nlp"]
    assert len(inference) == 13  # incl. 1.0's question-answering, zero-shot, table QA, text2text, feature-extraction
    wrappers = {w.task: w for w in registry.all(PipelineWrapperSpec)}
    assert set(inference) <= set(wrappers)
    assert {"run", "chat"} <= {c.name for c in registry.all(CommandSpec)}
    ours = [p for p in registry.problems if p.component and p.component.plugin in ("nlp", "pt")]
    assert ours == []
    for task in inference:  # wrappers import without a framework
        assert issubclass(wrappers[task].load(), object)


def test_plugins_and_wrappers_import_no_framework():
    code = (
        "import sys\n"
        "from openmind.core.plugins import get_registry\n"
        "from openmind.core.specs import PipelineWrapperSpec\n"
        "r = get_registry()\n"
        "[w.load() for w in r.all(PipelineWrapperSpec)]\n"
        "import openmind.nlp.cli.run, openmind.nlp.cli.chat\n"
        "heavy = [m for m in ('torch', 'transformers', 'mindspore', 'numpy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_unknown_task_and_missing_everything():
    from openmind import pipeline

    err = code_of(pipeline, "text-generaton", model=None)
    assert err.code == "OM-I001" and "text-generation" in err.message
    assert code_of(pipeline).code == "OM-I004"


# ---- wrappers on a scripted backend (the contract seen from the wrapper side) ----------------
class ScriptedGenerative(GenerativePipeline):
    """Answers "<n> tokens" for a prompt of n tokens, streaming it word by word."""

    framework = "pt"
    calls: list = []

    @classmethod
    def load(cls, model_dir, options: LoadOptions):
        from openmind.nlp.testing.assets import llama2_tokenizer

        self = cls()
        self.task, self.model_dir, self.device, self.dtype = options.task, model_dir, "cpu", "float32"
        self.tokenizer = llama2_tokenizer()
        self.options = options
        return self

    def preprocess(self, inputs, params):
        return inputs

    def forward(self, features, params):
        return features

    def postprocess(self, outputs, params):
        return outputs

    def generate(self, prompts, params, *, batch_size=1, on_text=None, is_cancelled=None, adapter=None):
        ScriptedGenerative.calls.append((list(prompts), params, batch_size))
        out = []
        for i, prompt in enumerate(prompts):
            n = len(prompt) if isinstance(prompt, list) else len(self.tokenizer(prompt)["input_ids"])
            text, _ = truncate_at_stop(f"{n} tokens STOP after", params.stop)
            if on_text:
                for char in text:
                    on_text(i, char)
            out.append(Generation(text, list(range(3)), "stop", n))
        return out

    def loglikelihood(self, requests, *, batch_size=1):
        return [(-1.0, True) for _ in requests]

    def prompt_logprobs(self, prompts, top_logprobs=0):
        return [[] for _ in prompts]

    def add_adapter(self, name, path):
        pass


@pytest.fixture()
def scripted(monkeypatch, tmp_path, tokenizer_files):
    """``pipeline(task, ...)`` with the scripted backend standing in for the framework."""
    from openmind.core.pipelines import wrapper  # the generic wrapper (moved from openmind.nlp)
    from openmind.core.specs import PipelineSpec

    spec = PipelineSpec(task="chat", framework="pt", impl="x:y")
    object.__setattr__(spec, "load", lambda: ScriptedGenerative)
    monkeypatch.setattr(wrapper, "select", lambda kind, task, framework: (spec, "framework pt (test)"))
    ScriptedGenerative.calls = []
    return make_model_dir(tmp_path / "m", tokenizer_files)


def test_chat_wrapper_shapes_prompts_and_streams(scripted):
    from openmind import pipeline
    from openmind.nlp.testing.assets import llama2_tokenizer

    chat = pipeline("chat", model=str(scripted), system="Be brief.", max_new_tokens=7, stop=["STOP"])
    tok = llama2_tokenizer()
    expected_ids = tok.apply_chat_template(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        add_generation_prompt=True,
        tokenize=True,
    )
    expected_ids = list(expected_ids["input_ids"] if hasattr(expected_ids, "keys") else expected_ids)
    answer = chat("Hi")
    assert answer == {"role": "assistant", "content": f"{len(expected_ids)} tokens "}
    prompts, params, _ = ScriptedGenerative.calls[-1]
    assert prompts == [expected_ids]
    assert params.max_new_tokens == 7 and "STOP" in params.stop and "</s>" in params.stop  # template stop word
    batch = chat(["Hi", [{"role": "user", "content": "Hi"}]], batch_size=2)
    assert batch == [answer, answer] and ScriptedGenerative.calls[-1][2] == 2
    assert "".join(chat("Hi", stream=True)) == answer["content"]
    assert chat.loglikelihood([("a", "b")]) == [(-1.0, True)]
    assert code_of(chat, [{"role": "user"}]).location == "input message 0 field 'content'"
    assert code_of(chat, [["not a message"]]).code == "OM-I003"
    assert code_of(chat, "Hi", nonsense=1).code == "OM-I102"
    err = code_of(pipeline, "chat", model=str(scripted), sytem="x")
    assert err.code == "OM-I102" and "system" in err.message


def test_instruction_and_text_generation_wrappers(scripted):
    from openmind import pipeline

    gen = pipeline("text-generation", model=str(scripted), return_format="openmind")
    assert gen("Hello")["generated_text"] == "Hello" + "2 tokens STOP after"
    assert gen("Hello", return_full_text=False) == {"generated_text": "2 tokens STOP after"}
    assert ScriptedGenerative.calls[-1][0] == ["Hello"]  # text prompt: the backend adds BOS
    legacy = pipeline("text-generation", model=str(scripted))  # 1.0 / transformers: a list per prompt
    assert legacy("Hello") == [{"generated_text": "Hello" + "2 tokens STOP after"}]
    assert legacy(["Hello", "Hi"]) == [
        [{"generated_text": "Hello2 tokens STOP after"}],
        [{"generated_text": "Hi2 tokens STOP after"}],
    ]
    translate = pipeline("translation", model=str(scripted), target_lang="German")
    (out,) = translate("Good morning")
    assert list(out) == ["translation_text"]
    text = translate.backend.tokenizer.decode(ScriptedGenerative.calls[-1][0][0])
    assert "into German" in text and "Good morning" in text
    summarize = pipeline("summarization", model=str(scripted), instruction="TL;DR: {text}")
    summarize("long text")
    assert "TL;DR: long text" in summarize.backend.tokenizer.decode(ScriptedGenerative.calls[-1][0][0])


def test_encoder_wrappers_shape_outputs(monkeypatch, tmp_path, tokenizer_files):
    from openmind import pipeline
    from openmind.core.pipelines import wrapper  # the generic wrapper (moved from openmind.nlp)
    from openmind.core.specs import PipelineSpec

    class ScriptedClassifier(Pipeline):
        framework = "pt"

        @classmethod
        def load(cls, model_dir, options):
            self = cls()
            self.task, self.model_dir, self.device, self.dtype, self.tokenizer = (
                options.task,
                model_dir,
                "cpu",
                "f",
                None,
            )
            return self

        def preprocess(self, inputs, params):
            return inputs

        def forward(self, features, params):
            return features

        def postprocess(self, outputs, params):
            labels = [{"label": "pos", "score": 0.7}, {"label": "neg", "score": 0.3}]
            return [labels[: params.top_k or 2] for _ in outputs]

    spec = PipelineSpec(task="text-classification", framework="pt", impl="x:y")
    object.__setattr__(spec, "load", lambda: ScriptedClassifier)
    monkeypatch.setattr(wrapper, "select", lambda kind, task, framework: (spec, "test"))
    folder = make_model_dir(tmp_path / "cls", tokenizer_files, {"architectures": ["BertForSequenceClassification"]})
    classify = pipeline("text-classification", model=str(folder), return_format="openmind")
    assert classify("x") == {"label": "pos", "score": 0.7}
    assert classify(["x", "y"]) == [{"label": "pos", "score": 0.7}] * 2
    assert len(classify("x", top_k=None)) == 2
    legacy = pipeline("text-classification", model=str(folder))  # 1.0 / transformers shapes
    assert legacy("x") == [{"label": "pos", "score": 0.7}]
    assert legacy(["x", "y"]) == [{"label": "pos", "score": 0.7}] * 2
    assert legacy(["x", "y"], top_k=1) == [[{"label": "pos", "score": 0.7}]] * 2
    assert code_of(pipeline, "text-classification", model=str(folder), return_format="2.x").code == "OM-I102"
    assert code_of(classify, 3).location == "input"
    assert code_of(pipeline, "text-classification", model=str(folder), batch_size=0).code == "OM-I102"
