#!/usr/bin/env bash
# Modules under src/ over a line count (default 400), longest first: a review signal, not a rule
# (tests/test_lint.py warns about the same modules; functions over 60 lines fail that test).
# Run from the repository root:  scripts/size_report.sh [LINES]
set -euo pipefail
LIMIT=${1:-400}
find src -name '*.py' -print0 | xargs -0 wc -l | grep -v ' total$' | sort -rn |
    awk -v limit="$LIMIT" '$1 > limit { printf "%6d  %s\n", $1, $2; n++ }
        END { if (!n) print "no module under src/ is over " limit " lines"; else print n " module(s) over " limit " lines" }'
