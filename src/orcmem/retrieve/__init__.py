"""Domain: building the word query, fusing ranked lists and scoring results."""
