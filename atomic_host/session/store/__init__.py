"""Session store backends: jsonl (default), sqlite, memory."""
