"""The page as people use it: headless Chromium driving a real ``openmind webui`` process.

Screenshots are written to the artifacts folder (see conftest). Chat, training and serving run
for real on a tiny Llama with the real Llama-2 tokenizer; answers are compared with openmind's
own pipeline on the same inputs, the loss curve with the run's train_summary.json.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from openmind.webui import jobs as J

pytestmark = pytest.mark.timeout(600)


def box(page, elem_id: str):
    """The text/number input inside a Gradio component."""
    return page.locator(f"#{elem_id}").locator("textarea, input").first


def wait_for(predicate, timeout: float, what: str, interval: float = 0.25):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    page.wait_for_timeout(300)


UNLABELLED_JS = """
() => Array.from(document.querySelectorAll('input, textarea, select'))
  .filter(el => el.offsetParent !== null && !['hidden', 'file'].includes(el.type))
  .filter(el => {
    const aria = (el.getAttribute('aria-label') || '').trim();
    const byId = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean)
      .map(id => (document.getElementById(id) || {}).textContent || '').join('').trim();
    const labels = Array.from(el.labels || []).map(l => l.textContent.trim()).join('');
    return !(aria || byId || labels);
  })
  .map(el => el.outerHTML.slice(0, 160))
"""


def reference_chat(model: Path, text: str, max_new_tokens: int) -> str:
    """openmind's own chat pipeline, greedy, on the same conversation."""
    import openmind

    chat = openmind.pipeline("chat", model=str(model))
    return chat([{"role": "user", "content": text}], max_new_tokens=max_new_tokens, temperature=0)["content"]


RECORD_JS = """
() => {
  window.__omSeen = [];
  const box = document.querySelector('#om-chat--box');
  new MutationObserver(() => {
    const bots = box.querySelectorAll("[data-testid='bot']");
    if (!bots.length) return;
    const text = bots[bots.length - 1].innerText;
    const seen = window.__omSeen;
    if (text && (!seen.length || seen[seen.length - 1] !== text)) seen.push(text);
  }).observe(box, {subtree: true, childList: true, characterData: true});
}
"""


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_page_opens_every_input_is_labelled_and_tab_reaches_start(page, artifacts):
    page.screenshot(path=str(artifacts / "01-chat-tab.png"))
    for tab in ("Chat", "Data", "Train", "Evaluate", "Serve", "Hub", "Support matrix"):
        open_tab(page, tab)
        unlabelled = page.evaluate(UNLABELLED_JS)
        assert unlabelled == [], f"inputs without a label on the {tab} tab: {unlabelled}"
    open_tab(page, "Support matrix")
    table = page.locator("#om-support--table")
    wait_for(lambda: "text-generation" in table.inner_text(), 60, "the support matrix")
    box(page, "om-support--search").fill("text2emb")
    wait_for(lambda: "text-generation" not in table.inner_text(), 30, "the search to filter the rows")
    assert "text2emb" in table.inner_text()

    open_tab(page, "Train")
    box(page, "om-train-model").focus()
    presses = 0
    while not page.evaluate("() => !!document.activeElement.closest('#om-train--start')"):
        presses += 1
        if presses > 400:
            pytest.fail("pressing Tab from the first Train input never reached the Start button")
        page.keyboard.press("Tab")
    page.screenshot(path=str(artifacts / "02-train-form.png"), full_page=True)
    assert presses > 10  # it went through the form, not around it


def test_chat_streams_the_answer_of_the_pipeline(page, tiny_model, artifacts):
    box(page, "om-chat-model").fill(str(tiny_model))
    box(page, "om-chat-max-new-tokens").fill("64")
    box(page, "om-chat-temperature").fill("0")
    page.click("#om-chat--load")
    status = wait_for(
        lambda: (v := box(page, "om-chat--status").input_value()) and ("Loaded" in v or "Error" in v) and v,
        120,
        "the model to load",
    )
    assert "Loaded" in status and "template llama2" in status, status

    question = "Name a colour."
    box(page, "om-chat--message").fill(question)
    # every text the answer bubble shows, recorded in the page itself as the DOM changes
    page.evaluate(RECORD_JS)
    page.click("#om-chat--send")
    answers = page.locator("#om-chat--box [data-testid='bot']")
    changed, last = time.time(), None
    deadline = changed + 90
    while time.time() < deadline and (last is None or time.time() - changed < 2.0):
        text = answers.last.inner_text() if answers.count() else None
        if text and text != last:
            last, changed = text, time.time()
        time.sleep(0.05)
    seen = page.evaluate("() => window.__omSeen")
    page.wait_for_timeout(500)
    final = answers.last.inner_text()
    page.locator("#om-chat--box").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "03-chat-streamed.png"))
    expected = reference_chat(tiny_model, question, 64)
    assert squash(final) == squash(expected)
    # streamed: the page showed growing prefixes of the answer before the whole of it
    prefixes = [s for s in seen if squash(s) != squash(final)]
    assert prefixes, f"only the finished answer was ever shown: {seen}"
    assert all(squash(final).startswith(squash(s)[:-1]) for s in prefixes)


