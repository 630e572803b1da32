"""`python -m orcmem` runs the command line."""

from orcmem.entry import main

main()
