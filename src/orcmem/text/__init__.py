"""Text rules: secret redaction and its formats, text safe to show, when two texts say the same, counts in words."""