def test_chat_with_an_image_on_a_vision_language_model(page, tmp_path, artifacts):
    """An uploaded image goes with the next message to a tiny Qwen2-VL; the answer is the chat
    pipeline's on the same image and question, and the conversation shows the image."""
    from PIL import Image

    import openmind
    from openmind.pt.testing import tiny_qwen2_vl

    repo = Path(__file__).resolve().parents[3]
    official = (repo / "packages" / "openmind-mm" / "tests" / "data" / "chat_templates" / "qwen2-vl.jinja").read_text()
    model = tiny_qwen2_vl(tmp_path / "tiny-qwen2-vl", official)
    picture = tmp_path / "red.png"
    Image.new("RGB", (56, 56), (220, 20, 20)).save(picture)

    box(page, "om-chat-model").fill(str(model))
    box(page, "om-chat-max-new-tokens").fill("16")
    box(page, "om-chat-temperature").fill("0")
    page.click("#om-chat--load")
    status = wait_for(
        lambda: (v := box(page, "om-chat--status").input_value()) and ("Loaded" in v or "Error" in v) and v,
        120,
        "the model to load",
    )
    assert "Loaded" in status and "template processor" in status, status
    page.locator("#om-chat--image input[type=file]").set_input_files(str(picture))
    wait_for(lambda: page.locator("#om-chat--image img").count() > 0, 30, "the image preview")
    question = "What colour is the square?"
    box(page, "om-chat--message").fill(question)
    page.click("#om-chat--send")
    answers = page.locator("#om-chat--box [data-testid='bot']")
    changed, last = time.time(), None
    deadline = changed + 120
    while time.time() < deadline and (last is None or time.time() - changed < 2.0):
        text = answers.last.inner_text() if answers.count() else None
        if text and text != last:
            last, changed = text, time.time()
        time.sleep(0.05)
    final = answers.last.inner_text()
    page.locator("#om-chat--box").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "03b-chat-image.png"))
    chat = openmind.pipeline("chat", model=str(model))
    conversation = [
        {"role": "user", "content": [{"type": "image", "image": str(picture)}, {"type": "text", "text": question}]}
    ]
    expected = chat(conversation, max_new_tokens=16, temperature=0)["content"]
    assert squash(final) == squash(expected)
    assert page.locator("#om-chat--box [data-testid='user'] img").count() >= 1
    # the image went with that message only: the upload box is empty again
    assert page.locator("#om-chat--image img").count() == 0


def test_training_run_live_plot_reload_and_finish(page, webui, tiny_model, chat_data, artifacts):
    _, root = webui
    open_tab(page, "Train")
    values = {
        "model": str(tiny_model),
        "dataset": str(chat_data),
        "output_dir": "browser-run",
        "cutoff_len": "64",
        "max_steps": "24",
        "logging_steps": "2",
        "save_steps": "12",
        "per_device_train_batch_size": "4",
        "learning_rate": "0.001",
    }
    for key, value in values.items():
        box(page, f"om-train-{key.replace('_', '-')}").fill(value)
    page.click("#om-train--start")
    message = page.locator("#om-train--message")
    wait_for(lambda: "openmind train" in message.inner_text(), 30, "the start message")
    job = J.jobs(root, "train")[0]
    config = Path(job.folder) / "config.yaml"
    # exactly `openmind train CONFIG.yaml`, in a session of its own
    assert job.cmd[1:] == ["train", str(config)]
    written = yaml.safe_load(config.read_text())
    assert written["training"]["output_dir"] == str(root / "browser-run")
    assert written["training"]["max_steps"] == 24 and written["data"]["cutoff_len"] == 64
    assert "openmind train" in message.inner_text()
    shown_yaml = page.locator("#om-train--yaml").inner_text()
    assert "max_steps: 24" in shown_yaml

    status = page.locator("#om-train--status")

    def logged() -> bool:
        text = status.inner_text()
        return "running" in text and re.search(r"last loss [0-9.]+", text) is not None

    wait_for(logged, 240, "a first logged loss")
    first = status.inner_text()
    page.screenshot(path=str(artifacts / "04-train-running.png"), full_page=True)

    # a reload (or a closed tab) does not stop the run, and the page finds it again
    page.reload(wait_until="load")
    page.wait_for_selector("#om-chat--load", timeout=60_000)
    open_tab(page, "Train")
    status = page.locator("#om-train--status")
    wait_for(lambda: "browser-run" in status.inner_text(), 60, "the run after the reload")
    assert J.jobs(root, "train")[0].id == job.id
    after_reload = status.inner_text()
    assert "running" in after_reload or "finished" in after_reload, after_reload

    def step_of(text: str) -> int:
        m = re.search(r"step (\d+) /", text)
        return int(m.group(1)) if m else -1

    wait_for(lambda: "finished" in status.inner_text(), 400, "the run to finish", interval=1)
    done = status.inner_text()
    assert step_of(done) == 24 >= step_of(first)  # a fast machine may show the last step while still "running"
    page.screenshot(path=str(artifacts / "05-train-finished.png"), full_page=True)
    summary = json.loads((root / "browser-run" / "train_summary.json").read_text())
    history = [h for h in summary["history"] if "loss" in h]
    assert f"last loss {history[-1]['loss']:.4f}" in done
    assert "24 / 24" in done
    # the plot shows the run's loss points
    plot = page.locator("#om-train--plot")
    assert plot.locator("svg, canvas").count() > 0
    assert "train" in J.tail(job.log, 200) or "loss" in J.tail(job.log, 200)


