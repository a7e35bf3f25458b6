"""Hostile workload plugins: a package with a ``gpuarena.workloads`` entry point written
onto a path entry (what `pip install` leaves behind), for the CLI tests of this folder."""

from __future__ import annotations

import os
import textwrap

from tests.procs import ROOT

HEADER = textwrap.dedent('''
    import time

    from gpuarena.workloads.base import Param, Workload


    class Base(Workload):
        version = 1
        description = "a hostile plugin"
        item = "element"
        kind = "micro"
        params = (Param("n", int, 1000, "elements", tiny=1000, min=1, max=1 << 30),
                  Param("label", str, "x", "a free text, stored with the result"))

        def setup(self):
            self.calls = 0

        def step(self):
            self.calls += 1

        def items_per_step(self):
            return float(self.p["n"])
''')


def install(site, body: str, entries: dict[str, str], package: str = "hostile_plugin") -> dict:
    """Write package (HEADER + body) and its entry points {name: "Class"}; the env that sees it."""
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").write_text(HEADER + textwrap.dedent(body))
    info = site / f"{package}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package.replace('_', '-')}\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target if ':' in target else package + ':' + target}\n"
                    for name, target in entries.items())
    (info / "entry_points.txt").write_text("[gpuarena.workloads]\n" + lines)
    return {"PYTHONPATH": os.pathsep.join([os.path.join(ROOT, "src"), str(site)])}
