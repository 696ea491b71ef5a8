"""Idle shadow runs: cloud-routed requests replayed on spare local capacity, and whether the answers agree."""
