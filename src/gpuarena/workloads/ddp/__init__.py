"""DistributedDataParallel training (ddp-train): spec.py holds its facts, run.py its body."""
