"""offload-router: an OpenAI-compatible proxy between agents, a local vLLM box and the cloud."""

__version__ = "0.1.0"
