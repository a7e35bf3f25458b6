"""Workloads by name.  Entries are lazy "module:Class" strings (lm-eval's habit):
heavy libraries (transformers, diffusers) load only when their workload is used.

Third-party packages add workloads through the entry-point group ``gpuarena.workloads``
(name = "module:Class", see docs/workloads.md).  They are found lazily, the first time a
name is looked up; a plugin that cannot be loaded, or that is not a valid workload, is
left out with a one-line warning, and a plugin may not take a built-in name.  Nothing a
plugin does while it is imported ends or corrupts a command: sys.exit and KeyboardInterrupt
raised at import leave it out like any other error (the price: a real Ctrl-C during a
plugin's import is taken as that plugin failing), what it prints goes to stderr (so
`list -f json` stays JSON), and its names and texts reach a terminal without escapes.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from importlib.metadata import entry_points

from gpuarena.errors import UserError, did_you_mean
from gpuarena.safeio import printable
from gpuarena.store.checks import WORKLOAD_NAME
from gpuarena.store.figures import Figures

ENTRY_POINT_GROUP = "gpuarena.workloads"

# name -> "module:Class".  Adding a workload: one module plus one line here.
REGISTRY: dict[str, str] = {
    "resnet50-train": "gpuarena.workloads.resnet50:ResNet50Train",
    "ddp-train": "gpuarena.workloads.ddp:DDPTrain",
    "llm-train": "gpuarena.workloads.llm.train:LLMTrain",
    "allreduce": "gpuarena.workloads.collectives:AllReduce",
    "allgather": "gpuarena.workloads.collectives:AllGather",
    "reducescatter": "gpuarena.workloads.collectives:ReduceScatter",
    "broadcast": "gpuarena.workloads.collectives:Broadcast",
    "bert-large-infer": "gpuarena.workloads.bert:BertLargeInfer",
    "bert-large-train": "gpuarena.workloads.bert:BertLargeTrain",
    "sd15-generate": "gpuarena.workloads.sd15:SD15Generate",
    "llm-serve": "gpuarena.workloads.llm.serve:LLMServe",
    "endpoint-serve": "gpuarena.workloads.endpoint.serve:EndpointServe",
    "resnet50-infer": "gpuarena.workloads.resnet50_infer:ResNet50Infer",
    "matmul": "gpuarena.workloads.micro:Matmul",
    "membw": "gpuarena.workloads.micro:MemBandwidth",
    "h2d": "gpuarena.workloads.micro:HostToDevice",
    "d2h": "gpuarena.workloads.micro:DeviceToHost",
}

_plugins: dict[str, str] | None = None   # name -> "module:Class", found on first use
_bad: set[str] = set()                   # plugin names already warned about


def _warn(name: str, why: str) -> None:
    if name not in _bad:
        _bad.add(name)
        print(f"warning: workload plugin {name!r} left out: {why}", file=sys.stderr)


def plugins() -> dict[str, str]:
    """Entry points of the ``gpuarena.workloads`` group that do not shadow a built-in."""
    global _plugins
    if _plugins is None:
        found = {}
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in REGISTRY:
                _warn(ep.name, f"the name belongs to a built-in workload ({ep.value})")
            elif not re.fullmatch(WORKLOAD_NAME, ep.name) or len(ep.name) > 100:
                _warn(ep.name, "a workload name is letters, digits and _ . : + - (a result could not store it)")
            elif ":" not in ep.value:
                _warn(ep.name, f"{ep.value!r} is not 'module:Class'")
            else:
                found.setdefault(ep.name, ep.value)
        _plugins = found
    return _plugins


def _entries() -> dict[str, str]:
    return {**REGISTRY, **plugins()}


def _load(name: str, target: str):
    module, attr = target.split(":", 1)
    return getattr(importlib.import_module(module), attr)


def _check_plugin(name: str, cls) -> str | None:
    """Why a plugin class is not usable, or None."""
    from gpuarena.workloads.base import KINDS, RANK_AGGREGATES, Workload

    if not (isinstance(cls, type) and issubclass(cls, Workload)):
        return "not a gpuarena.workloads.base.Workload subclass"
    if getattr(cls, "name", None) != name:
        return f"its class declares name={getattr(cls, 'name', None)!r}, the entry point {name!r}"
    if getattr(cls, "kind", None) not in KINDS:
        return f"kind={getattr(cls, 'kind', None)!r} is not one of {', '.join(KINDS)}"
    if cls.rank_aggregate not in RANK_AGGREGATES:
        return f"rank_aggregate={cls.rank_aggregate!r} is not one of {', '.join(RANK_AGGREGATES)}"
    return None


def _usable_plugin(name: str):
    """The plugin's class, or None (warned once) when it cannot be loaded or is invalid."""
    try:
        with contextlib.redirect_stdout(sys.stderr):   # stdout is the command's (list -f json)
            cls = _load(name, plugins()[name])
            why = _check_plugin(name, cls) or _check_facts(cls)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - a plugin never ends gpuarena
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        _warn(name, printable(f"{type(exc).__name__}: {first}".rstrip(": ")))
        return None
    if why:
        _warn(name, why)
        return None
    return cls


