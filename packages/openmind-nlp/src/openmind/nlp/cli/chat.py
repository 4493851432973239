"""``openmind chat --model PATH``: an interactive chat with streaming and history."""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from openmind.core.cli.command import Command
from openmind.core.errors import A_MISSING

HELP = """commands:
  /clear         forget the conversation
  /system TEXT   set the system prompt (and forget the conversation); /system alone removes it
  /history       show the conversation
  /image PATH    attach an image (path or file:// URL) to the next message (vision-language models)
  /exit          quit (also /quit, Ctrl-D)"""


class ChatCommand(Command):
    groups = ("model", "template", "generation")
    takes_config = True
    description = (
        "Chat with a model in the terminal. Answers stream as they are generated; the conversation\n"
        "is kept until /clear. Reads stdin, so it also works in pipes:\n"
        '  printf "Hello\\n/exit\\n" | openmind chat --model ./tiny-llama\n\n' + HELP
    )
    epilog = """examples:
  openmind chat --model ./tiny-llama --system "You are terse." --max-new-tokens 128
  openmind chat ./output/sft-run            # a training run folder: its model and adapter
  openmind chat chat.yaml --temperature 0.7"""

    def run(self, ns: argparse.Namespace) -> int:
        from openmind.core.api import pipeline
        from openmind.core.logs import setup_console
        from openmind.nlp.cli.options import pipeline_kwargs

        setup_console()
        args = self.resolve(ns)
        # a training run folder chats with what it trained: its full weights, or base + its adapter
        from openmind.nlp.serve.cli import resolve_run_folder

        resolve_run_folder(args, ns)
        if args.model.model is None:
            raise A_MISSING.error("no model given", hint="Pass --model PATH, or a model/run folder as CONFIG.")
        pipe = pipeline("chat", args.model.model, **pipeline_kwargs(args, "chat"))
        return repl(pipe, sys.stdin, sys.stdout, sys.stderr)


def repl(pipe: Any, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    """The chat loop; prompts and notices go to ``stderr``, answers to ``stdout``."""
    interactive = stdin.isatty()
    if interactive:
        try:
            import readline  # noqa: F401  - arrow-key history for input()
        except ImportError:
            pass
    session = pipe.session()
    print(
        f"chatting with {pipe.model_dir} ({pipe.selection['framework']}, {pipe.selection['device']}); "
        "/help for commands",
        file=stderr,
    )
    while True:
        if interactive:
            stderr.write("\nuser> ")
            stderr.flush()
        line = stdin.readline()
        if not line:
            break
        text = line.rstrip("\n")
        if not text.strip():
            continue
        command, _, rest = text.strip().partition(" ")
        if command in ("/exit", "/quit"):
            break
        if command == "/clear":
            session.clear()
            print("(conversation cleared)", file=stderr)
            continue
        if command == "/system":
            session.system = rest.strip() or None
            session.clear()
            print(f"(system prompt {'set' if session.system else 'removed'}; conversation cleared)", file=stderr)
            continue
        if command == "/history":
            if session.system:
                print(f"[system] {session.system}", file=stderr)
            for message in session.history:
                content = message["content"]
                if isinstance(content, list):  # text and image parts
                    content = "".join(p.get("text", "") if p.get("type") == "text" else "[image] " for p in content)
                print(f"[{message['role']}] {content}", file=stderr)
            continue
        if command == "/image":
            attach = getattr(session, "attach", None)
            if attach is None:
                print("(this model reads text only: /image needs a vision-language model)", file=stderr)
                continue
            try:
                attach(rest.strip())
            except Exception as exc:  # noqa: BLE001 - a bad image must not end the conversation
                print(f"(image not attached: {_describe(exc)})", file=stderr)
                continue
            print(f"(image attached to the next message: {rest.strip()})", file=stderr)
            continue
        if command in ("/help", "/?"):
            print(HELP, file=stderr)
            continue
        if command.startswith("/") and " " not in command and len(command) > 1 and command[1:].isalpha():
            print(f"unknown command {command}; /help lists them", file=stderr)
            continue
        if interactive:
            stderr.write("assistant> ")
            stderr.flush()
        stream = None
        try:
            stream = session.send(text, stream=True)
            for delta in stream:
                stdout.write(delta)
                stdout.flush()
        except KeyboardInterrupt:
            if stream is not None:
                stream.close()
            print("\n(interrupted)", file=stderr)
        except Exception as exc:  # noqa: BLE001 - one bad message must not end the conversation
            # the history gains a turn only once its answer is complete, so nothing is half-kept
            print(f"\n(message dropped, the conversation is kept: {_describe(exc)})", file=stderr)
        stdout.write("\n")
        stdout.flush()
    return 0


def _describe(exc: BaseException) -> str:
    from openmind.core.errors import OpenMindError

    if isinstance(exc, OpenMindError):
        hint = getattr(exc, "hint", None)
        return f"{exc.code} {exc.message}" + (f" - {hint}" if hint else "")
    return f"{type(exc).__name__}: {exc}"
