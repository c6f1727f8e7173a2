"""The `graphrag` command line: it starts the API and the workers, so it sits above them."""
