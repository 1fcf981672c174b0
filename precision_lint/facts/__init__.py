"""Per-file precision facts: index → evaluate → extractors."""
