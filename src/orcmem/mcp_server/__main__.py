"""`python -m orcmem.mcp_server`: the same as `orcmem mcp`."""

import sys

from orcmem.mcp_server.root import main

sys.exit(main())
