"""Test support shipped with openmind-nlp: real offline assets and the shared conformance suite.

Used by the test suites of every backend (openmind-pt, openmind-ms) and by benchmarks; it needs
``transformers``/``tokenizers`` (not a framework) when called.
"""
