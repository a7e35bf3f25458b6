"""ResNet-50 inference as deployed (resnet50-infer): spec.py holds its facts, run.py its body; convfuse.py
and deploy.py are the deployment paths it alone uses."""
