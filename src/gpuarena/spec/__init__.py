"""What to run: suite files, the case grid, validation."""
