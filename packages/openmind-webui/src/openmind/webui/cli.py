"""``openmind webui``: the web UI (Gradio) over the SDK and the CLI.

Loopback by default; bound to any other address it asks for a password (``--share-password``
or ``OPENMIND_WEBUI_PASSWORD``), and refuses to start without one.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets

from openmind.core.cli.command import Command
from openmind.webui.errors import W_NO_PASSWORD

PASSWORD_ENV = "OPENMIND_WEBUI_PASSWORD"
#: the user name the password prompt takes (any name is accepted; the password is what counts)
USER = "openmind"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class WebUICommand(Command):
    description = (
        "Open the web UI (Gradio): chat, data, train, evaluate, serve, the hub and the support matrix.\n\n"
        "Loopback by default; bound to any other address it asks for a password (--share-password or "
        f"${PASSWORD_ENV}) and refuses to start without one. Training, serving, evaluation and downloads run "
        "as `openmind ...` processes of their own: closing the page never stops them."
    )
    epilog = (
        "examples:\n"
        "  openmind webui                                   # http://127.0.0.1:7860, runs under ./runs\n"
        "  openmind webui --output-root /data/runs --port 8080\n"
        "  openmind webui --host 0.0.0.0 --share-password 's3cret'   # reachable from other machines"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="bind address (default: 127.0.0.1, loopback only)")
        parser.add_argument("--port", type=int, default=7860, help="port (default: 7860)")
        parser.add_argument(
            "--share-password",
            default=None,
            metavar="PASSWORD",
            help=f"password the page asks for (required when --host is not loopback; default: ${PASSWORD_ENV})",
        )
        parser.add_argument(
            "--output-root",
            default="runs",
            metavar="DIR",
            help="folder where training runs are started and looked for (default: ./runs)",
        )
        parser.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the page (default: en)")

    def run(self, args: argparse.Namespace) -> int:
        password = args.share_password or os.environ.get(PASSWORD_ENV) or None
        if not is_loopback(args.host) and not password:
            raise W_NO_PASSWORD.error(
                f"--host {args.host} makes the page (which starts training runs and servers) reachable from "
                "other machines",
                location="--host",
            )
        os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
        from openmind.webui.app import build, theme

        demo = build(args.output_root, args.lang)
        auth = None
        if password:

            def auth(_user: str, given: str) -> bool:
                return secrets.compare_digest(given.encode(), password.encode())

        print(f"openmind webui: http://{args.host}:{args.port}  (runs under {os.path.abspath(args.output_root)})")
        demo.queue(default_concurrency_limit=4).launch(
            server_name=args.host,
            server_port=args.port,
            auth=auth,
            theme=theme(),
            footer_links=[],
            show_error=True,
            quiet=True,
        )
        return 0
