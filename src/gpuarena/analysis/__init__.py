"""From numbers to decisions: compare, cost, claim checks, the interconnect
model and advice.  Each module returns plain rows (lists of dicts) and has a
``render`` that prints them as table, md or json (see tables.py)."""
