"""EZ programs over line-delimited JSON on stdio."""
