"""What is read off stored results, row by row: the shared helpers over typed results, the derived
figures (share of peak, MFU, scaling efficiency), the precision a recipe executed at, the power a card
sustains.  The lowest floor of analysis/: it imports neither physics/ nor verbs/."""
