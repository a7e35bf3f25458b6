"""Workloads by name.  Entries are lazy "module:Class" strings (lm-eval's habit) naming each
workload's torch-free spec (workloads/spec.py ``WorkloadSpec``): what planning, analysis and the
report read.  The spec names its runnable body (``runner``); only the runner and the run verb
load it (``runnable``), so heavy libraries (torch, transformers, diffusers) load only when a
workload runs.

Third-party packages add workloads through the entry-point group ``gpuarena.workloads``
(name = "module:Class", see docs/workloads.md): a ``Workload`` subclass (its own body) or a
``WorkloadSpec`` subclass whose ``runner`` names its body.  They are found lazily, the first time a
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
from gpuarena.store import figures as _figures
from gpuarena.store.figures import Figures

ENTRY_POINT_GROUP = "gpuarena.workloads"

# name -> "module:SpecClass" (torch-free).  Adding a workload: one folder (spec.py, run.py) plus one line here.
REGISTRY: dict[str, str] = {
    "resnet50-train": "gpuarena.workloads.resnet50_train.spec:ResNet50TrainSpec",
    "ddp-train": "gpuarena.workloads.ddp.spec:DDPTrainSpec",
    "llm-train": "gpuarena.workloads.llm.train_spec:LLMTrainSpec",
    "allreduce": "gpuarena.workloads.collectives.spec:AllReduceSpec",
    "allgather": "gpuarena.workloads.collectives.spec:AllGatherSpec",
    "reducescatter": "gpuarena.workloads.collectives.spec:ReduceScatterSpec",
    "broadcast": "gpuarena.workloads.collectives.spec:BroadcastSpec",
    "bert-large-infer": "gpuarena.workloads.bert.spec:BertLargeInferSpec",
    "bert-large-train": "gpuarena.workloads.bert.spec:BertLargeTrainSpec",
    "sd15-generate": "gpuarena.workloads.sd15.spec:SD15GenerateSpec",
    "llm-serve": "gpuarena.workloads.llm.serve_spec:LLMServeSpec",
    "endpoint-serve": "gpuarena.workloads.endpoint.spec:EndpointServeSpec",
    "resnet50-infer": "gpuarena.workloads.resnet50_infer.spec:ResNet50InferSpec",
    "vit-b16-infer": "gpuarena.workloads.vit_b16_infer.spec:ViTB16InferSpec",
    "matmul": "gpuarena.workloads.micro.spec:MatmulSpec",
    "membw": "gpuarena.workloads.micro.spec:MemBandwidthSpec",
    "h2d": "gpuarena.workloads.micro.spec:HostToDeviceSpec",
    "d2h": "gpuarena.workloads.micro.spec:DeviceToHostSpec",
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
    from gpuarena.workloads.base import Workload
    from gpuarena.workloads.spec import KINDS, RANK_AGGREGATES, WorkloadSpec

    if not (isinstance(cls, type) and issubclass(cls, WorkloadSpec)):
        return "not a gpuarena.workloads.base.Workload (nor a gpuarena.workloads.spec.WorkloadSpec) subclass"
    runner = cls.runner
    if not issubclass(cls, Workload) and not (isinstance(runner, str) and re.fullmatch(r"[\w.]+:[\w.]+", runner)):
        return f"runner={cls.runner!r:.60} is not 'module:Class' (a spec names its Workload body)"
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
    """The workload's spec for a name (torch-free for a built-in); UserError with a suggestion if unknown."""
    if name in REGISTRY:
        return _load(name, REGISTRY[name])
    cls = _usable_plugin(name) if name in plugins() else None
    if cls is None:
        known = names()
        raise UserError(f"unknown workload {name!r}{did_you_mean(name, known)}; known: {', '.join(known)}")
    return cls


def find(name: str):
    """The spec for a stored result's workload name, or None when this installation lacks it
    (an imported bundle may name a plugin's workload, or one since renamed)."""
    if name in REGISTRY:
        return _load(name, REGISTRY[name])
    return _usable_plugin(name) if name in plugins() else None   # no suggestion built: rows ask per row


def runnable(name: str):
    """The runnable body (a ``Workload`` subclass with setup/step) of a workload: what the runner and
    the run verb load, and nothing else (it may import torch).  UserError when unknown, or when a
    plugin's spec names a body that cannot be loaded or is not its."""
    spec = get(name)
    if name in REGISTRY:
        return spec.body()
    try:
        with contextlib.redirect_stdout(sys.stderr):   # stdout is the command's
            return spec.body()
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # noqa: BLE001 - a plugin never ends gpuarena
        first = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise UserError(printable(f"workload plugin {name!r}: its runner could not be loaded: "
                                  f"{type(exc).__name__}: {first}".rstrip(": "))) from None


def has(name: str | None, **facts) -> bool:
    """Whether the workload of that name declares these class facts (workloads/facts.py), e.g.
    ``has(r.workload, kind="collective")``; False for a name this installation lacks.  How
    analysis and the report pick rows: by what a workload is, never by its name (by its physics: ask the
    physics object, analysis/physics/models.py ``judges``)."""
    cls = find(name) if name else None
    return cls is not None and all(getattr(cls, k) == v for k, v in facts.items())


def named(**facts) -> list[str]:
    """The workloads that declare these class facts, built-ins first (imports every spec module)."""
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
    """Every workload's spec by name (imports every spec module, no body)."""
    return {n: get(n) for n in names()}


def ddp_models() -> dict[str, type]:
    """The training workloads ddp-train can wrap (their specs), by their ddp_name."""
    return {cls.ddp_name: cls for cls in classes().values() if cls.ddp_name}


def published_names() -> dict[str, str]:
    """Published rows' workload names -> the gpuarena workload that does the same work."""
    return {alias: name for name, cls in classes().items() for alias in cls.published_as}


_declared_built_ins = False


def figures_model(name: str, params: dict | None = None) -> type[Figures] | None:
    """The figures model a stored result of this workload is read with (its spec's ``figures_for``
    its params: ddp-train adds the wrapped workload's), or None when this installation lacks the
    workload.  The store asks through ``store.figures.read_with`` (installed below), as it imports no
    workload; the first call imports every built-in spec (torch-free), so each figure a built-in
    declares reads None on a result that lacks it."""
    global _declared_built_ins
    if not _declared_built_ins:
        _declared_built_ins = True
        for n in REGISTRY:
            get(n)
    cls = find(name)
    if cls is None:
        return None
    try:
        return cls.figures_for(params or {})
    except Exception:  # noqa: BLE001 - params a stored row may lack (ddp-train's model): the class's own
        return cls.figures


_figures.read_with(figures_model)
