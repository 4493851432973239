"""Plugin ``mm-serve``: openmind-mm on ``openmind deploy``'s server (registration only; imports no
server stack). ``POST /v1/images/generations`` serves a text-to-image folder; the ``images``
argument group adds ``--images-dir`` and ``--max-image-side`` to ``openmind deploy``.

A plugin of its own (beside ``mm``) because it builds on openmind-nlp's ``deploy`` verb
(``nlp-serve``): the tasks alone (``OPENMIND_PLUGINS=mm``) stay a valid registry without it.
"""

from __future__ import annotations

from openmind.core.hookspecs import hookimpl
from openmind.core.specs import ArgumentGroupSpec, RouteSpec


@hookimpl
def openmind_register_routes(register):
    # mounted beside openmind-nlp's OpenAI routes; `tasks` makes deploy load a text-to-image
    # folder through the registered text2image pipeline
    register(
        RouteSpec(
            path="/v1/images/generations",
            methods=("POST",),
            impl="openmind.mm.serve.images:handler",
            requires=("fastapi>=0.110",),
            order=200,
            tasks=("text2image",),
            description="OpenAI images API (text-to-image models: n, size, b64_json or file URLs, seed)",
        )
    )


@hookimpl
def openmind_register_argument_groups(register):
    register(
        ArgumentGroupSpec(
            name="images",
            impl="openmind.mm.serve.args:ImagesArguments",
            verbs=("deploy",),
            description="/v1/images/generations: the images folder and the largest image side",
        )
    )
