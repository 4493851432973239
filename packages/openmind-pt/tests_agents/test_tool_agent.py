"""The agent loop end to end (nox -s agents): a tiny model fine-tuned HERE to write Qwen2.5/Hermes tool
calls for two tools (``get_weather(city)``, ``add(a, b)``) and to answer from the tool's result,
then served (``openmind deploy``'s app on a real uvicorn server):

* first, held-out exact match >= 0.9 on BOTH steps (the call; the answer after the tool result),
  through the chat pipeline -- the server fixture checks it first, so a failure below is the
  server's or the client's, not luck;
* the ``openai`` client gets parsed ``tool_calls`` (ids, JSON-string arguments), streaming and not;
* LangChain's ``ChatOpenAI(...).bind_tools(...)`` runs the two-step loop (call -> tool result ->
  final answer) to the expected final answer.

The model: a random tiny Llama (hidden 96, 2 layers) with the real Llama-2 tokenizer, the
template's special strings as plain text. Training data is encoded by openmind's own ``qwen2.5``
template (``Template.encode``: the ids and label masks SFT uses) on the prompts the server renders
(same template, same tools block; the server turns the clients' JSON-string arguments back into
the objects the template writes). Both steps are copies at fixed distances: the call copies the
city or the two numbers from the question; the answer copies the tool's text (``get_weather``
returns ``38 degrees in Paris`` -> ``It is 38 degrees in Paris.``; ``add`` returns ``59`` ->
``The sum is 59.``), not a city ~90 tokens back in the question as before.

Why not ``openmind.train``: every row starts with the same ~280-token tool system prompt and the
32k-vocabulary head dominates the step (6.8 s a step at batch 16 on a loaded machine). The loop
below encodes the shared prefix once per batch and applies the head only where labels are; its
loss equals transformers' own ``labels=`` loss (checked on the first batch).

Measured (2-core machine shared with 6 other sessions, load 8-11, so ~3x the quiet times; EM =
held-out exact match call / answer; "tf" = teacher-forced, every labelled token the argmax, which
is what greedy decoding reproduces). The digits are copied within ~300 steps; the 13 city tokens
(each in 1/26 of the rows, each a mapping of its own: ``▁Paris`` in the question, ``Par`` ``is``
in the call's JSON) are what the model learns last:
  - hidden 96, lr 2e-3, batch 16, 500 steps (the session before, the answer's city taken from the
    question): 0.90 / 0.525;
  - hidden 96, lr 2e-3, batch 16, answer copying the tool's text: tf 0.60 / 0.60 at step 300;
  - hidden 64, lr 3e-3, batch 32 (the quickstart's recipe), 500 steps, softmax over the 85 label
    tokens only: 0.55 / 0.525 -- every number right, ``London`` for every city;
  - the same with tied embeddings (and the city quoted in the question, so that question and call
    share its tokens): nothing copied at all, loss 0.19 from step 150 to 500;
  - set here: hidden 96, lr 2e-3, batch 16, 700 steps, 60% weather conversations: loss 0.21 at
    step 100, 0.15 at 200, 0.037 at 300 (the copies learnt), 0.009 from step 600; final 0.0074;
    EM 1.00 / 0.95; all three tests pass (1377 s of training, 1480 s in all, under that load).
    ``nox -s agents`` on the merged tree as the load fell (11 -> 1): 474 s of training, 535 s for
    the session with its install, the same final loss to the last digit (0.007414254499599338).
"""

from __future__ import annotations

import json
import random
import time

import openai
import pytest
from conftest import build

from openmind.nlp.serve.app import ServeSettings, create_app
from openmind.nlp.serve.server import ServerThread

pytestmark = pytest.mark.slow

#: cities the Llama-2 tokenizer writes as one token after a space and as two inside a JSON string;
#: with two-digit numbers everywhere every conversation has the same layout, so the values the model
#: copies (city, numbers, the tool's result) sit at fixed distances -- what a 2-layer model learns
#: in a few hundred steps (like the digit reversal of ``openmind.nlp.testing.synthetic``)
CITIES = ["Paris", "Rome", "London", "Berlin", "Madrid", "Boston", "Chicago", "Lima", "Dallas", "Miami", "Seattle"]
CITIES += ["Milan", "Amsterdam"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the temperature in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two integers.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    },
]
STEPS, BATCH, LR, HIDDEN = 700, 16, 2e-3, 96
WEATHER_QUESTION = "What is the weather in {}?"
#: the share of weather conversations: the 13 city tokens are what the model learns last
WEATHER_SHARE = 0.6


def weather(city: str, degrees: int) -> str:
    """What the weather tool returns: the answer copies it (a copy task, like the quickstart's)."""
    return f"{degrees} degrees in {city}"


