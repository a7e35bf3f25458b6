"""How cases run: one child process per case (runner/executor.py starts it,
runner/child.py is what runs inside), timeouts, torchrun for N ranks."""
