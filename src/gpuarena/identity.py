"""When two results measured the same thing, and what a workload's definition is.

Two results are comparable when they ran the same workload name at the same explicit
``version`` under the same measurement protocol.  The source hash of a workload
(``fingerprint``) is provenance only: it tells what code ran, and tests/golden keeps it
in step with ``version`` (the golden holds the fingerprint of every version a workload has
had: a changed fingerprint at an unchanged version fails a test, and so does a version bump
whose fingerprint was not recorded), so comparability never depends on a hash -- stored bundles from before this scheme,
whose ``code_hash`` was a hash of the whole module, stay comparable.

Importable without torch: analysis uses ``comparable``; workloads/spec.py uses
``fingerprint``.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import textwrap
import types
from typing import Any, Optional, Protocol

# Bump when the runner changes what a throughput figure means (warm-up rule, timing
# windows, the statistic stored); results of different protocols are not compared.
PROTOCOL_VERSION = 1


class Stored(Protocol):
    """What comparability reads of a stored result (store/result.py's ``Result``; this module sits
    below the store, so it names the attributes rather than importing the type)."""

    source: str
    workload: str
    workload_version: Optional[int]
    extra: Any


def protocol(r: Stored) -> int:
    """The protocol a stored result was measured under; results from before the field: 1."""
    return r.extra.protocol or 1


def why_not_comparable(a: Stored, b: Stored) -> str | None:
    """None when two results measured the same definition; else the reason, in words.
    Published rows carry no version: they are compared on their stated parameters."""
    if "published" in (a.source, b.source):
        return None
    if a.workload != b.workload:
        return f"different workloads ({a.workload} vs {b.workload})"
    if a.workload_version != b.workload_version:
        return f"workload version differs ({a.workload_version} vs {b.workload_version})"
    if protocol(a) != protocol(b):
        return f"measurement protocol differs ({protocol(a)} vs {protocol(b)})"
    return None


def comparable(a: Stored, b: Stored) -> bool:
    return why_not_comparable(a, b) is None


# --- fingerprints ---------------------------------------------------------------
#
# What a fingerprint covers: the code and class facts that shape a stored figure.
# What it leaves out, so that editing them never asks for a golden regeneration:
# * prose: docstrings, comments (not in the AST), the ``description`` and ``source`` class
#   texts, each Param's ``doc``, the descriptions of the variants (their names stay);
# * ``version``: the golden file keys fingerprints by it (tests/golden/fingerprints.json);
# * ANALYSIS_ONLY methods (below);
# * SCHEMA_ONLY: the typed model of the figures a workload stores (``figures``), which checks
#   them after they were measured.
# Inherited behaviour: methods from a workload's spec and its own intermediate bases are covered (the
# MRO walk down to the shared ``Workload`` and ``WorkloadSpec``).  Of those shared bases, the methods in TIMED_PATH --
# those the runner calls, or whose result it stores, while measuring -- are covered for each
# workload that inherits them or reaches them through ``super()``; a change there changes the
# fingerprint of exactly the workloads whose figures it changes.  So do the methods of the
# dataclasses a class fact holds (Param.parse, which coerces a given value).  The other base methods
# (fingerprint, param_map, canonical_variant, executed/peak precision, param_count) name or
# analyse a result but do not shape the measurement, and stay out.

PROSE_ATTRS = frozenset({"description", "source"})
PROSE_FIELDS = frozenset({"doc"})             # Param.doc: dataclass fields left out of a hash
DESCRIBED = frozenset({"variants"})           # {name: description}: the names count, in order

# Class methods and facts that feed analysis alone (no stored figure depends on them): outside a
# workload's identity, so refining the roofline's traffic estimate, or a fact of workloads/facts.py
# (which model judges it, its published family...), does not re-key results.
ANALYSIS_ONLY = frozenset({"bytes_per_item", "physics", "device_figure", "published_family", "family_settings",
                           "finite_fix", "report_order", "published_params", "label", "published_csv",
                           "published_csv_path", "version_changes", "changed_since"})  # workloads/facts.py

# The typed model of what a workload stores (workloads/facts.py figures): it checks the figures
# after they were measured, so declaring one re-keys no result.
SCHEMA_ONLY = frozenset({"figures", "figures_for", "runner"})   # runner: where the body is, not what it does

# Methods of the shared base class that shape the timed path (runner/measure_case.py, rank.py).
TIMED_PATH = frozenset({"resolve_params", "parse_variant", "items_per_step", "flops_per_item", "flops",
                        "precision", "check", "extra", "uses_compile", "unit_name", "finalize"})

_SKIPPED_ATTRS = PROSE_ATTRS | ANALYSIS_ONLY | SCHEMA_ONLY | {"version"}


def _canonical(obj):
    """A hash-stable rendering: sets sorted (string hashing is randomised per process)."""
    if isinstance(obj, (set, frozenset)):
        return sorted(map(_canonical, obj), key=repr)
    if isinstance(obj, dict):
        return [[_canonical(k), _canonical(v)] for k, v in obj.items()]
    if isinstance(obj, (list, tuple)):
        return [_canonical(x) for x in obj]
    if isinstance(obj, type):
        return f"{obj.__module__}.{obj.__qualname__}"
    if dataclasses.is_dataclass(obj):
        return _canonical({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
                           if f.name not in PROSE_FIELDS})
    return repr(obj)


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return tree


def _function_ast(fn) -> tuple[str, ast.AST] | None:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    tree = _strip_docstrings(ast.parse(src))
    return ast.dump(tree, annotate_fields=False, include_attributes=False), tree


def _unwrap(member):
    if isinstance(member, (classmethod, staticmethod)):
        return member.__func__
    if isinstance(member, property):
        return member.fget
    return member


class _Walk:
    """One fingerprint's collection: the parts found so far and the packages counted as ours
    (gpuarena and the workload's own package, so a plugin's helpers are covered too)."""

    def __init__(self, own: set[str]):
        self.parts: dict[str, str] = {}
        self.seen: set = set()
        self.own = own

    def ours(self, obj) -> bool:
        return (getattr(obj, "__module__", "") or "").split(".")[0] in self.own

    def ours_module(self, mod) -> bool:
        # module.attr of our own helper modules (par.apply_fsdp), except the registry: its name
        # table would tie every workload's identity to the list of the others
        return mod.__name__.split(".")[0] in self.own and mod.__name__ != "gpuarena.workloads.registry"

    def function(self, fn) -> None:
        """The function's AST, then (transitively) the module-level helpers and constants it names."""
        if id(fn) in self.seen:
            return
        self.seen.add(id(fn))
        got = _function_ast(fn)
        if got is None:
            return
        dumped, tree = got
        self.parts[f"fn:{fn.__module__}.{fn.__qualname__}"] = dumped
        env = getattr(fn, "__globals__", {})
        dotted = {(n.value.id, n.attr) for n in ast.walk(tree)
                  if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        for name in sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}):
            value = env.get(name)
            if isinstance(value, types.ModuleType) and self.ours_module(value):
                for attr in sorted(a for base, a in dotted if base == name):
                    self.value(getattr(value, attr, None))
            elif isinstance(value, (int, float, str, tuple, dict, frozenset)) and not isinstance(value, bool) \
                    and name.isupper():
                self.parts[f"const:{fn.__module__}.{name}"] = repr(_canonical(value))
            else:
                self.value(value)

    def instances(self, value) -> None:
        """The methods of our dataclass instances among a class fact (Param.parse turns a
        given value into the one that runs)."""
        for x in value if isinstance(value, (tuple, list)) else (value,):
            if dataclasses.is_dataclass(x) and not isinstance(x, type):
                self.value(type(x))

    def value(self, value) -> None:
        """A helper function, or every method of a helper class (a KV cache, an optimizer wrapper)."""
        if isinstance(value, types.FunctionType) and self.ours(value):
            self.function(value)
        elif isinstance(value, type) and self.ours(value) and id(value) not in self.seen:
            self.seen.add(id(value))
            for member in vars(value).values():
                member = _unwrap(member)
                if isinstance(member, types.FunctionType):
                    self.function(member)


