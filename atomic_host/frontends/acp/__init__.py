"""``atomic --mode acp``: the Agent Client Protocol frontend (editors such as Zed). Imports the
``agent-client-protocol`` SDK, so nothing outside ACP mode may import this package's modules."""
