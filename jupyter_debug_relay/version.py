"""The package's version, in a module of its own so that any layer can name it without importing the facade."""

__version__ = "0.1.0"
