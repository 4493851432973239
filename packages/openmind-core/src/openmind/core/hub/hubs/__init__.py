"""Hub implementations (each imports its client lazily, when used)."""
