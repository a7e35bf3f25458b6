"""Loading suites: built-in ones by name (spec/suites/*.yaml) or a user's YAML file.

Files are read with a SafeLoader (no tags that construct objects) that refuses
aliases and deep nesting (safeio.load_yaml), capped in size; any problem is
one UserError line naming the file.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuarena.errors import UserError, brief, pydantic_error_line
from gpuarena.safeio import load_yaml, read_text
from gpuarena.spec.model import METHOD_KEYS, Entry, Method, Suite

MAX_SUITE_BYTES = 1_000_000


def builtin_names() -> list[str]:
    folder = resources.files("gpuarena.spec") / "suites"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def _builtin_text(name: str) -> str:
    return (resources.files("gpuarena.spec") / "suites" / f"{name}.yaml").read_text()


def parse_suite(text: str, origin: str) -> Suite:
    if len(text.encode()) > MAX_SUITE_BYTES:
        raise UserError(f"{origin}: suite file is larger than {MAX_SUITE_BYTES} bytes")
    data = load_yaml(text, origin)  # no aliases (an alias bomb), bounded nesting
    if not isinstance(data, dict):
        raise UserError(f"{origin}: a suite file is a mapping with 'name' and 'entries'")
    try:
        return Suite(**data)
    except ValidationError as exc:
        raise UserError(f"{origin}: {pydantic_error_line(exc)}") from None
    except TypeError as exc:
        raise UserError(f"{origin}: {exc}") from None


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a YAML file by path."""
    if name_or_path in builtin_names():
        return parse_suite(_builtin_text(name_or_path), f"suite {name_or_path}")
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml", ".json") or _exists(path):
        return parse_suite(read_text(name_or_path, f"suite file {name_or_path}", MAX_SUITE_BYTES), name_or_path)
    from gpuarena.errors import did_you_mean

    raise UserError(f"unknown suite {name_or_path!r}{did_you_mean(name_or_path, builtin_names())}; "
                    f"built-in: {', '.join(builtin_names())}, or a path to a .yaml file")


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name too long to be a file: treat it as a path, read_text says why
        return True


def adhoc_suite(workloads: list[str], variants: list[str], gpus: list[int] | None = None) -> Suite:
    """The suite `gpuarena run -w W [--variant V]` describes: each workload with each variant."""
    entries = [Entry(workload=w, variants=variants or ["seed"], gpus=gpus or [1]) for w in workloads]
    return Suite(name="adhoc", entries=entries)


def set_pairs(items: list[str]) -> list[tuple[str, str]]:
    """The one --set parser: each KEY=VALUE as (key, value), key stripped; UserError for an item
    without "=" or with an empty key.  What a key may be is the caller's to say."""
    out = []
    for item in items:
        k, sep, v = item.partition("=")
        if not sep:
            raise UserError(f"--set: expected KEY=VALUE, not {brief(item)}")
        if not k.strip():
            raise UserError(f"--set: an empty key in {brief(item)}")
        out.append((k.strip(), v))
    return out


def parse_sets(items: list[str]) -> tuple[dict[str, Any], Method]:
    """--set KEY=VALUE pairs, split into workload parameters and method settings.

    Values stay strings here; the workload's Param coerces and range-checks them.
    A comma-separated value (`--set batch_size=64,128`) is a sweep: one case per value.
    """
    params: dict[str, Any] = {}
    method: dict[str, Any] = {}
    for k, v in set_pairs(items):
        if k in METHOD_KEYS:
            method[k] = v
        elif "," in v:
            values = [x.strip() for x in v.split(",")]
            if not all(values):
                i = values.index("")
                raise UserError(f"--set {k}: an empty value in the list (value {i + 1:,} of {len(values):,}: "
                                f"{brief(v)})")
            params[k] = values
        else:
            params[k] = v
    try:
        m = Method(**method)
    except ValidationError as exc:
        raise UserError(f"--set {pydantic_error_line(exc)}") from None
    return params, m
