"""Hubs: pull / push / rm / cache across Modelers, Hugging Face, ModelScope and local folders."""
