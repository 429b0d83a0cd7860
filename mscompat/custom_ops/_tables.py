"""One attribute per registered op: its ``{backend: function}`` table (filled by the registry).

``dispatch`` reads a single op's table from here with ``getattr``, so that under ``ms.jit``
MindSpore only ever sees (and parses) the implementations of the op being called.
"""
