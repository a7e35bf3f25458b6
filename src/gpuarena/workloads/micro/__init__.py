"""Micro-benchmarks (matmul, membw, h2d, d2h): spec.py holds their facts, run.py their bodies."""
