"""The run order under pytest-xdist (tests/order.py): every test once, the smoke run's readers at the head
of the first share, each share opening with its part of the long tests, the tests of one listed prefix
kept together, and the long work spread so no worker's share holds much more than another's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.order import LONG, SMOKE, arrange


@dataclass(frozen=True)
class Item:            # what arrange reads of a pytest item: its node id
    nodeid: str
    smoke: bool = False


def collected() -> list[Item]:
    items = [Item(f"tests/x/test_short.py::test_{i}") for i in range(300)]
    items += [Item(f"tests/test_spine.py::test_reads_smoke_{i}", smoke=True) for i in range(5)]
    for prefix in LONG:
        if prefix.endswith("::"):      # a module of several tests: two of them
            items += [Item(prefix + "test_a"), Item(prefix + "test_b")]
        else:
            items.append(Item(prefix))
    return sorted(items, key=lambda it: it.nodeid)     # pytest's order is not arrange's


def shares(order: list[Item], workers: int) -> list[list[Item]]:
    """What worksteal hands each worker: contiguous slices, len // workers each, the rest to the last."""
    size, out = len(order) // workers, []
    for i in range(workers):
        out.append(order[i * size:] if i == workers - 1 else order[i * size:(i + 1) * size])
    return out


def long_work(share: list[Item]) -> float:
    groups = {p for it in share for p in LONG if it.nodeid.startswith(p)}
    return sum(LONG[p] for p in groups) + (SMOKE if any(it.smoke for it in share) else 0)


def test_two_workers_get_every_test_once_and_balanced_long_work():
    items = collected()
    order = arrange(items, lambda it: it.smoke, 2)
    assert sorted(order, key=lambda it: it.nodeid) == items and len(set(order)) == len(items)
    first, second = shares(order, 2)
    assert [it.smoke for it in first[:5]] == [True] * 5 and not any(it.smoke for it in second)
    for share in (first, second):      # each share opens with its long tests, then only short ones
        kinds = [any(it.nodeid.startswith(p) for p in LONG) for it in share if not it.smoke]
        assert kinds == sorted(kinds, reverse=True) and kinds[0]
    # a module listed as a prefix stays in one share (its module fixture is set up once)
    for prefix in (p for p in LONG if p.endswith("::")):
        owners = {i for i, share in enumerate((first, second)) for it in share if it.nodeid.startswith(prefix)}
        assert len(owners) == 1, prefix
    total = sum(LONG.values()) + SMOKE
    a, b = long_work(first), long_work(second)
    assert a + b == pytest.approx(total) and abs(a - b) <= max(LONG.values())


def test_one_worker_runs_smoke_readers_then_long_then_short():
    items = collected()
    order = arrange(items, lambda it: it.smoke, 1)
    assert sorted(order, key=lambda it: it.nodeid) == items
    assert all(it.smoke for it in order[:5])
    longest = max(LONG, key=LONG.get)
    assert order[5].nodeid.startswith(longest)
    assert order[-1].nodeid.startswith("tests/x/test_short.py::")