def test_serve_tab_starts_a_server_the_openai_client_can_use(page, webui, tiny_model, free_port, artifacts):
    from openai import OpenAI

    open_tab(page, "Serve")
    port = free_port()
    box(page, "om-serve-model").fill(str(tiny_model))
    box(page, "om-serve-port").fill(str(port))
    box(page, "om-serve-served-model-name").fill("tiny")
    key = box(page, "om-serve-api-key").input_value()
    assert key.startswith("sk-om-")
    page.click("#om-serve--start")
    status = page.locator("#om-serve--status")
    wait_for(lambda: "requests served" in status.inner_text(), 240, "the server to come up", interval=1)
    assert f"http://127.0.0.1:{port}/v1" in status.inner_text()
    snippets = page.locator("#om-serve--snippets").inner_text()
    assert key in snippets and f"127.0.0.1:{port}/v1" in snippets

    client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=key)
    question = "Say hello."
    reply = client.chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": question}], max_tokens=12, temperature=0
    )
    assert reply.choices[0].message.content == reference_chat(tiny_model, question, 12)
    wait_for(lambda: "requests served 1" in status.inner_text(), 30, "the request count to show")
    page.screenshot(path=str(artifacts / "06-serve.png"), full_page=True)
    page.click("#om-serve--stop")
    wait_for(lambda: "not running" in status.inner_text(), 60, "the server to stop")


def test_switch_to_chinese_relabels_the_page(page, artifacts):
    page.get_by_label("中文").check()
    page.get_by_role("tab", name="训练").wait_for(timeout=20_000)
    for name in ("对话", "数据", "训练", "评测", "部署", "模型仓库", "支持矩阵"):
        assert page.get_by_role("tab", name=name).count() == 1, name
    page.get_by_role("button", name="加载模型").wait_for()
    assert page.get_by_text("流式输出").count() == 1
    open_tab(page, "训练")
    page.get_by_role("button", name="开始训练").wait_for()
    assert page.get_by_role("button", name="Start training").count() == 0
    page.screenshot(path=str(artifacts / "07-chinese.png"))
    page.get_by_label("English").check()
    page.get_by_role("tab", name="Train").wait_for(timeout=20_000)


def test_data_tab_reports_bad_rows_where_they_are_and_previews_the_training_text(page, tmp_path, tiny_model, artifacts):
    data = tmp_path / "mixed.jsonl"
    good = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}
    data.write_text(
        json.dumps(good) + "\n" + json.dumps({"messages": [{"role": "user"}]}) + "\n" + json.dumps(good) + "\n"
    )
    open_tab(page, "Data")
    dataset = box(page, "om-data--dataset")
    dataset.fill(str(data))
    dataset.press("Enter")
    page.click("#om-data--validate")
    report = page.locator("#om-data--report")
    wait_for(lambda: "rows read" in report.inner_text(), 120, "the validation report")
    assert "3 rows read, 2 valid, 1 rejected." in report.inner_text()
    problems = page.locator("#om-data--problems").inner_text()
    assert f"{data.name}:2 field messages[0].content" in problems or f"{data}:2 field messages[0].content" in problems
    box(page, "om-data--model").fill(str(tiny_model))
    page.click("#om-data--preview")
    rendered = box(page, "om-data--rendered")
    wait_for(lambda: "«" in rendered.input_value(), 120, "the rendered preview")
    # the Llama-2 chat template with the trained span (the answer and </s>) marked
    assert "[INST] hi [/INST]«yo </s>»" in rendered.input_value()
    page.screenshot(path=str(artifacts / "08-data.png"), full_page=True)