def _check_facts(cls) -> str | None:
    """Why the class's declared facts are not what `list` and planning read, or None."""
    from gpuarena.workloads.param import Param

    if not isinstance(cls.version, int) or isinstance(cls.version, bool):
        return f"version={cls.version!r} is not an integer"
    for attr in ("description", "item", "source"):
        if not isinstance(getattr(cls, attr), str):
            return f"{attr}={getattr(cls, attr)!r} is not a string"
    if not isinstance(cls.params, tuple) or not all(isinstance(p, Param) for p in cls.params):
        return f"params={cls.params!r:.60} is not a tuple of Param"
    if not isinstance(cls.variants, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                     for k, v in cls.variants.items()):
        return f"variants={cls.variants!r:.60} is not a mapping of names to descriptions"
    changes = cls.version_changes
    if not isinstance(changes, dict) or not all(type(k) is int and callable(f) for k, f in changes.items()):
        return f"version_changes={changes!r:.60} is not a mapping of versions to predicates"
    if not (isinstance(cls.figures, type) and issubclass(cls.figures, Figures)):
        return f"figures={cls.figures!r:.60} is not a model of gpuarena.store.figures.Figures"
    describe(cls)   # what `list` shows must build
    return None


def describe(cls) -> dict:
    """What `gpuarena list` shows of a workload; a plugin's texts without control characters."""
    text = printable
    return {"name": text(cls.name), "version": cls.version, "description": text(cls.description),
            "source": text(cls.source), "item": text(cls.item), "launcher": cls.launcher, "kind": cls.kind,
            "axis": cls.axis, "multi_gpu": cls.multi_gpu, "plugin": cls.name not in REGISTRY,
            "variants": {text(k): text(v) for k, v in cls.variants.items()},
            "exclusive": [sorted(g) for g in cls.exclusive], "alone": sorted(cls.alone),
            "params": [{"name": text(p.name), "type": p.type.__name__, "default": p.default, "tiny": p.tiny,
                        "min": p.min, "max": p.max, "choices": list(p.choices) if p.choices else None,
                        "doc": text(p.doc)} for p in cls.params]}


def names() -> list[str]:
    """Built-in names, then the usable plugins'."""
    return list(REGISTRY) + [n for n in plugins() if _usable_plugin(n) is not None]


def get(name: str):
    """The workload class for a name; UserError with a suggestion if unknown."""
    if name in REGISTRY:
        return _load(name, REGISTRY[name])
    cls = _usable_plugin(name) if name in plugins() else None
    if cls is None:
        known = names()
        raise UserError(f"unknown workload {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}")
    return cls


def find(name: str):
    """The class for a stored result's workload name, or None when this installation lacks it
    (an imported bundle may name a plugin's workload, or one since renamed)."""
    if name in REGISTRY:
        return _load(name, REGISTRY[name])
    return _usable_plugin(name) if name in plugins() else None   # no suggestion built: rows ask per row


def has(name: str | None, **facts) -> bool:
    """Whether the workload of that name declares these class facts (workloads/facts.py), e.g.
    ``has(r.workload, kind="collective")``; False for a name this installation lacks.  How
    analysis and the report pick rows: by what a workload is, never by its name (by its physics: ask the
    physics object, analysis/physics/models.py ``judges``)."""
    cls = find(name) if name else None
    return cls is not None and all(getattr(cls, k) == v for k, v in facts.items())


def named(**facts) -> list[str]:
    """The workloads that declare these class facts, built-ins first (imports every workload module)."""
    return [n for n, cls in classes().items() if all(getattr(cls, k) == v for k, v in facts.items())]


def fact(name: str | None, attr: str, default=None):
    """One class fact of the workload of that name, or ``default`` when this installation lacks it."""
    cls = find(name) if name else None
    return default if cls is None else getattr(cls, attr)


def advised_by(name: str) -> str | None:
    """Where a workload's buying advice lives when it is not the roofline's ranking (``advise``): its
    class's ``advised_by``, or for a micro-benchmark or collective the device ceiling it measures."""
    cls = get(name)
    if cls.advised_by or not cls.device_figure:
        return cls.advised_by
    return (f"its {cls.device_figure.replace('-', ' ')} figure beside the catalog's in `gpuarena results`, "
            "`gpuarena doctor` and the report: it measures a device ceiling, not a job to buy a GPU for")


def is_device_probe(name: str) -> bool:
    """Micro-benchmarks and collectives measure the device, not a job one buys a GPU for;
    multi-GPU wrappers (ddp-train) have their own report section."""
    cls = find(name)
    return cls is not None and (cls.kind in ("micro", "collective") or cls.multi_gpu)


def classes() -> dict[str, type]:
    """Every workload class by name (imports every workload module)."""
    return {n: get(n) for n in names()}


def ddp_models() -> dict[str, type]:
    """The training workloads ddp-train can wrap, by their ddp_name."""
    return {cls.ddp_name: cls for cls in classes().values() if cls.ddp_name}


def published_names() -> dict[str, str]:
    """Published rows' workload names -> the gpuarena workload that does the same work."""
    return {alias: name for name, cls in classes().items() for alias in cls.published_as}
