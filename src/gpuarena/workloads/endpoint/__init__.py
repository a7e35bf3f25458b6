"""endpoint-serve: a load generator for OpenAI-compatible servers (serve.py), its HTTP client
(client.py), arrivals and prompts (load.py), figures (metrics.py) and a tiny server (tiny_server.py)."""