def conversation(kind: str, x, y) -> list[dict]:
    """user -> assistant tool call -> tool result -> assistant answer."""
    if kind == "weather":
        ask, name, args, result = WEATHER_QUESTION.format(x), "get_weather", {"city": x}, weather(x, y)
        answer = f"It is {result}."
    else:
        ask, name, args, result = f"What is {x} plus {y}?", "add", {"a": x, "b": y}, str(x + y)
        answer = f"The sum is {x + y}."
    call = {"type": "function", "function": {"name": name, "arguments": args}}
    return [
        {"role": "user", "content": ask},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": result},
        {"role": "assistant", "content": answer},
    ]


def held_out(item: tuple) -> bool:
    """A fixed fifth of all (city, temperature) and (a, b) combinations is never trained on."""
    return random.Random(repr(item)).random() < 0.2


def items(n: int, seed: int, *, train: bool) -> list[tuple]:
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        if rng.random() < WEATHER_SHARE:
            item = ("weather", rng.choice(CITIES), rng.randint(10, 39))
        else:
            item = ("add", rng.randint(10, 49), rng.randint(10, 49))
        if held_out(item) != train:
            out.append(item)
    return out


def expected_call(kind: str, x, y) -> str:
    call = conversation(kind, x, y)[1]["tool_calls"][0]["function"]
    return (
        '<tool_call>\n{"name": "'
        + call["name"]
        + '", "arguments": '
        + json.dumps(call["arguments"])
        + "}\n</tool_call>"
    )


def fine_tune(base: str, out: str) -> dict:
    """Full fine-tuning of ``base`` on ``STEPS`` x ``BATCH`` tool conversations; saves to ``out``."""
    import torch

    torch.manual_seed(0)
    threads = torch.get_num_threads()
    # one thread: on a busy machine (CI lanes, other tests) intra-op threads wait on each other
    torch.set_num_threads(1)
    try:
        return _fine_tune(base, out)
    finally:
        torch.set_num_threads(threads)


def _fine_tune(base: str, out: str) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, get_cosine_schedule_with_warmup

    from openmind.nlp.templates.resolve import load_template

    tokenizer = AutoTokenizer.from_pretrained(base)
    template = load_template("qwen2.5")
    encoded: dict[tuple, object] = {}  # ~2000 distinct conversations among the STEPS x BATCH rows
    rows = [
        encoded.get(it) or encoded.setdefault(it, template.encode(tokenizer, conversation(*it), tools=TOOLS))
        for it in items(STEPS * BATCH, 1, train=True)
    ]
    # the shared prefix: the system turn with the tool list, identical token for token in every row
    first = rows[0].input_ids
    width = min(len(r.input_ids) for r in rows)
    for r in rows:
        width = next((k for k in range(width) if r.input_ids[k] != first[k]), width)
    assert width > 200 and all(label == -100 for r in rows for label in r.labels[: width + 1])
    prefix = torch.tensor([first[:width]])

    model = AutoModelForCausalLM.from_pretrained(base)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    schedule = get_cosine_schedule_with_warmup(optimizer, int(0.05 * STEPS), STEPS)
    pad = tokenizer.eos_token_id

    def tensors(batch):
        longest = max(len(r.input_ids) for r in batch)
        ids = torch.full((len(batch), longest), pad)
        labels = torch.full((len(batch), longest), -100)
        mask = torch.zeros((len(batch), longest), dtype=torch.long)
        for i, r in enumerate(batch):
            ids[i, : len(r.input_ids)] = torch.tensor(r.input_ids)
            labels[i, : len(r.labels)] = torch.tensor(r.labels)
            mask[i, : len(r.input_ids)] = 1
        return ids, labels, mask

    def hidden_of(ids, labels, mask):
        """The last hidden states where labels are (predicting them), and those labels."""
        cache = model.model(input_ids=prefix, use_cache=True).past_key_values
        cache.batch_repeat_interleave(ids.shape[0])
        hidden = model.model(input_ids=ids[:, width:], attention_mask=mask, past_key_values=cache).last_hidden_state
        targets = labels[:, width + 1 :]  # position t predicts token t + 1
        keep = targets != -100
        return hidden[:, :-1][keep], targets[keep]

    losses = []
    start = time.perf_counter()
    for step in range(STEPS):
        ids, labels, mask = tensors(rows[step * BATCH : (step + 1) * BATCH])
        hidden, targets = hidden_of(ids, labels, mask)
        loss = torch.nn.functional.cross_entropy(model.lm_head(hidden).float(), targets)
        if step == 0:  # the prefix cache changes nothing: transformers' own causal-LM loss on the whole rows
            with torch.no_grad():
                reference = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            assert abs(float(loss) - float(reference)) < 1e-4 * float(reference), (float(loss), float(reference))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
        if step % 50 == 0:
            print(f"step {step}: loss {losses[-1]:.4f}, {time.perf_counter() - start:.0f} s", flush=True)
    model.eval()
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    return {"seconds": time.perf_counter() - start, "first_loss": losses[0], "final_loss": sum(losses[-10:]) / 10}


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    from openmind.pt.testing import tiny_llama

    folder = tmp_path_factory.mktemp("tool-agent")
    base = tiny_llama(folder / "base", hidden_size=HIDDEN, layers=2, seed=0)
    report = fine_tune(str(base), str(folder / "tuned"))
    print(f"tool fine-tune: {report}")
    assert report["final_loss"] < 0.05, report  # measured 0.0074; the gate is held-out exact match
    return str(folder / "tuned")


