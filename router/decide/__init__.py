"""Deciding where a request goes: the team's rules, then the intent classifier, as one ``Decision``."""
