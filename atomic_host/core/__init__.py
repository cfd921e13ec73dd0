"""Core (layer 1): host-only libraries — the wire protocol's pydantic models (``protocol``), the model
registry (``models``), settings, command-line options, paths and the JSON encoder. Plugins do not
import these; they see the host through :mod:`atomic_host.contract`."""
