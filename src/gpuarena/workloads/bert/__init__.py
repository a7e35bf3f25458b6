"""BERT-Large inference and training (bert-large-infer, bert-large-train): spec.py holds their facts,
run.py their bodies."""
