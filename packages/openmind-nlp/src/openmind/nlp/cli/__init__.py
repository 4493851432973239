"""CLI verbs of openmind-nlp: ``openmind run`` and ``openmind chat``."""
