"""Model catalog, registry (auth.json, models.json, API keys), thinking levels and model refs.

Submodules are imported on use; this package imports nothing heavy.
"""
