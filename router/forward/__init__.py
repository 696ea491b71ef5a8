"""Forwarding: the backend pool, capacity, the state replicas share, and the one forwarding path."""
