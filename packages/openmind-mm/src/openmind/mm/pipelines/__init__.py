"""Framework-neutral pipeline wrappers of openmind-mm's tasks (vision, audio, diffusion)."""
