"""OpenAI-compatible serving (`openmind deploy`)."""
