"""ResNet-50 training (resnet50-train): spec.py holds its facts, run.py its body."""
