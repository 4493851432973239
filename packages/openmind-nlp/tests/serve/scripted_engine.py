"""A deterministic engine for testing the framework-free server parts (scheduler, app, proxy).

It "generates" the prompt's last user text reversed, one character per step (``step_s`` seconds
each), and reports fixed log-probabilities, so each answer is a function of its own prompt only:
a mis-routed or mixed-up response is visible. Real-model tests live in openmind-pt/tests/serve.
"""

from __future__ import annotations

import threading
import time

from openmind.nlp.serve.engine import Job, Output, Result, TokenLogprob


class ScriptedEngine:
    name = "scripted"
    kinds = frozenset({"chat", "completion", "embedding"})
    adapters = ("shout",)

    def __init__(self, step_s: float = 0.0, fail_on: str | None = None) -> None:
        self.step_s = step_s
        self.fail_on = fail_on
        self.batches: list[int] = []
        self.cancelled_rows = 0
        self.lock = threading.Lock()

    @staticmethod
    def answer_for(prompt) -> str:
        text = prompt[-1]["content"] if isinstance(prompt, list) and prompt and isinstance(prompt[0], dict) else prompt
        if isinstance(text, list):
            text = " ".join(map(str, text))
        return text[::-1]

    def prepare(self, job: Job) -> int:
        if job.kind == "embedding":
            return sum(len(str(p).split()) for p in job.prompt)
        if job.kind == "chat":
            return sum(len(m["content"].split()) + 3 for m in job.prompt)
        return len(job.prompt) if isinstance(job.prompt, list) else len(job.prompt.split())

    def batch_key(self, job: Job):
        return (job.kind, job.adapter, job.echo)

    def run_batch(self, jobs: list[Job]):
        with self.lock:
            self.batches.append(len(jobs))
        if self.fail_on is not None and any(self.fail_on in str(j.prompt) for j in jobs):
            raise RuntimeError("secret internal detail")
        if jobs[0].kind == "embedding":
            return [
                Result(embeddings=[[float(len(str(p))), 1.0] for p in j.prompt], prompt_tokens=j.prompt_tokens)
                for j in jobs
            ]
        targets = []
        for job in jobs:
            answer = self.answer_for(job.prompt)
            if job.adapter == "shout":
                answer = answer.upper()
            targets.append(answer)
        produced = [[""] * job.n for job in jobs]
        finish = [["length"] * job.n for job in jobs]
        steps = max(job.sampling.max_tokens for job in jobs)
        for step in range(steps):
            if self.step_s:
                time.sleep(self.step_s)
            for j, job in enumerate(jobs):
                for c in range(job.n):
                    if finish[j][c] != "length" or step >= job.sampling.max_tokens:
                        continue
                    if job.is_cancelled:
                        finish[j][c] = "cancelled"
                        with self.lock:
                            self.cancelled_rows += 1
                        continue
                    if len(produced[j][c]) >= len(targets[j]):
                        finish[j][c] = "stop"
                        continue
                    ch = targets[j][len(produced[j][c])]
                    produced[j][c] += ch
                    if job.on_text:
                        job.on_text(c, ch)
            if all(f != "length" for fs in finish for f in fs):
                break
        results = []
        for j, job in enumerate(jobs):
            outs = []
            for c in range(job.n):
                text = produced[j][c]
                reason = finish[j][c] if finish[j][c] != "length" or len(text) >= job.sampling.max_tokens else "stop"
                for stop in job.sampling.stop:
                    if stop in text:
                        text, reason = text[: text.index(stop)], "stop"
                lps = None
                if job.sampling.logprobs is not None:
                    lps = [
                        TokenLogprob(ch, ord(ch), -0.5, [(ch, -0.5), ("?", -1.5)][: job.sampling.logprobs])
                        for ch in text
                    ]
                prompt_lps = None
                if job.echo:
                    words = job.prompt.split() if isinstance(job.prompt, str) else [str(t) for t in job.prompt]
                    prompt_lps = [
                        TokenLogprob(
                            ("" if i == 0 else " ") + w,
                            i,
                            None if i == 0 else -1.0,
                            [] if i == 0 else [(" " + w, -1.0)],
                        )
                        for i, w in enumerate(words)
                    ]
                outs.append(Output(text, reason, len(text), lps, prompt_lps))
            results.append(Result(outputs=outs, prompt_tokens=job.prompt_tokens))
        return results
