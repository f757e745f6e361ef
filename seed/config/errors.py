"""The error every config check raises."""


class ConfigError(ValueError):
    """A configuration that cannot work; the message is one line."""
