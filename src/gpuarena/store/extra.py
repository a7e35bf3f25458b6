"""``extra``: the figures a workload adds to its result, read with its own workload's model
(store/figures.py ``model_for``: the workload's ``figures``, handed in by the workloads registry,
with the runner's keys and what imports and older versions left, ``Imported``).  Every key a
reader uses has a type there (a string "abc" where a time belongs is refused on import and on
write, never met by a report section); a key its model does not declare -- one an older gpuarena
wrote, or a plugin's not installed here -- is kept, bounded in size, and noted
(``Result.undeclared``)."""

from __future__ import annotations

from gpuarena.store.figures import Imported

# The type of ``Result.extra``: every model a result is read with extends it (model_for).
Extra = Imported
