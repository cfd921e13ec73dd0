"""The RPC command handlers: ``on_<type>`` answers the command declared in
``core/protocol/declarations.py`` (which gives its lane and fields); its parameters say what it
takes (nothing, or the command validated against its protocol model: ``frontends/rpc/table.py``).
A handler returns the response ``data`` (or ``NO_DATA``); raising gives ``success:false``.
Navigation between sessions is the engine's (``engine/navigation.py``), so every frontend fires the
same session hooks."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from atomic_host.engine.retry import model_ref
from atomic_host.frontends.rpc import sources
from atomic_host.frontends.rpc.server import NO_DATA, NO_RESPONSE, CommandFailed
from atomic_host.frontends.rpc.table import Cmd, CommandTable
from atomic_host.plugins.faults import fault_report

if TYPE_CHECKING:
    from atomic_host.core.protocol.declarations import (
        AbortBash,
        Bash,
        Compact,
        CycleModel,
        DeleteSession,
        ExportHtml,
        ExtensionUiResponse,
        FollowUp,
        Fork,
        GetCommandCompletions,
        GetEntries,
        GetWorkflowRunSummary,
        ImportSession,
        InvokeShortcut,
        ListWorkflowRuns,
        NavigateTree,
        NewSession,
        Prompt,
        RefreshModels,
        SetAutoCompaction,
        SetAutoRetry,
        SetFollowUpMode,
        SetLabel,
        SetModel,
        SetSessionName,
        SetSteeringMode,
        SetThinkingLevel,
        StartPendingRecovery,
        Steer,
        SwitchSession,
        UserBash,
    )
    from atomic_host.engine.agent_session import AgentSession
    from atomic_host.runtime import Runtime


class Handlers:
    """The command handlers, bound to one runtime."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    @property
    def agent(self) -> AgentSession:
        return self.rt.require_session()

    def table(self) -> CommandTable:
        """Every declared command of this object: ``type`` → handler, and the lanes."""
        return CommandTable(self)

    # --- prompting and queues ---

    async def on_prompt(self, cmd: Prompt, sent: Cmd) -> Any:
        # images as sent: they are stored and echoed verbatim
        disposition = await self.agent.prompt(cmd.message, sent.get("images"), cmd.streaming_behavior)
        return {"disposition": disposition}

    async def on_steer(self, cmd: Steer, sent: Cmd) -> Any:
        return {"disposition": await self.agent.queue_message("steer", cmd.message, sent.get("images"))}

    async def on_follow_up(self, cmd: FollowUp, sent: Cmd) -> Any:
        return {"disposition": await self.agent.queue_message("followUp", cmd.message, sent.get("images"))}

    async def on_abort(self) -> Any:
        self.rt.ui.cancel_all()  # open dialogs resolve with their default (semantics §1)
        await self.agent.abort()
        return NO_DATA

    async def on_abort_retry(self) -> Any:
        self.agent.abort_retry()
        return NO_DATA

    async def on_clear_queue(self) -> Any:
        return self.agent.queues.clear()

    async def on_pause_queued_messages(self) -> Any:
        self.agent.queues.paused = True
        return NO_DATA

    async def on_resume_queued_messages(self) -> Any:
        return {"released": self.agent.queues.resume()}

    async def on_set_steering_mode(self, cmd: SetSteeringMode) -> Any:
        self.agent.queues.steering_mode = cmd.mode
        self.rt.settings.save_global("steeringMode", cmd.mode)
        return NO_DATA

    async def on_set_follow_up_mode(self, cmd: SetFollowUpMode) -> Any:
        self.agent.queues.follow_up_mode = cmd.mode
        self.rt.settings.save_global("followUpMode", cmd.mode)
        return NO_DATA

    async def on_set_auto_retry(self, cmd: SetAutoRetry) -> Any:
        self.agent.active.auto_retry = bool(cmd.enabled)
        self.rt.settings.save_global("retry.enabled", self.agent.active.auto_retry)
        return NO_DATA

    async def on_compact(self, _cmd: Compact) -> Any:
        runner = self.agent.runner
        return await runner.compactor.manual(runner)

    async def on_abort_compaction(self) -> Any:
        self.agent.runner.abort_compaction()
        return NO_DATA

    async def on_set_auto_compaction(self, cmd: SetAutoCompaction) -> Any:
        self.agent.active.auto_compaction = bool(cmd.enabled)
        self.rt.settings.save_global("compaction.enabled", self.agent.active.auto_compaction)
        return NO_DATA

    # --- state ---

    async def on_get_state(self) -> Any:
        a = self.agent
        data: dict[str, Any] = {
            "model": a.model,
            "thinkingLevel": a.thinking_level,
            "isStreaming": a.is_streaming,
            "isCompacting": a.is_compacting,
            "steeringMode": a.queues.steering_mode,
            "followUpMode": a.queues.follow_up_mode,
            "sessionId": a.session.id,
            "autoCompactionEnabled": a.active.auto_compaction,
            "messageCount": a.message_count,
            "pendingMessageCount": len(a.queues.steering) + len(a.queues.follow_up),
            "queuedMessagesPaused": a.queues.paused,
            "resourceOverlaps": sources.overlaps(self.rt),
        }
        if a.compaction_reason:
            data["compactionReason"] = a.compaction_reason
        if a.session.location:
            data["sessionLocation"] = a.session.location
        if a.session.name:
            data["sessionName"] = a.session.name
        if a.model_fallback_message:
            data["modelFallbackMessage"] = a.model_fallback_message
            data["modelFallbackReason"] = "default_model_unavailable"
        fallback_from = a.runner.retry.fallback_from
        if fallback_from is not None:  # a fallback model answers until the next prompt
            data["fallbackActive"] = True
            data["userModel"] = model_ref(fallback_from[0])
        return data

    async def on_get_messages(self) -> Any:
        return {"messages": self.agent.messages}

    async def on_get_last_assistant_text(self) -> Any:
        from atomic_host.kit.messages import message_text

        for m in reversed(self.agent.messages):
            if m.get("role") != "assistant":
                continue
            if m.get("stopReason") == "aborted" and not m.get("content"):
                continue
            text = message_text(m).strip()
            return {"text": text or None}
        return {"text": None}

    async def on_get_session_stats(self) -> Any:
        from atomic_host.session.stats import session_stats

        return session_stats(self.agent)

    async def on_get_tools(self) -> Any:
        from atomic_host.plugins.selection import report

        return report(self.rt)

    async def on_get_commands(self) -> Any:
        rt = self.rt

        def source_info(c: Any) -> dict[str, Any]:
            return {"sourceInfo": sources.source_info(rt, c.plugin, c.path, c.location)}

        return {"commands": rt.commands.listing(source_info)}

    async def on_reload(self) -> Any:
        await self.rt.reload()
        return NO_DATA

    async def on_get_shortcuts(self) -> Any:
        return {"shortcuts": self.rt.shortcuts.listing()}

    async def on_invoke_shortcut(self, cmd: InvokeShortcut) -> Any:
        from atomic_host.engine.prompting import run_handler

        shortcut = self.rt.shortcuts.get(cmd.key)
        if shortcut is None:
            raise CommandFailed(f"Shortcut not found: {cmd.key}")
        failed = await run_handler(
            self.rt, shortcut.handler, (self.rt.api,), shortcut.plugin, f"shortcut:{shortcut.key}", "shortcut"
        )
        if failed is not None:  # upstream answers the handler's exception as the command's error
            raise CommandFailed(failed)
        return NO_DATA

    async def on_get_command_completions(self, cmd: GetCommandCompletions) -> Any:
        from atomic_host.contract.tools import resolve

        command = self.rt.commands.get(cmd.command_name.lstrip("/"))
        if command is None or command.completions is None:
            return {"completions": None}
        try:
            return {"completions": resolve(command.completions)(cmd.argument_prefix)}
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # sys.exit() in plugin code is the plugin's error (faults.py)
            roots = self.rt.plugins.roots(self.rt.plugins.records.get(command.plugin))
            self.rt.extension_error(command.path or command.plugin, "get_command_completions", fault_report(exc, roots))
            return {"completions": None}

    # --- models and thinking ---

    def _models_data(self) -> dict[str, Any]:
        reg = self.rt.models
        return {
            "models": reg.available(),
            "scopedModels": [{"model": m} for m in self.agent.scoped_models()],
            "oauthProviders": reg.oauth_providers(),
            "customAuthProviders": reg.custom_auth_providers(),
            "providerAuthStatuses": reg.provider_auth_statuses(),
        }

    async def on_get_available_models(self) -> Any:
        return self._models_data()

    async def on_refresh_models(self, cmd: RefreshModels) -> Any:
        from atomic_host.core.models.catalogs import refresh

        outcome = await refresh(
            self.rt.models,
            timeout_ms=cmd.timeout_ms,
            force=bool(cmd.force),
            allow_network=cmd.allow_network is not False,
        )
        return {**self._models_data(), **outcome}

    async def on_set_model(self, cmd: SetModel) -> Any:
        return self.agent.set_model(cmd.provider, cmd.model_id, persist=bool(cmd.persist))

    async def on_cycle_model(self, cmd: CycleModel) -> Any:
        return self.agent.cycle_model(cmd.direction, bool(cmd.persist))

    async def on_logout_provider(self, cmd: Cmd) -> Any:
        data = await self._logins().logout(cmd)
        return {
            **data,
            "models": self.rt.models.available(),
            "scopedModels": [{"model": m} for m in self.agent.scoped_models()],
        }

    # --- provider login: frontends/rpc/login.py ---

    def _logins(self) -> Any:
        if "_provider_logins" not in self.__dict__:
            from atomic_host.frontends.rpc.login import ProviderLogins

            self._provider_logins = ProviderLogins(self.rt, self._models_data)
        return self._provider_logins

    # A login lasts as long as the user takes in the browser and touches no session state: on the
    # ordinary lane it would hold every command sent meanwhile (upstream Atomic moved it too).
    async def on_login_provider(self, cmd: Cmd) -> Any:
        return await self._logins().login(cmd)

    async def on_cancel_login_provider(self, cmd: Cmd) -> Any:
        self._logins().cancel(cmd)
        return NO_DATA

    async def on_save_provider_credential(self, cmd: Cmd) -> Any:
        return self._logins().save(cmd)

    async def on_set_thinking_level(self, cmd: SetThinkingLevel) -> Any:
        return self.agent.set_thinking_level(cmd.level, persist=bool(cmd.persist))

    async def on_cycle_thinking_level(self) -> Any:
        return self.agent.cycle_thinking_level()

    async def on_get_available_thinking_levels(self) -> Any:
        from atomic_host.core.models.thinking import supported_levels

        model = self.agent.model
        return {"levels": supported_levels(model) if model else ["off"]}

    # --- direct bash ---

    async def on_bash(self, _cmd: Bash, sent: Cmd) -> Any:
        from atomic_host.frontends.rpc.bash import run_bash_command

        return await run_bash_command(self.rt, sent)

    async def on_user_bash(self, _cmd: UserBash, sent: Cmd) -> Any:
        from atomic_host.frontends.rpc.bash import run_bash_command

        return await run_bash_command(self.rt, sent)

    async def on_abort_bash(self, cmd: AbortBash) -> Any:
        from atomic_host.frontends.rpc.bash import abort_bash

        abort_bash(self.rt, cmd.request_id)
        return NO_DATA

    # --- extension UI ---

    async def on_extension_ui_response(self, _cmd: ExtensionUiResponse, sent: Cmd) -> Any:
        self.rt.ui.resolve(sent)  # unknown or late ids are dropped silently (semantics §1)
        return NO_RESPONSE

    # --- sessions (navigation is the engine's: engine/navigation.py) ---
    # engine.navigation (with branch summaries) is imported by the first navigation command, or
    # before it by the warm-up thread (frontends/rpc/main.py): the first get_state does not need it.

    async def on_new_session(self, cmd: NewSession) -> Any:
        from atomic_host.engine import navigation

        started = await navigation.new_session(self.rt, parent_session=cmd.parent_session)
        return {"cancelled": not started}

    async def on_switch_session(self, cmd: SwitchSession) -> Any:
        from atomic_host.engine import navigation

        session = await navigation.open_session(
            self.rt, session_id=cmd.session_id, path=cmd.session_path, directory=cmd.session_directory
        )
        switched = await navigation.switch_session(self.rt, session, cwd=cmd.cwd_override)
        return {"cancelled": not switched}

    async def on_import_session(self, cmd: ImportSession) -> Any:
        from atomic_host.engine import navigation

        imported = await navigation.import_session(self.rt, cmd.input_path, cwd=cmd.cwd_override)
        return {"cancelled": not imported}

    async def on_delete_session(self, cmd: DeleteSession) -> Any:
        target = cmd.session_id or cmd.id
        if not target or not isinstance(target, str):
            raise CommandFailed("delete_session requires sessionId")
        if target == self.agent.session.id:
            raise CommandFailed(f"Cannot delete the session that is currently open: {target}")
        try:
            await asyncio.to_thread(self.rt.store.delete, target)
        except ValueError as exc:
            raise CommandFailed(str(exc)) from None
        return NO_DATA

    async def on_list_sessions(self) -> Any:
        return {"sessions": await asyncio.to_thread(self.rt.store.list, self.rt.cwd)}

    async def on_fork(self, cmd: Fork) -> Any:
        from atomic_host.engine import navigation

        forked = await navigation.fork(self.rt, cmd.entry_id)
        return {"text": forked.text, "cancelled": forked.cancelled}

    async def on_clone(self) -> Any:
        from atomic_host.engine import navigation

        return {"cancelled": not await navigation.clone(self.rt)}

    async def on_get_fork_messages(self) -> Any:
        from atomic_host.kit.sessions.tree import ForkMessages

        # the view's own list, not copies: it is only encoded (a session view, kept up to date)
        return {"messages": self.agent.session.view(ForkMessages).items}

    async def on_get_entries(self, cmd: GetEntries) -> Any:
        session = self.agent.session
        since = cmd.since
        if since is None:
            from atomic_host.session.tree import encoded_entries, entries_json, entries_lag

            # each entry encoded once per session: a read costs what was appended since the last;
            # a long session's first read encodes in a thread (40,000 entries take ~0.1 s)
            if entries_lag(session) > 2000:
                await asyncio.to_thread(encoded_entries, session, list(session.entries))
            return {"entries": entries_json(session), "leafId": session.leaf_id}
        try:
            entries = session.entries_since(since)  # O(page): encoded as is
        except KeyError:
            raise CommandFailed(f"Entry not found: {since}") from None
        return {"entries": entries, "leafId": session.leaf_id}

    async def on_get_tree(self) -> Any:
        from atomic_host.session.tree import cached_tree, tree_json_snapshot

        session = self.agent.session
        leaf_id, tree = session.leaf_id, cached_tree(session)
        if tree is None:  # built in a thread: the first one of a 20,000-turn session takes a while
            tree = await asyncio.to_thread(tree_json_snapshot(session))
        return {"tree": tree, "leafId": leaf_id}

    async def on_set_session_name(self, cmd: SetSessionName) -> Any:
        self.agent.set_session_name(cmd.name)
        return NO_DATA

    async def on_set_label(self, cmd: SetLabel) -> Any:
        self.agent.set_label(cmd.entry_id, cmd.label)
        return NO_DATA

    async def on_navigate_tree(self, cmd: NavigateTree) -> Any:
        from atomic_host.engine import navigation

        options = cmd.options
        move = await navigation.navigate_tree(
            self.rt,
            cmd.target_id,
            summarize=bool(options and options.summarize),
            custom_instructions=options.custom_instructions if options else None,
            replace_instructions=bool(options and options.replace_instructions),
            label=options.label if options else None,
        )
        return move.wire()

    async def on_get_session_summary(self) -> Any:
        return {"summary": self.agent.session.summary()}

    async def on_start_pending_recovery(self, cmd: StartPendingRecovery) -> Any:
        return await self.agent.recovery.recover(cmd.reason)

    async def on_export_html(self, cmd: ExportHtml) -> Any:
        from atomic_host.session.export import export_session

        session = self.agent.session
        if session.writer is None:
            raise CommandFailed("Cannot export in-memory session to HTML")
        if not session.persisted:  # written lazily, with the first assistant reply: nothing said yet
            raise CommandFailed("Nothing to export yet - start a conversation first")
        exporter = self.rt.exporter("html")
        # rendering and writing a long session takes a while: off the loop, so abort still answers at once
        return {"path": await asyncio.to_thread(export_session, exporter, session, cmd.output_path, self.rt.cwd)}

    # --- workflows (the engine is the service the built-in workflows plugin offers) ---

    async def on_list_workflow_runs(self, cmd: ListWorkflowRuns) -> Any:
        engine = self.rt.services.get("workflows")
        if engine is None:
            return {"runs": []}
        return {"runs": await engine.list_runs(cmd.status)}

    async def on_get_workflow_run_summary(self, cmd: GetWorkflowRunSummary) -> Any:
        run_id = str(cmd.run_id)
        if len(run_id) != 36:
            raise CommandFailed(f'Run id must be a full 36-character UUID; got "{run_id}" ({len(run_id)} chars).')
        engine = self.rt.services.get("workflows")
        detail = await engine.run_detail(run_id) if engine is not None else None
        if detail is None:
            raise CommandFailed(f"Run not found: {run_id}")
        return detail
