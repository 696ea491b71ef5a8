"""The simulated upstream (vLLM, OpenAI, Anthropic) for tests, benchmarks and ``offload demo``.

Never imported by the proxy's request path: only by the demo command, the tests and the benches.
"""
