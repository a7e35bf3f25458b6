"""Entry point of the child process that runs one case.

    python -m gpuarena.runner.child CASE.json RESULT.json

The parent reads RESULT.json; if the child dies before writing it (a signal, a
driver error), the parent stores the case as ``crashed`` with the stderr tail.
"""

from __future__ import annotations

import json
import os
import sys

from gpuarena.runner.measure_case import measure
from gpuarena.spec.model import Case


def write_atomic(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, default=str)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    case_path, result_path = argv[1], argv[2]
    with open(case_path) as f:
        case = Case(**json.load(f))
    result = measure(case)
    write_atomic(result_path, result)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
