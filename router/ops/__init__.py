"""The operator's commands: ``offload`` and its subcommands (serve, init, demo, ...)."""
