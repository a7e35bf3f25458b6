"""When two results measured the same thing, and what a workload's definition is.

Two results are comparable when they ran the same workload name at the same explicit
``version`` under the same measurement protocol.  The source hash of a workload
(``fingerprint``) is provenance only: it tells what code ran, and tests/golden keeps it
in step with ``version`` (a changed fingerprint without a version bump fails a test),
so comparability never depends on a hash -- stored bundles from before this scheme,
whose ``code_hash`` was a hash of the whole module, stay comparable.

Importable without torch: analysis uses ``comparable``; workloads/base.py uses
``fingerprint``.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import textwrap
import types

# Bump when the runner changes what a throughput figure means (warm-up rule, timing
# windows, the statistic stored); results of different protocols are not compared.
PROTOCOL_VERSION = 1


def protocol(r: dict) -> int:
    """The protocol a stored result was measured under; results from before the field: 1."""
    return int(r.get("protocol") or (r.get("extra") or {}).get("protocol") or 1)


def why_not_comparable(a: dict, b: dict) -> str | None:
    """None when two results measured the same definition; else the reason, in words.
    Published rows carry no version: they are compared on their stated parameters."""
    if "published" in (a.get("source"), b.get("source")):
        return None
    if a.get("workload") != b.get("workload"):
        return f"different workloads ({a.get('workload')} vs {b.get('workload')})"
    if a.get("workload_version") != b.get("workload_version"):
        return f"workload version differs ({a.get('workload_version')} vs {b.get('workload_version')})"
    if protocol(a) != protocol(b):
        return f"measurement protocol differs ({protocol(a)} vs {protocol(b)})"
    return None


def comparable(a: dict, b: dict) -> bool:
    return why_not_comparable(a, b) is None


# --- fingerprints ---------------------------------------------------------------

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
        return _canonical({f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)})
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


def _ours(obj) -> bool:
    return (getattr(obj, "__module__", "") or "").split(".")[0] in _OWN_PACKAGES


_OWN_PACKAGES: set[str] = {"gpuarena"}


def _collect(fn, parts: dict[str, str], seen: set) -> None:
    """The function's AST, then (transitively) the module-level helpers and constants it names."""
    if id(fn) in seen:
        return
    seen.add(id(fn))
    got = _function_ast(fn)
    if got is None:
        return
    dumped, tree = got
    parts[f"fn:{fn.__module__}.{fn.__qualname__}"] = dumped
    env = getattr(fn, "__globals__", {})
    # module.attr of our own helper modules (par.apply_fsdp), except the registry: its name table
    # would tie every workload's identity to the list of the others
    dotted = {(n.value.id, n.attr) for n in ast.walk(tree)
              if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    for name in sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}):
        value = env.get(name)
        if isinstance(value, types.ModuleType) and _ours_module(value):
            for attr in sorted(a for base, a in dotted if base == name):
                _collect_value(getattr(value, attr, None), parts, seen)
        elif isinstance(value, (int, float, str, tuple, dict, frozenset)) and not isinstance(value, bool) \
                and name.isupper():
            parts[f"const:{fn.__module__}.{name}"] = repr(_canonical(value))
        else:
            _collect_value(value, parts, seen)


def _ours_module(mod) -> bool:
    return mod.__name__.split(".")[0] in _OWN_PACKAGES and mod.__name__ != "gpuarena.workloads.registry"


def _collect_value(value, parts: dict[str, str], seen: set) -> None:
    """A helper function, or every method of a helper class (a KV cache, an optimizer wrapper)."""
    if isinstance(value, types.FunctionType) and _ours(value):
        _collect(value, parts, seen)
    elif isinstance(value, type) and _ours(value) and id(value) not in seen:
        seen.add(id(value))
        for member in vars(value).values():
            member = _unwrap(member)
            if isinstance(member, types.FunctionType):
                _collect(member, parts, seen)


# Class methods that feed analysis alone (no stored figure depends on them): outside a
# workload's identity, so refining the roofline's traffic estimate does not re-key results.
ANALYSIS_ONLY = frozenset({"bytes_per_item"})


def fingerprint(cls, stop: type, wrapped: list[type] = ()) -> str:
    """Hash of a workload class's own definition: the methods it has (inherited ones too,
    down to but excluding ``stop``, the shared base), the helpers they call, its class
    facts, and the fingerprints of the workloads it wraps."""
    _OWN_PACKAGES.add(cls.__module__.split(".")[0])
    parts: dict[str, str] = {}
    seen: set = set()
    for klass in reversed(cls.__mro__):
        if klass is stop or klass is object or not issubclass(klass, stop):
            continue
        for attr, member in sorted(vars(klass).items()):
            if attr in ANALYSIS_ONLY:
                continue
            fn = _unwrap(member)
            if isinstance(fn, types.FunctionType):
                _collect(fn, parts, seen)
            elif not attr.startswith(("__", "_abc")):
                parts[f"attr:{attr}"] = repr(_canonical(member))
    for w in wrapped:
        parts[f"wraps:{w.name}"] = w.fingerprint()
    blob = "\n".join(f"{k}={v}" for k, v in sorted(parts.items()))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
