"""ViT-B/16 inference (vit-b16-infer): spec.py holds its facts, run.py its body."""
