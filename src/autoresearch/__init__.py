"""autoresearch: evaluator-driven experiment loops over a git repository."""

__version__ = "0.1.0"
