"""Llama-style decoder workloads: llm-train and llm-serve share model.py."""
