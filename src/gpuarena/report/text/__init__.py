"""The analyses as text, for the command line: one module per analysis, each turning the data an
analysis returns (gpuarena.analysis.*) into a table, Markdown or JSON.  analysis/ computes and
never formats; the words, columns and number formats of each verb's output live here."""
