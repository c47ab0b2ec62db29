"""Python targets through debugpy: launch and attach, the boot run inside the target, pydevd's extras."""
