"""CLI command groups; each module adds its commands to the app through `register(app)`."""
