"""The `orcmem` command line, click commands by section."""
