"""Infrastructure: the SQLite file, its migrations and the repositories. All SQL lives in this package."""
