"""Vision-language chat models (Qwen2-VL / Qwen2.5-VL / Qwen3-VL, LLaVA 1.5 / LLaVA-NeXT, ...).

* :mod:`openmind.mm.vl.groups`: the model groups, matched from ``config.json``;
* :mod:`openmind.mm.vl.messages`: content parts / ``<image>`` placeholders -> canonical messages + images;
* :mod:`openmind.mm.vl.inputs`: :func:`~openmind.mm.vl.inputs.build_vl_inputs`, messages + images ->
  the processor's inputs (the one function the pipeline, the server, the CLI, the web UI and the
  multimodal SFT preparation share);
* :mod:`openmind.mm.vl.chat`: the ``mm-chat`` wrapper (``pipeline("chat", model=VL_DIR)`` too).

Framework neutral: the PyTorch backend is ``openmind.pt.pipelines.vl_chat``.
"""