def _calls_super(fn, attr: str) -> bool:
    """Whether a method reaches its base's ``attr`` through ``super().attr``."""
    got = _function_ast(fn)
    return got is not None and any(
        isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Name) and n.value.func.id == "super" for n in ast.walk(got[1]))


def _base_methods_used(cls, stops: tuple[type, ...]) -> list:
    """The TIMED_PATH methods of the shared bases ``stops`` that ``cls`` inherits or calls through ``super()``."""
    used = []
    for stop in stops:
        for attr in sorted(TIMED_PATH):
            if attr not in vars(stop):
                continue
            owners = [k for k in cls.__mro__ if attr in vars(k)]
            overrides = [_unwrap(vars(k)[attr]) for k in owners[:owners.index(stop)]]
            if not overrides or any(_calls_super(fn, attr) for fn in overrides):
                used.append(_unwrap(vars(stop)[attr]))
    return used


def fingerprint(cls, stop: type | tuple[type, ...], wrapped: list[type] = ()) -> str:
    """Hash of a workload class's definition: the methods it has (inherited ones too, from its
    spec and its own intermediate bases, down to ``stop``, the shared bases -- ``Workload`` and
    ``WorkloadSpec`` -- of which the TIMED_PATH methods it uses), the helpers they call, its class
    facts without their prose, and the fingerprints of the workloads it wraps.  ``cls`` is the
    runnable body, so both the spec's facts and the body's setup/step are covered."""
    stops = stop if isinstance(stop, tuple) else (stop,)
    walk = _Walk({"gpuarena", cls.__module__.split(".")[0]})
    for klass in reversed(cls.__mro__):
        if klass in stops or klass is object or not issubclass(klass, stops):
            continue
        for attr, member in sorted(vars(klass).items()):
            if attr in _SKIPPED_ATTRS:
                continue
            fn = _unwrap(member)
            if isinstance(fn, types.FunctionType):
                walk.function(fn)
            elif not attr.startswith(("__", "_abc")):
                walk.parts[f"attr:{attr}"] = repr(_canonical(list(member) if attr in DESCRIBED else member))
                walk.instances(member)
    for fn in _base_methods_used(cls, stops):
        walk.function(fn)
    for w in wrapped:
        walk.parts[f"wraps:{w.name}"] = w.fingerprint()
    blob = "\n".join(f"{k}={v}" for k, v in sorted(walk.parts.items()))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
