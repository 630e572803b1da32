"""The background worker: its run loop, whether one runs, and handing vectors to it."""
