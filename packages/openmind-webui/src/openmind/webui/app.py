"""The page: one Gradio ``Blocks`` with the tabs Chat, Data, Train, Evaluate, Serve, Hub and
Support matrix.

* Chat runs :func:`openmind.pipeline` in this process (streamed through the pipeline's own
  ``stream=True``); its model/template/generation inputs are generated from the argument groups.
* Data asks ``openmind data validate|preview --json`` (a process of its own: a broken file or a
  heavy tokenizer never takes the page down).
* Train, Evaluate, Serve and Hub downloads start ``openmind train CONFIG.yaml``, ``openmind eval``,
  ``openmind deploy`` and ``openmind pull`` detached (:mod:`openmind.webui.jobs`); the page reads
  back what they write (:mod:`openmind.webui.runs`), so a reload shows the same state.
* Every label is registered with its :mod:`~openmind.webui.i18n` key, so the language switch
  relabels the whole page.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from openmind.core.errors import OpenMindError
from openmind.webui import forms as F
from openmind.webui import jobs as J
from openmind.webui import runs as R
from openmind.webui.i18n import LANGUAGES, STRINGS, t

#: seconds between refreshes of live views (runs, server, downloads)
REFRESH_SECONDS = 1.5
#: the chat tab's inputs (keys of the model and template groups)
CHAT_MODEL_KEYS = ("model", "adapter", "template", "framework", "device", "system")
#: generation keys the chat tab leaves out (batching does not apply to one conversation)
CHAT_SKIP_KEYS = ("batch_size",)
EVAL_KEYS = ("tasks", "task_dir", "n_shot", "limit", "eval_batch_size", "eval_backend")
LOG_LINES = 30


def _error_text(exc: BaseException, lang: str) -> str:
    if isinstance(exc, OpenMindError):
        return (
            f"**{t('error', lang)} {exc.code}**: {exc.message}"
            + (f" (at {exc.location})" if exc.location else "")
            + (f"\n\n{exc.hint}" if exc.hint else "")
        )
    return f"**{t('error', lang)}**: {type(exc).__name__}: {exc}"


def _message_text(content: Any) -> str:
    """The text of a Chatbot message (a string, or Gradio's list of typed parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return str(content.get("text") or content.get("value") or "")
    if isinstance(content, (list, tuple)):
        return "".join(_message_text(c) for c in content)
    return "" if content is None else str(content)


def _pipeline_message(message: dict[str, Any]) -> dict[str, Any]:
    """A Chatbot message as the chat pipeline takes it: text, or text and image parts when the
    message carries files (images sent to a vision-language model)."""
    content = message.get("content")
    parts = content if isinstance(content, (list, tuple)) else [content]
    files = [p for p in parts if isinstance(p, dict) and (p.get("type") == "file" or "path" in p or "file" in p)]
    if not files:
        return {"role": message["role"], "content": _message_text(content)}
    out: list[dict[str, Any]] = []
    for part in parts:
        if part in files:
            path = part.get("path") or (part.get("file") or {}).get("path")
            out.append({"type": "image", "image": path})
        else:
            text = _message_text(part)
            if text:
                out.append({"type": "text", "text": text})
    return {"role": message["role"], "content": out}


def _cli_flags(nested: dict[str, dict[str, Any]]) -> list[str]:
    flags: list[str] = []
    for group in nested.values():
        for key, value in group.items():
            if isinstance(value, list):
                value = ",".join(map(str, value))
            elif isinstance(value, bool):
                value = "true" if value else "false"
            flags += ["--" + key.replace("_", "-"), str(value)]
    return flags


def _human(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"


class Page:
    """Builds the page; holds the label registry and the chat pipeline of this web UI process."""

    def __init__(self, root: str | Path, lang: str = "en") -> None:
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.lang = lang
        #: (component, i18n key, attribute) of every translated text on the page
        self.labels: list[tuple[Any, str, str]] = []
        #: every input generated from an argument field (its help text follows the language)
        self.field_inputs: list[tuple[Any, F.Field]] = []
        #: the generated inputs of the Train form, by key
        self.train_inputs: dict[str, Any] = {}
        self._chat: dict[str, Any] = {"pipe": None, "desc": ""}
        self._chat_lock = threading.Lock()

    # ---- helpers ---------------------------------------------------------------------------
    def L(self, component: Any, key: str, attr: str = "label") -> Any:  # noqa: N802 - reads as a marker
        self.labels.append((component, key, attr))
        return component

    def field(self, gr: Any, f: F.Field, prefix: str, value: Any = None) -> Any:
        """The input of an argument field (see :mod:`openmind.webui.forms`)."""
        comp = F.component(f, gr, value=value, elem_prefix=prefix, lang=self.lang)
        self.field_inputs.append((comp, f))
        return comp

    def translated(self) -> list[Any]:
        """The components :meth:`relabel` updates, in its order."""
        return [c for c, _, _ in self.labels] + [c for c, _ in self.field_inputs]

    def relabel(self, lang: str) -> list[Any]:
        import gradio as gr

        return [gr.update(**{attr: t(key, lang)}) for _, key, attr in self.labels] + [
            gr.update(info=F.help_text(f, lang)) for _, f in self.field_inputs
        ]

    # ---- build -----------------------------------------------------------------------------
    def build(self) -> Any:
        import gradio as gr

        lang = self.lang
        with gr.Blocks(title="openmind") as demo:
            with gr.Row():
                self.L(gr.Markdown(t("title", lang)), "title", "value")
                language = self.L(
                    gr.Radio(
                        choices=[(name, code) for code, name in LANGUAGES.items()],
                        value=lang,
                        label=t("language", lang),
                        elem_id="om-language",
                    ),
                    "language",
                )
            with gr.Tabs():
                with self.L(gr.Tab(t("tab_chat", lang), id="chat"), "tab_chat"):
                    self._chat_tab(gr, language)
                with self.L(gr.Tab(t("tab_data", lang), id="data"), "tab_data"):
                    self._data_tab(gr, language)
                with self.L(gr.Tab(t("tab_train", lang), id="train"), "tab_train"):
                    self._train_tab(gr, language, demo)
                with self.L(gr.Tab(t("tab_eval", lang), id="eval"), "tab_eval"):
                    self._eval_tab(gr, language)
                with self.L(gr.Tab(t("tab_serve", lang), id="serve"), "tab_serve"):
                    self._serve_tab(gr, language)
                with self.L(gr.Tab(t("tab_hub", lang), id="hub"), "tab_hub"):
                    self._hub_tab(gr, language, demo)
                with self.L(gr.Tab(t("tab_support", lang), id="support"), "tab_support"):
                    self._support_tab(gr, language, demo)
            language.change(self.relabel, inputs=language, outputs=self.translated())
        return demo

    # ---- chat ------------------------------------------------------------------------------
    def _chat_tab(self, gr: Any, language: Any) -> None:
        lang = self.lang
        model_fields = F.fields(("model", "template"), only=CHAT_MODEL_KEYS)
        gen_fields = [f for f in F.fields(("generation",)) if f.name not in CHAT_SKIP_KEYS]
        with gr.Row():
            with gr.Column(scale=1):
                model_inputs = [self.field(gr, f, "om-chat") for f in model_fields]
                load = self.L(
                    gr.Button(t("chat_load", lang), variant="primary", elem_id="om-chat--load"), "chat_load", "value"
                )
                unload = self.L(gr.Button(t("chat_unload", lang), elem_id="om-chat--unload"), "chat_unload", "value")
                status = self.L(
                    gr.Textbox(
                        t("chat_not_loaded", lang),
                        label=t("chat_status", lang),
                        interactive=False,
                        elem_id="om-chat--status",
                    ),
                    "chat_status",
                )
                with self.L(gr.Accordion(t("chat_params", lang), open=True), "chat_params"):
                    gen_inputs = [self.field(gr, f, "om-chat") for f in gen_fields]
            with gr.Column(scale=2):
                chatbot = self.L(gr.Chatbot(label=t("chat_box", lang), elem_id="om-chat--box", height=420), "chat_box")
                message = self.L(
                    gr.Textbox(label=t("chat_message", lang), lines=2, elem_id="om-chat--message"), "chat_message"
                )
                image = self.L(
                    gr.Image(
                        type="filepath",
                        format="png",  # lossless: the model sees the pixels that were uploaded
                        sources=["upload"],
                        label=t("chat_image", lang),
                        elem_id="om-chat--image",
                        height=160,
                    ),
                    "chat_image",
                )
                stream = self.L(
                    gr.Checkbox(True, label=t("chat_stream", lang), elem_id="om-chat--stream"), "chat_stream"
                )
                with gr.Row():
                    send = self.L(
                        gr.Button(t("chat_send", lang), variant="primary", elem_id="om-chat--send"),
                        "chat_send",
                        "value",
                    )
                    clear = self.L(gr.Button(t("chat_clear", lang), elem_id="om-chat--clear"), "chat_clear", "value")

        def do_load(lang: str, *values: Any) -> str:
            try:
                nested = F.collect(model_fields, values, where="Chat")
                flat = {k: v for g in nested.values() for k, v in g.items()}
                model = flat.pop("model", None)
                if not model:
                    return t("chat_not_loaded", lang)
                import openmind

                with self._chat_lock:
                    self._chat["pipe"] = None
                    pipe = openmind.pipeline("chat", model=model, **flat)
                    desc = pipe.backend.describe()
                    template = getattr(getattr(pipe, "chat_template", None), "name", None)
                    # vision-language folders are prompted by their processor's own template
                    template = template or ("processor" if hasattr(pipe.backend, "processor") else "?")
                    self._chat.update(pipe=pipe)
                return t("chat_loaded", lang, model=model, framework=desc.get("framework", "?"), template=template)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang)

        def do_unload(lang: str) -> str:
            with self._chat_lock:
                self._chat["pipe"] = None
            return t("chat_unloaded", lang)

        def do_send(lang: str, text: str, history: list, streaming: bool, picture: Any, *values: Any):
            history = list(history or [])
            if not text.strip():
                yield history, text, picture
                return
            pipe = self._chat["pipe"]
            history.append({"role": "user", "content": [{"path": picture}, text] if picture else text})
            if pipe is None:
                history.append({"role": "assistant", "content": t("chat_not_loaded", lang)})
                yield history, "", picture
                return
            try:
                nested = F.collect(gen_fields, values, where="Chat")
                # the generation group's keys as the chat pipeline names them (generation_seed -> seed)
                from openmind.nlp.cli.options import GENERATION_KEYS

                params = {GENERATION_KEYS.get(k, k): v for g in nested.values() for k, v in g.items()}
                messages = [_pipeline_message(m) for m in history]
                if streaming:
                    history.append({"role": "assistant", "content": ""})
                    answer = ""
                    for delta in pipe(messages, stream=True, **params):
                        answer += delta
                        history[-1] = {"role": "assistant", "content": answer}
                        yield history, "", None
                    yield history, "", None
                else:
                    out = pipe(messages, **params)
                    history.append({"role": "assistant", "content": out["content"]})
                    yield history, "", None
            except Exception as exc:  # noqa: BLE001 - shown in the conversation
                history.append({"role": "assistant", "content": _error_text(exc, lang)})
                yield history, "", None

        load.click(do_load, inputs=[language, *model_inputs], outputs=status)
        unload.click(do_unload, inputs=language, outputs=status)
        send_args = {
            "inputs": [language, message, chatbot, stream, image, *gen_inputs],
            "outputs": [chatbot, message, image],
        }
        send.click(do_send, **send_args)
        message.submit(do_send, **send_args)
        clear.click(lambda: [], outputs=chatbot)

    # ---- data ------------------------------------------------------------------------------
    def _data_tab(self, gr: Any, language: Any) -> None:
        from openmind.core.plugins import get_registry

        lang = self.lang
        registered = sorted(s.name for s in get_registry().all("dataset"))
        stage_field = F.fields(("finetuning",), only=("stage",))[0]
        with gr.Row():
            dataset = self.L(
                gr.Dropdown(
                    choices=registered,
                    value=None,
                    allow_custom_value=True,
                    label=t("data_dataset", lang),
                    elem_id="om-data--dataset",
                ),
                "data_dataset",
            )
            dataset_dir = self.L(
                gr.Textbox(label=t("data_dataset_dir", lang), elem_id="om-data--dir"), "data_dataset_dir"
            )
            stage = self.L(
                gr.Dropdown(
                    choices=list(stage_field.choices),
                    value=stage_field.default,
                    label=t("data_stage", lang),
                    elem_id="om-data--stage",
                ),
                "data_stage",
            )
            model = self.L(gr.Textbox(label=t("data_model", lang), elem_id="om-data--model"), "data_model")
        with gr.Row():
            validate = self.L(
                gr.Button(t("data_validate", lang), variant="primary", elem_id="om-data--validate"),
                "data_validate",
                "value",
            )
            preview = self.L(gr.Button(t("data_preview", lang), elem_id="om-data--preview"), "data_preview", "value")
        report = self.L(gr.Markdown(t("data_report", lang), elem_id="om-data--report"), "data_report", "value")
        problems = self.L(
            gr.Dataframe(
                headers=["location", "reason"],
                label=t("data_problems", lang),
                interactive=False,
                elem_id="om-data--problems",
            ),
            "data_problems",
        )
        rendered = self.L(
            gr.Textbox(label=t("data_rendered", lang), lines=12, interactive=False, elem_id="om-data--rendered"),
            "data_rendered",
        )

        def run_json(args: list[str]) -> Any:
            """The JSON document ``openmind ARGS`` prints (after any log lines), or its error."""
            proc = subprocess.run(
                [J.openmind_exe(), *args], capture_output=True, text=True, cwd=str(self.root), timeout=600, check=False
            )
            out = proc.stdout
            starts = [0] + [i + 1 for i, c in enumerate(out) if c == "\n"]
            for start in starts:
                if out[start : start + 1] in ("{", "["):
                    try:
                        return json.loads(out[start:])
                    except ValueError:
                        continue
            raise RuntimeError((proc.stderr or proc.stdout).strip()[-2000:] or f"exit code {proc.returncode}")

        def do_validate(lang: str, name: str, folder: str, stage: str):
            if not name:
                return t("data_report", lang), [], ""
            args = ["data", "validate", name, "--stage", stage, "--json"]
            if folder:
                args += ["--dataset-dir", folder]
            try:
                data = run_json(args)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang), [], ""
            table = [
                [
                    f"{p.get('source', '')}:{p.get('line', '')}" + (f" field {p['field']}" if p.get("field") else ""),
                    p.get("reason", ""),
                ]
                for p in data.get("problems", [])
            ]
            text = t(
                "data_ok", lang, rows=data.get("read", 0), kept=data.get("kept", 0), rejected=data.get("rejected", 0)
            )
            return text, table, ""

        def do_preview(lang: str, name: str, folder: str, stage: str, model_dir: str):
            if not name or not model_dir:
                return t("data_model", lang), gr.update(), ""
            args = ["data", "preview", "--dataset", name, "--model", model_dir, "--stage", stage, "--json", "-n", "3"]
            args += ["--on-error", "skip"]
            if folder:
                args += ["--dataset-dir", folder]
            try:
                data = run_json(args)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang), gr.update(), ""
            samples = data if isinstance(data, list) else data.get("samples", [])
            text = "\n\n-----\n\n".join(
                f"{s.get('source', '')} · tokens {s.get('tokens', '?')} · trained {s.get('trained', '?')}\n{s.get('text', '')}"
                for s in samples
            )
            return t("data_previewed", lang, n=len(samples)), gr.update(), text

        validate.click(
            do_validate, inputs=[language, dataset, dataset_dir, stage], outputs=[report, problems, rendered]
        )
        preview.click(
            do_preview, inputs=[language, dataset, dataset_dir, stage, model], outputs=[report, problems, rendered]
        )

    # ---- train -----------------------------------------------------------------------------
    def _train_tab(self, gr: Any, language: Any, demo: Any) -> None:
        lang = self.lang
        groups = F.train_groups()
        form = F.fields(groups)
        self.L(gr.Markdown(t("train_groups_help", lang)), "train_groups_help", "value")
        inputs = []
        for group in groups:
            accordion = gr.Accordion(t(f"group_{group}", lang) if f"group_{group}" in STRINGS else group, open=True)
            if f"group_{group}" in STRINGS:  # a group a plugin adds is titled with its name
                self.L(accordion, f"group_{group}")
            with accordion:
                with gr.Row():
                    for f in form:
                        if f.group == group:
                            comp = self.field(gr, f, "om-train")
                            self.train_inputs[f.name] = comp
                            inputs.append(comp)
        with gr.Row():
            preview = self.L(gr.Button(t("train_preview", lang), elem_id="om-train--preview"), "train_preview", "value")
            start = self.L(
                gr.Button(t("train_start", lang), variant="primary", elem_id="om-train--start"), "train_start", "value"
            )
            stop = self.L(
                gr.Button(t("train_stop", lang), variant="stop", elem_id="om-train--stop"), "train_stop", "value"
            )
            resume = self.L(gr.Button(t("train_resume", lang), elem_id="om-train--resume"), "train_resume", "value")
        message = gr.Markdown("", elem_id="om-train--message")
        yaml_box = self.L(
            gr.Code(
                language="yaml",
                label=t("train_yaml", lang),
                interactive=False,
                buttons=["copy", "download"],
                elem_id="om-train--yaml",
            ),
            "train_yaml",
        )
        with gr.Row():
            run_choice = self.L(
                gr.Dropdown(
                    choices=[],
                    value=None,
                    allow_custom_value=True,
                    label=t("train_runs", lang),
                    elem_id="om-train--runs",
                    scale=4,
                ),
                "train_runs",
            )
            refresh = self.L(
                gr.Button(t("train_refresh", lang), elem_id="om-train--refresh", scale=1), "train_refresh", "value"
            )
        status = gr.Markdown("", elem_id="om-train--status")
        plot = self.L(
            gr.LinePlot(x="step", y="loss", label=t("train_loss", lang), elem_id="om-train--plot", height=260),
            "train_loss",
        )
        log = self.L(
            gr.Textbox(
                label=t("train_log", lang),
                lines=10,
                max_lines=10,
                interactive=False,
                autoscroll=True,
                elem_id="om-train--log",
            ),
            "train_log",
        )

        def run_labels() -> list[str]:
            return [r.label for r in R.discover(self.root)]

        def resolve(nested: dict) -> tuple[dict, Path]:
            training = nested.setdefault("training", {})
            out = training.get("output_dir")
            if not out:
                stage = nested.get("finetuning", {}).get("stage", "sft")
                out = str(self.root / f"{stage}-{time.strftime('%Y%m%d-%H%M%S')}")
            path = Path(out)
            if not path.is_absolute():
                path = self.root / path
            training["output_dir"] = str(path)
            F.check(groups, nested)
            return nested, path

        def do_preview(lang: str, *values: Any):
            try:
                nested, _ = resolve(F.collect(form, values, where="Train"))
                return F.to_yaml(nested), ""
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return gr.update(), _error_text(exc, lang)

        def launch(nested: dict, path: Path, lang: str):
            text = F.to_yaml(nested)
            job = J.start(
                self.root, "train", ["train", "{folder}/config.yaml"], files={"config.yaml": text}, run_dir=str(path)
            )
            choices = run_labels()
            if str(path) not in choices:
                choices.insert(0, str(path))
            cmd = " ".join(["openmind", *job.cmd[1:]])
            return text, t("train_started", lang, cmd=f"`{cmd}`"), gr.update(choices=choices, value=str(path))

        def do_start(lang: str, *values: Any):
            try:
                nested, path = resolve(F.collect(form, values, where="Train"))
                return launch(nested, path, lang)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return gr.update(), _error_text(exc, lang), gr.update()

        def selected(label: str | None) -> R.Run | None:
            if not label:
                return None
            path = Path(label).resolve()
            job = next(
                (j for j in J.jobs(self.root, "train") if Path(j.meta.get("run_dir", "")).resolve() == path), None
            )
            return R.inspect(path, job) if path.exists() or job else None

        def do_stop(lang: str, label: str | None):
            run = selected(label)
            if run is None:
                return t("train_no_run", lang)
            if run.job is None or not J.stop(run.job):
                return t("train_not_running", lang, run=label)
            return t("train_stopped", lang, run=label)

        def do_resume(lang: str, label: str | None):
            try:
                run = selected(label)
                if run is None:
                    return gr.update(), t("train_no_run", lang), gr.update()
                if run.job is not None and (Path(run.job.folder) / "config.yaml").is_file():
                    import yaml

                    base = yaml.safe_load((Path(run.job.folder) / "config.yaml").read_text(encoding="utf-8")) or {}
                else:
                    base = R.A.load_run(run.path) or {}
                flat = F.flatten(base)
                nested: dict[str, dict[str, Any]] = {}
                for f in form:
                    if f.name in flat:
                        nested.setdefault(f.group, {})[f.name] = flat[f.name]
                nested.setdefault("training", {}).update(resume=True, output_dir=str(run.path))
                F.check(groups, nested)
                return launch(nested, run.path, lang)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return gr.update(), _error_text(exc, lang), gr.update()

        def do_refresh(lang: str, label: str | None):
            import pandas as pd

            labels = run_labels()
            if not label and labels:
                label = labels[0]
                choices = gr.update(choices=labels, value=label)
            else:
                # never set the value from the timer's (possibly stale) input: a Start or Resume that
                # ran meanwhile has selected its own run, and the timer must not switch back
                choices = gr.update(choices=labels)
            run = selected(label)
            if run is None:
                return choices, t("train_no_run", lang), pd.DataFrame({"step": [], "loss": []}), "", gr.update()
            points = R.loss_points(run)
            prog = R.progress(run, points)
            text = t(
                "train_progress",
                lang,
                status=t(f"status_{run.status}", lang),
                step="?" if prog.step is None else prog.step,
                total="?" if prog.total is None else prog.total,
                elapsed=prog.elapsed or "?",
                eta=prog.eta or "?",
                loss=f"{points[-1][1]:.4f}" if points else "?",
                path=run.path,
            )
            frame = pd.DataFrame({"step": [p[0] for p in points], "loss": [p[1] for p in points]})
            log_text = J.tail(run.job.log, LOG_LINES) if run.job else ""
            yaml_text = gr.update()
            if run.job is not None and (Path(run.job.folder) / "config.yaml").is_file():
                yaml_text = (Path(run.job.folder) / "config.yaml").read_text(encoding="utf-8")
            return choices, text, frame, log_text, yaml_text

        preview.click(do_preview, inputs=[language, *inputs], outputs=[yaml_box, message])
        start.click(do_start, inputs=[language, *inputs], outputs=[yaml_box, message, run_choice])
        stop.click(do_stop, inputs=[language, run_choice], outputs=message)
        resume.click(do_resume, inputs=[language, run_choice], outputs=[yaml_box, message, run_choice])
        live = [run_choice, status, plot, log, yaml_box]
        refresh.click(do_refresh, inputs=[language, run_choice], outputs=live)
        run_choice.input(do_refresh, inputs=[language, run_choice], outputs=live)
        timer = gr.Timer(REFRESH_SECONDS)
        timer.tick(do_refresh, inputs=[language, run_choice], outputs=live, show_progress="hidden")
        demo.load(do_refresh, inputs=[language, run_choice], outputs=live)

    # ---- evaluate ---------------------------------------------------------------------------
    def _eval_tab(self, gr: Any, language: Any) -> None:
        lang = self.lang
        model_field = F.fields(("model",), only=("model",))
        eval_fields = F.fields(("eval",), only=EVAL_KEYS)
        with gr.Row():
            model = self.field(gr, model_field[0], "om-eval")
            inputs = [self.field(gr, f, "om-eval") for f in eval_fields]
        with gr.Row():
            start = self.L(
                gr.Button(t("eval_start", lang), variant="primary", elem_id="om-eval--start"), "eval_start", "value"
            )
            stop = self.L(
                gr.Button(t("eval_stop", lang), variant="stop", elem_id="om-eval--stop"), "eval_stop", "value"
            )
        status = self.L(
            gr.Textbox(
                label=t("eval_status", lang), lines=8, max_lines=8, interactive=False, elem_id="om-eval--status"
            ),
            "eval_status",
        )
        results = self.L(
            gr.Dataframe(
                headers=["task", "subject", "metric", "score", "n"],
                label=t("eval_results", lang),
                interactive=False,
                elem_id="om-eval--results",
            ),
            "eval_results",
        )
        task_choice = self.L(
            gr.Dropdown(choices=[], label=t("eval_sample_task", lang), elem_id="om-eval--task"), "eval_sample_task"
        )
        samples = self.L(
            gr.Dataframe(label=t("eval_samples", lang), interactive=False, elem_id="om-eval--samples"), "eval_samples"
        )

        def do_start(lang: str, model_value: str, *values: Any):
            try:
                nested = F.collect(model_field + eval_fields, [model_value, *values], where="Evaluate")
                args = ["eval", *_cli_flags(nested), "--eval-output-dir", "{folder}/results"]
                job = J.start(self.root, "eval", args)
                return "openmind " + " ".join(job.cmd[1:])
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang)

        def latest() -> J.Job | None:
            found = J.jobs(self.root, "eval")
            return found[0] if found else None

        def do_stop(lang: str):
            job = latest()
            if job is not None:
                J.stop(job)
            return J.tail(job.log, LOG_LINES) if job else ""

        def do_refresh(task: str | None):
            job = latest()
            if job is None:
                return "", [], gr.update(), []
            folder = Path(job.folder) / "results"
            table: list[list[Any]] = []
            tasks: list[str] = []
            if (folder / "results.json").is_file():
                data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
                for name, value in data.get("tasks", {}).items():
                    tasks.append(name)
                    table.append(
                        [name, "(all)", value.get("metric"), round(float(value.get("score", 0)), 4), value.get("n")]
                    )
                    for subject, sub in sorted((value.get("subjects") or {}).items()):
                        table.append(
                            ["", subject, value.get("metric"), round(float(sub.get("score", 0)), 4), sub.get("n")]
                        )
            task = task if task in tasks else (tasks[0] if tasks else None)
            rows: list[dict[str, Any]] = []
            if task:
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task)
                path = folder / f"samples_{safe}.jsonl"
                if path.is_file():
                    with open(path, encoding="utf-8") as fh:
                        for i, line in enumerate(fh):
                            if i >= 200:
                                break
                            row = json.loads(line)
                            rows.append(
                                {
                                    k: v if isinstance(v, (str, int, float)) else json.dumps(v, ensure_ascii=False)
                                    for k, v in row.items()
                                }
                            )
            import pandas as pd

            state = ("running · " if job.alive() else "") + "openmind " + " ".join(job.cmd[1:])
            return (
                f"{state}\n\n{J.tail(job.log, LOG_LINES)}",
                table,
                gr.update(choices=tasks, value=task),
                pd.DataFrame(rows),
            )

        start.click(do_start, inputs=[language, model, *inputs], outputs=status)
        stop.click(do_stop, inputs=language, outputs=status)
        live = [status, results, task_choice, samples]
        task_choice.input(do_refresh, inputs=task_choice, outputs=live)
        timer = gr.Timer(REFRESH_SECONDS * 2)
        timer.tick(do_refresh, inputs=task_choice, outputs=live, show_progress="hidden")

    # ---- serve -----------------------------------------------------------------------------
    def _serve_tab(self, gr: Any, language: Any) -> None:
        lang = self.lang
        deploy_fields = F.fields(("model",), only=("model", "adapter")) + F.fields(("deploy",))
        with gr.Row():
            inputs = []
            for f in deploy_fields:
                value = ("sk-om-" + secrets.token_urlsafe(12)) if f.name == "api_key" else None
                inputs.append(self.field(gr, f, "om-serve", value=value))
        with gr.Row():
            start = self.L(
                gr.Button(t("serve_start", lang), variant="primary", elem_id="om-serve--start"), "serve_start", "value"
            )
            stop = self.L(
                gr.Button(t("serve_stop", lang), variant="stop", elem_id="om-serve--stop"), "serve_stop", "value"
            )
        status = gr.Markdown(t("serve_down", lang), elem_id="om-serve--status")
        snippets = self.L(
            gr.Code(language="shell", label=t("serve_snippets", lang), interactive=False, elem_id="om-serve--snippets"),
            "serve_snippets",
        )
        log = self.L(
            gr.Textbox(label=t("serve_log", lang), lines=8, max_lines=8, interactive=False, elem_id="om-serve--log"),
            "serve_log",
        )

        def latest() -> J.Job | None:
            found = J.jobs(self.root, "serve")
            return found[0] if found else None

        def do_start(lang: str, *values: Any):
            try:
                nested = F.collect(deploy_fields, values, where="Serve")
                ns = F.check(("model", "deploy"), nested)
                running = latest()
                if running is not None and running.alive():
                    J.stop(running)
                job = J.start(
                    self.root,
                    "serve",
                    ["deploy", *_cli_flags(nested)],
                    host=ns.deploy.host,
                    port=ns.deploy.port,
                    api_key=ns.deploy.api_key or "",
                    name=ns.deploy.served_model_name or Path(str(ns.model.model)).name,
                )
                return do_refresh(lang, job)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang), gr.update(), ""

        def do_stop(lang: str):
            job = latest()
            if job is not None:
                J.stop(job)
            return do_refresh(lang, job)

        def do_refresh(lang: str, job: J.Job | None = None):
            job = job or latest()
            if job is None:
                return t("serve_down", lang), "", ""
            host = job.meta.get("host", "127.0.0.1")
            host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
            base = f"http://{host}:{job.meta.get('port')}"
            endpoint = f"{base}/v1"
            log_text = J.tail(job.log, LOG_LINES)
            if not job.alive():
                return t("serve_down", lang), "", log_text
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=1.5) as response:
                    health = json.loads(response.read().decode("utf-8"))
            except (OSError, ValueError):
                return t("serve_starting", lang, endpoint=endpoint), "", log_text
            key = job.meta.get("api_key") or "not-needed"
            name = health.get("model") or job.meta.get("name")
            auth = f" \\\n  -H 'Authorization: Bearer {key}'" if job.meta.get("api_key") else ""
            snippet = (
                f"curl {endpoint}/chat/completions -H 'Content-Type: application/json'{auth} \\\n"
                f"  -d '{json.dumps({'model': name, 'messages': [{'role': 'user', 'content': 'Hello'}]})}'\n\n"
                "# Python (pip install openai)\n"
                f"# from openai import OpenAI\n"
                f"# client = OpenAI(base_url={endpoint!r}, api_key={key!r})\n"
                f"# client.chat.completions.create(model={name!r}, messages=[{{'role': 'user', 'content': 'Hello'}}])\n"
            )
            text = t(
                "serve_up",
                lang,
                endpoint=endpoint,
                requests=health.get("requests", "?"),
                batches=health.get("batches", "?"),
                queued=health.get("queued", "?"),
            )
            return text, snippet, log_text

        start.click(do_start, inputs=[language, *inputs], outputs=[status, snippets, log])
        stop.click(do_stop, inputs=language, outputs=[status, snippets, log])
        timer = gr.Timer(REFRESH_SECONDS)
        timer.tick(
            lambda lang: do_refresh(lang), inputs=language, outputs=[status, snippets, log], show_progress="hidden"
        )

    # ---- hub -------------------------------------------------------------------------------
    def _hub_tab(self, gr: Any, language: Any, demo: Any) -> None:
        lang = self.lang
        with gr.Row():
            repo = self.L(gr.Textbox(label=t("hub_id", lang), elem_id="om-hub--id"), "hub_id")
            revision = self.L(gr.Textbox(label=t("hub_revision", lang), elem_id="om-hub--revision"), "hub_revision")
            pull = self.L(
                gr.Button(t("hub_pull", lang), variant="primary", elem_id="om-hub--pull"), "hub_pull", "value"
            )
        progress = self.L(
            gr.Textbox(
                label=t("hub_progress", lang), lines=4, max_lines=4, interactive=False, elem_id="om-hub--progress"
            ),
            "hub_progress",
        )
        cache = self.L(
            gr.Dataframe(
                headers=["hub", "repo", "size", "files", "refs", "partial"],
                label=t("hub_cache", lang),
                interactive=False,
                elem_id="om-hub--cache",
            ),
            "hub_cache",
        )
        with gr.Row():
            chosen = self.L(gr.Textbox(label=t("hub_selected", lang), elem_id="om-hub--selected"), "hub_selected")
            refresh = self.L(gr.Button(t("hub_refresh", lang), elem_id="om-hub--refresh"), "hub_refresh", "value")
            verify = self.L(gr.Button(t("hub_verify", lang), elem_id="om-hub--verify"), "hub_verify", "value")
            remove = self.L(
                gr.Button(t("hub_remove", lang), variant="stop", elem_id="om-hub--remove"), "hub_remove", "value"
            )
        result = self.L(
            gr.Textbox(label=t("hub_result", lang), lines=4, interactive=False, elem_id="om-hub--result"), "hub_result"
        )

        def cache_rows() -> list[list[Any]]:
            from openmind.core.hub import cache as C

            return [
                [
                    r.hub,
                    r.repo_id,
                    _human(r.size),
                    r.files,
                    ", ".join(f"{k}={v[:8]}" for k, v in r.refs.items()),
                    _human(r.partial_bytes),
                ]
                for r in C.scan()
            ]

        def find(label: str):
            from openmind.core.hub import cache as C

            hub, _, repo_id = label.strip().partition(":")
            for r in C.scan():
                if (r.hub, r.repo_id) == (hub, repo_id) or (not repo_id and r.repo_id == hub):
                    return r
            return None

        def do_pull(lang: str, repo_id: str, rev: str):
            if not repo_id.strip():
                return ""
            try:
                args = ["pull", repo_id.strip()] + (["--revision", rev.strip()] if rev.strip() else [])
                job = J.start(self.root, "pull", args)
                return "openmind " + " ".join(job.cmd[1:])
            except Exception as exc:  # noqa: BLE001
                return _error_text(exc, lang)

        def pull_progress():
            found = J.jobs(self.root, "pull")
            if not found:
                return ""
            job = found[0]
            state = "running" if job.alive() else "done"
            return f"[{state}] openmind {' '.join(job.cmd[1:])}\n{J.tail(job.log, 3)}"

        def do_verify(lang: str, label: str):
            from openmind.core.hub import cache as C

            repo_obj = find(label)
            if repo_obj is None:
                return f"{label}: not in the cache"
            try:
                counts: dict[str, int] = {}
                bad = []
                for check in C.verify(repo_obj):
                    counts[check.state] = counts.get(check.state, 0) + 1
                    if check.state != "ok":
                        bad.append(json.dumps(check.to_dict()))
            except Exception as exc:  # noqa: BLE001 - shown on the page
                return _error_text(exc, lang)
            return json.dumps(counts) + ("\n" + "\n".join(bad[:20]) if bad else "")

        def do_remove(lang: str, label: str):
            from openmind.core.hub import rm

            repo_obj = find(label)
            if repo_obj is None:
                return f"{label}: not in the cache", cache_rows()
            try:
                out = rm(repo_obj.repo_id, hub=repo_obj.hub)
                return json.dumps(out, default=str), cache_rows()
            except Exception as exc:  # noqa: BLE001
                return _error_text(exc, lang), cache_rows()

        pull.click(do_pull, inputs=[language, repo, revision], outputs=progress)
        refresh.click(cache_rows, outputs=cache)
        verify.click(do_verify, inputs=[language, chosen], outputs=result)
        remove.click(do_remove, inputs=[language, chosen], outputs=[result, cache])
        timer = gr.Timer(REFRESH_SECONDS * 2)
        timer.tick(pull_progress, outputs=progress, show_progress="hidden")
        demo.load(cache_rows, outputs=cache)

    # ---- support matrix --------------------------------------------------------------------
    def _support_tab(self, gr: Any, language: Any, demo: Any) -> None:
        from openmind.core.cli.listing import KINDS

        lang = self.lang
        sections = [k for k in KINDS if k != "plugins"]
        with gr.Row():
            section = self.L(
                gr.Dropdown(
                    choices=sections, value=sections[0], label=t("support_section", lang), elem_id="om-support--section"
                ),
                "support_section",
            )
            search = self.L(gr.Textbox(label=t("support_search", lang), elem_id="om-support--search"), "support_search")
        table = self.L(
            gr.Dataframe(label=t("support_table", lang), interactive=False, elem_id="om-support--table"),
            "support_table",
        )

        def show(what: str, query: str):
            import pandas as pd

            from openmind.core.cli.listing import rows_for
            from openmind.core.plugins import get_registry

            headers, rows = rows_for(get_registry(), what, None, installed=True)
            q = (query or "").strip().lower()
            rows = [[str(c) for c in r] for r in rows if not q or any(q in str(c).lower() for c in r)]
            return pd.DataFrame(rows, columns=headers)

        section.change(show, inputs=[section, search], outputs=table)
        search.change(show, inputs=[section, search], outputs=table)
        demo.load(show, inputs=[section, search], outputs=table)


def build(root: str | Path, lang: str = "en") -> Any:
    """The page (a ``gradio.Blocks``) for runs under ``root``."""
    return Page(root, lang).build()


def theme() -> Any:
    """Gradio's default theme on local fonts: the page loads nothing from the internet."""
    import gradio as gr

    return gr.themes.Default(
        font=["ui-sans-serif", "system-ui", "sans-serif"], font_mono=["ui-monospace", "Consolas", "monospace"]
    )
