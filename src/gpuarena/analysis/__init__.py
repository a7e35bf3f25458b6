"""From numbers to decisions: compare, cost, claim checks, the interconnect
model and advice.  Each module is a function of stored rows returning data
(typed rows, dicts of figures); none formats or prints: report/text/ turns
that data into a table, Markdown or JSON for the CLI."""
