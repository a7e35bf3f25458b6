"""Stable Diffusion v1.5 generation (sd15-generate): spec.py holds its facts, run.py its body, arch.py the
component configurations and FLOP counts."""
