"""Example programs with real bugs, debugged by the demo, the notebooks and the docs; and a demo Mycel runtime."""
