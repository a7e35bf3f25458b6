"""gpuarena: how fast a GPU really is on PyTorch work, and which one to choose.

The data flow is the folder order: spec -> runner -> workloads -> measure ->
store -> analysis -> report.  ``cli`` only parses, calls and prints.
"""

__version__ = "0.1.0"

# Bumped whenever the shape of a stored result changes (see store/schema.py).
RESULT_SCHEMA_VERSION = 1
