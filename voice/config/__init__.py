"""Configuration: :class:`~voice.config.config.Config`, its sections, its checks, and the TOML reader.
The base of the package: imports nothing else of ``voice``."""
