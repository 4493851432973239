"""Compatibility with other tools' interfaces: openMind 1.0 and LLaMA-Factory.

* :mod:`.llamafactory`, :mod:`.openmind1`: the two built-in configuration dialects (see
  :mod:`openmind.core.dialects`);
* :mod:`.reference_keys`: every key of the reference tools' argument classes (generated);
* :mod:`.errors`: the OM-C codes.

Importing this package imports no framework.
"""
