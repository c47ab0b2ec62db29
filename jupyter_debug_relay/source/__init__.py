"""Reading source: a line of a file or text, a Python file's executable lines and conditions, a CEL condition."""
