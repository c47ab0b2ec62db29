"""Examples shipped with the package: a demo Mycel runtime to debug without a real service."""
