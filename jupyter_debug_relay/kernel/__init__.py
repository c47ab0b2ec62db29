"""The kernel front end: the magics, their result objects and the comm channel."""
