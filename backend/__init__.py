"""Shaomai Lab backend: validation, serialization, sessions and concurrency around models/."""

__version__ = "0.1.0"