def test_evaluate_tab_shows_results_and_samples(page, webui, tmp_path, tiny_model, artifacts):
    _, root = webui
    task = tmp_path / "colours.jsonl"
    rows = [
        {"question": f"Which one is a colour? ({i})", "choices": ["blue", "table", "run"], "answer": "A"}
        for i in range(4)
    ]
    task.write_text("".join(json.dumps(r) + "\n" for r in rows))
    open_tab(page, "Evaluate")
    box(page, "om-eval-model").fill(str(tiny_model))
    box(page, "om-eval-tasks").fill(str(task))
    box(page, "om-eval-n-shot").fill("0")
    page.click("#om-eval--start")
    results = page.locator("#om-eval--results")
    wait_for(lambda: "(all)" in results.inner_text(), 300, "the results table", interval=1)
    job = J.jobs(root, "eval")[0]
    saved = json.loads((Path(job.folder) / "results" / "results.json").read_text())
    ((name, value),) = saved["tasks"].items()
    shown = results.inner_text()
    assert name == "colours" and name in shown and value["metric"] in shown
    numbers = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", shown)]
    assert round(value["score"], 4) in numbers and value["n"] == 4 and 4 in numbers
    samples = page.locator("#om-eval--samples")
    wait_for(lambda: "colours.jsonl:4" in samples.inner_text(), 30, "the per-sample view")
    saved_samples = (Path(job.folder) / "results" / "samples_colours.jsonl").read_text().splitlines()
    shown = samples.inner_text()
    for line in saved_samples:  # every sample, with where it came from and what the model picked
        sample = json.loads(line)
        assert sample["where"] in shown and sample["prediction"] in shown
    page.screenshot(path=str(artifacts / "09-evaluate.png"), full_page=True)


def test_hub_tab_pulls_lists_verifies_and_removes(page, tiny_model, artifacts):
    open_tab(page, "Hub")
    box(page, "om-hub--id").fill(f"local::{tiny_model}")
    page.click("#om-hub--pull")
    progress = box(page, "om-hub--progress")
    wait_for(lambda: "[done]" in progress.input_value(), 120, "the download to finish")
    cache = page.locator("#om-hub--cache")
    page.click("#om-hub--refresh")
    wait_for(lambda: str(tiny_model) in cache.inner_text(), 30, "the cache list")
    assert "MB" in cache.inner_text()
    box(page, "om-hub--selected").fill(f"local:{tiny_model}")
    page.click("#om-hub--verify")
    result = box(page, "om-hub--result")
    wait_for(lambda: '"ok"' in result.input_value(), 60, "the verification")
    assert json.loads(result.input_value().splitlines()[0]).keys() == {"ok"}
    page.screenshot(path=str(artifacts / "10-hub.png"), full_page=True)
    page.click("#om-hub--remove")
    wait_for(lambda: "freed" in result.input_value(), 60, "the removal")
    wait_for(lambda: str(tiny_model) not in cache.inner_text(), 30, "the cache list without it")


def test_stop_and_resume_a_run(page, webui, tiny_model, chat_data, artifacts):
    _, root = webui
    open_tab(page, "Train")
    values = {
        "model": str(tiny_model),
        "dataset": str(chat_data),
        "output_dir": "resumed-run",
        "cutoff_len": "64",
        "max_steps": "2000",
        "logging_steps": "2",
        "save_steps": "4",
        "per_device_train_batch_size": "4",
    }
    for key, value in values.items():
        box(page, f"om-train-{key.replace('_', '-')}").fill(value)
    page.click("#om-train--start")
    run_dir = root / "resumed-run"
    wait_for(lambda: list(run_dir.glob("checkpoint-*/openmind_checkpoint.json")), 300, "a complete checkpoint", 1)
    first = J.jobs(root, "train")[0]
    page.click("#om-train--stop")
    status = page.locator("#om-train--status")
    message = page.locator("#om-train--message")
    try:
        wait_for(lambda: "stopped" in status.inner_text(), 120, "the run to show as stopped")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; status {status.inner_text()!r}, message {message.inner_text()!r}") from None
    assert not first.alive()
    page.click("#om-train--resume")
    try:
        wait_for(lambda: J.jobs(root, "train")[0].id != first.id, 60, "a resumed job")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the page says: {message.inner_text()!r}") from None
    resumed = J.jobs(root, "train")[0]
    config = yaml.safe_load((Path(resumed.folder) / "config.yaml").read_text())
    assert config["training"]["resume"] is True and config["training"]["output_dir"] == str(run_dir)
    assert config["training"]["max_steps"] == 2000  # the stopped run's own arguments
    wait_for(lambda: "resuming from" in J.tail(resumed.log, 200), 240, "the trainer to resume", 1)
    wait_for(lambda: "running" in status.inner_text(), 30, "the resumed run to show as running")
    page.screenshot(path=str(artifacts / "11-train-resumed.png"), full_page=True)
    page.click("#om-train--stop")
    wait_for(lambda: not resumed.alive(), 60, "the resumed run to stop")
