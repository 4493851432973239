"""Prompt templates (framework neutral). See :mod:`openmind.nlp.templates.base` for the contract."""

from openmind.nlp.templates.base import IGNORE_INDEX, Encoded, JinjaTemplate, Template

__all__ = ["IGNORE_INDEX", "Encoded", "JinjaTemplate", "Template"]
