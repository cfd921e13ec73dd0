"""Frontends (layer 6): translate between a client and the engine — the JSONL RPC server (``rpc``),
print/json one-shot mode (``oneshot``), the command line (``cli``) and its subcommands."""
