"""Collectives (allreduce, allgather, reducescatter, broadcast): spec.py holds their facts, run.py their bodies."""
