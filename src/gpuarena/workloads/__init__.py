"""The work itself: one module per workload, registered by name in registry.py."""
