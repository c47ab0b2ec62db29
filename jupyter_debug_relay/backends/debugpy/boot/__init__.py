"""What a debugged target's boot changes inside pydevd and debugpy: one module per feature, each declared in
``table.py`` and switched on by ``changes.py`` only where every name it needs is there.

The target loads these files by path (``_nodelay_boot.beside``), not as this package: each uses the standard
library and the ``boot`` module it is given, nothing of the relay's.
"""
