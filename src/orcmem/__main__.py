"""`python -m orcmem` runs the command line."""

from orcmem.cli import main

main()
