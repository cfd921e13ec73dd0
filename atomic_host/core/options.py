"""Command-line options of ``atomic`` (parsed in :mod:`atomic_host.frontends.cli`)."""

from __future__ import annotations

from atomic_host.contract.records import field, record


def csv_list(value: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (an argparse ``type`` for comma-separated lists)."""
    return [v.strip() for v in value.split(",") if v.strip()]


@record
class Options:
    mode: str = "rpc"
    prompt: str | None = None
    provider: str | None = None
    model: str | None = None
    thinking: str | None = None
    api_key: str | None = None
    models: list[str] | None = None
    session: str | None = None
    continue_session: bool = False
    no_session: bool = False
    session_dir: str | None = None
    session_store: str | None = None
    name: str | None = None
    extensions: list[str] = field(default_factory=list)
    prompt_templates: list[str] = field(default_factory=list)
    skills: list[str] = field(default_factory=list)
    no_extensions: bool = False
    approve: bool | None = None
    watch: bool = False
    tools: list[str] | None = None
    no_tools: bool = False
    no_builtin_tools: bool = False
    exclude_tools: list[str] = field(default_factory=list)
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    cwd: str | None = None
    extension_flags: dict[str, bool | str] = field(default_factory=dict)
    """``--name [value]`` options the host does not know: extensions declare them (``api.register_flag``)."""

    def missing_extension(self) -> str | None:
        """Why an ``-e`` path cannot load (it does not exist), as the line to print; None when all
        exist. A typo ends the command before anything runs."""
        import os

        for path in self.extensions:
            if not os.path.exists(os.path.expanduser(path)):
                return f"atomic: no such extension file or directory: {path} (-e/--extension)"
        return None
