"""``extra``: the figures a workload adds to its result, read with one model composed from
every built-in workload's own (store/workload_figures.py, each named by its class's
``figures``), the runner's keys (store/figures.py ``Figures``) and what imports and older
versions left (``Imported``).  Every key a reader uses has a type here (a string "abc" where
a time belongs is refused on import and on write, never met by a report section); a key no
model declares -- a plugin's, or one an older gpuarena wrote -- is kept, bounded in size,
and noted (``Result.undeclared``)."""

from __future__ import annotations

from gpuarena.store.figures import Imported, compose
from gpuarena.store.workload_figures import BUILT_IN

Extra = compose("Extra", Imported, *BUILT_IN)
Extra.__doc__ = ("``extra`` as stored: the keys of every built-in workload's figures, the runner's and "
                 "those imports keep, each typed; others kept (store/extra.py)")


def declared(key: str) -> bool:
    """Whether any built-in model declares ``key``."""
    return key in Extra.model_fields
