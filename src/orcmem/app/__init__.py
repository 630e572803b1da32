"""The wiring: open the service with its embedder, pick who distils, onboard a machine (`orcmem init`)."""
