"""The command types the spec names, listed by hand (shared by the protocol tests)."""

RPC_DOCUMENT_COMMANDS = [
    "prompt", "steer", "follow_up", "abort", "clear_queue", "new_session", "delete_session", "get_state",
    "get_messages", "set_model", "cycle_model", "get_available_models", "logout_provider",
    "set_thinking_level", "cycle_thinking_level", "get_available_thinking_levels", "set_steering_mode",
    "set_follow_up_mode", "compact", "set_auto_compaction", "set_auto_retry", "abort_retry", "bash",
    "abort_bash", "get_session_stats", "get_tools", "export_html", "switch_session",
    "start_pending_recovery", "fork", "clone", "get_fork_messages", "get_entries", "get_tree",
    "get_last_assistant_text", "set_session_name", "get_commands", "get_session_summary", "list_sessions",
    "list_workflow_runs", "get_workflow_run_summary",
]  # fmt: skip
SEMANTICS_COMMANDS = [
    "user_bash", "abort_compaction", "pause_queued_messages", "resume_queued_messages", "navigate_tree",
    "set_label", "import_session", "refresh_models", "login_provider", "cancel_login_provider",
    "save_provider_credential", "get_command_completions", "extension_ui_response",
]  # fmt: skip
ALL_COMMANDS = RPC_DOCUMENT_COMMANDS + SEMANTICS_COMMANDS