def held_out_exact_match(model: str) -> dict:
    """Greedy exact match on 40 held-out conversations, each step alone, through ``pipeline("chat")``:
    the call after the question; the answer after question, call and tool result."""
    import openmind

    chat = openmind.pipeline("chat", model=model, template="qwen2.5", framework="pt", device="cpu")
    test = items(40, 7, train=False)
    convs = [conversation(*it) for it in test]
    kw = dict(tools=TOOLS, max_new_tokens=48, do_sample=False, batch_size=20)
    calls = [o["content"].strip() for o in chat([c[:1] for c in convs], **kw)]
    answers = [o["content"].strip() for o in chat([c[:3] for c in convs], **kw)]
    wrong_calls = [(got, expected_call(*it)) for got, it in zip(calls, test) if got != expected_call(*it)]
    wrong_answers = [(got, c[3]["content"]) for got, c in zip(answers, convs) if got != c[3]["content"]]
    return {
        "call": 1 - len(wrong_calls) / len(test),
        "answer": 1 - len(wrong_answers) / len(test),
        "wrong calls (got, expected)": wrong_calls[:3],
        "wrong answers (got, expected)": wrong_answers[:3],
    }


@pytest.fixture(scope="module")
def learned(tuned):
    em = held_out_exact_match(tuned)
    print(f"held-out exact match: call {em['call']:.3f}, answer {em['answer']:.3f}")
    return em


def gate(em: dict) -> None:
    assert em["call"] >= 0.9 and em["answer"] >= 0.9, (
        "the fine-tuned model did not learn both steps (held-out exact match >= 0.9 each), so the "
        f"client tests below would test luck, not the server: {em}"
    )


@pytest.fixture(scope="module")
def server(tuned, learned):
    gate(learned)  # the HTTP tests run only on a model that has learnt both steps
    engine = build(tuned, template="qwen2.5", served_model_name="tuned")
    with ServerThread(create_app(engine, ServeSettings(served_model_name="tuned", max_batch_size=8))) as s:
        yield s


def test_the_model_learned_both_steps_on_held_out_prompts(learned):
    gate(learned)


def one_of_each(seed: int) -> list[tuple]:
    """A held-out weather question and a held-out sum."""
    test = items(20, seed, train=False)
    return [next(it for it in test if it[0] == "weather"), next(it for it in test if it[0] == "add")]


def test_the_openai_client_gets_parsed_tool_calls_streaming_and_not(server):
    c = openai.OpenAI(base_url=server.url + "/v1", api_key="none", max_retries=0, timeout=120)
    for item in one_of_each(11):
        user, assistant = conversation(*item)[:2]
        function = assistant["tool_calls"][0]["function"]
        kw = dict(model="tuned", messages=[user], tools=TOOLS, temperature=0, max_tokens=60)
        choice = c.chat.completions.create(**kw).choices[0]
        assert choice.finish_reason == "tool_calls" and not choice.message.content, choice
        (call,) = choice.message.tool_calls
        assert call.type == "function" and call.id and call.function.name == function["name"]
        assert json.loads(call.function.arguments) == function["arguments"]
        ids, name, arguments, finish, text = set(), "", "", None, ""
        for chunk in c.chat.completions.create(stream=True, **kw):
            delta = chunk.choices[0].delta
            text += delta.content or ""
            for tc in delta.tool_calls or []:
                assert tc.index == 0
                ids |= {tc.id} if tc.id else set()
                name += tc.function.name or ""
                arguments += tc.function.arguments or ""
            finish = chunk.choices[0].finish_reason or finish
        assert finish == "tool_calls" and not text and len(ids) == 1 and name == function["name"]
        assert json.loads(arguments) == function["arguments"]


def test_langchain_bind_tools_runs_the_two_step_tool_loop(server):
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(base_url=server.url + "/v1", api_key="none", model="tuned", temperature=0, max_tokens=60)
    bound = llm.bind_tools(TOOLS)
    for kind, x, y in one_of_each(12):
        # the tools themselves (the weather service says y degrees in x)
        tools = {
            "get_weather": lambda city, x=x, y=y: weather(x, y) if city == x else "unknown",
            "add": lambda a, b: str(a + b),
        }
        question, call_message, _result, final = conversation(kind, x, y)
        messages = [HumanMessage(question["content"])]
        ai = bound.invoke(messages)
        (call,) = ai.tool_calls
        expected = call_message["tool_calls"][0]["function"]
        assert call["name"] == expected["name"] and call["args"] == expected["arguments"] and call["id"], ai
        messages += [ai, ToolMessage(tools[call["name"]](**call["args"]), tool_call_id=call["id"])]
        answer = bound.invoke(messages)
        assert not answer.tool_calls and answer.content == final["content"], answer
