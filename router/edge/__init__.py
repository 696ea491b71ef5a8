"""The HTTP edge: client keys, reading a body, per-key limits, the served protocol, metrics, OpenAPI."""
