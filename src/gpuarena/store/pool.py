"""The stored results a reader took once, with their environments, asked the way the Store is asked.

The report reads the results table once (`Pool.read`) and hands the pool to its sections; a section,
and every analysis it calls, asks `pool.results(workload=..., status=...)` and
`pool.environment(env_id)` exactly as it would ask the Store, so a section is a function of rows
and never holds the database (no SQL behind its back, one answer for the whole report)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from gpuarena.store.result import Result


def select(rows: Iterable[Result], run_ids: Iterable[str] | None = None, workload: str | None = None,
           source: str | None = None, status: str | None = None) -> list[Result]:
    """The rows that match every filter given, in their order (Store.results' filters)."""
    run_ids = set(run_ids or [])
    return [r for r in rows
            if (not run_ids or r.run_id in run_ids) and (workload is None or r.workload == workload)
            and (source is None or r.source == source) and (status is None or r.status == status)]


class Pool:
    """Typed rows (frozen Results) and the fingerprints of their environments, read once."""

    def __init__(self, rows: Iterable[Result], environments: dict[int, dict | None] | None = None):
        self.rows = tuple(rows)
        self.environments = dict(environments or {})

    @classmethod
    def read(cls, store) -> "Pool":
        """Every stored result, and each of their environments, from the Store."""
        rows = store.results()
        ids = sorted({r.env_id for r in rows if r.env_id is not None})
        return cls(rows, {env_id: store.environment(env_id) for env_id in ids})

    def results(self, run_ids: Iterable[str] | None = None, workload: str | None = None,
                source: str | None = None, status: str | None = None) -> list[Result]:
        return select(self.rows, run_ids, workload, source, status)

    def environment(self, env_id: int) -> dict | None:
        return self.environments.get(env_id)
