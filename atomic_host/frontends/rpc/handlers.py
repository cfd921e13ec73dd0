"""One handler per RPC command. Each takes the raw command dict (already validated against its
protocol model) and returns the response ``data`` (or ``NO_DATA``); raising gives ``success:false``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_host.contract.events import EVENT_TYPES
from atomic_host.contract.results import Cancel
from atomic_host.frontends.rpc.server import NO_DATA, NO_RESPONSE, CommandFailed

if TYPE_CHECKING:
    from atomic_host.engine.agent_session import AgentSession
    from atomic_host.runtime import Runtime
    from atomic_host.session.tree import Session

Cmd = dict[str, Any]


class Handlers:
    """Binds the command table to one runtime."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    @property
    def agent(self) -> AgentSession:
        return self.rt.require_session()

    def table(self) -> dict[str, Callable[[Cmd], Awaitable[Any]]]:
        table = {name[3:]: getattr(self, name) for name in dir(self) if name.startswith("on_")}
        for name in NOT_BUILT:
            table.setdefault(name, self._not_built(name))
        return table

    @staticmethod
    def _not_built(name: str) -> Callable[[Cmd], Awaitable[Any]]:
        async def handler(_cmd: Cmd) -> Any:
            raise CommandFailed(f"{name} is not available in atomic-host yet")

        return handler

    # --- prompting and queues ---

    async def on_prompt(self, cmd: Cmd) -> Any:
        disposition = await self.agent.prompt(cmd["message"], cmd.get("images"), cmd.get("streamingBehavior"))
        return {"disposition": disposition}

    async def on_steer(self, cmd: Cmd) -> Any:
        return {"disposition": await self.agent.queue_message("steer", cmd["message"], cmd.get("images"))}

    async def on_follow_up(self, cmd: Cmd) -> Any:
        return {"disposition": await self.agent.queue_message("followUp", cmd["message"], cmd.get("images"))}

    async def on_abort(self, _cmd: Cmd) -> Any:
        await self.agent.abort()
        return NO_DATA

    async def on_abort_retry(self, _cmd: Cmd) -> Any:
        self.agent.abort_retry()
        return NO_DATA

    async def on_clear_queue(self, _cmd: Cmd) -> Any:
        return self.agent.clear_queue()

    async def on_pause_queued_messages(self, _cmd: Cmd) -> Any:
        self.agent.paused = True
        return NO_DATA

    async def on_resume_queued_messages(self, _cmd: Cmd) -> Any:
        return {"released": self.agent.resume_queue()}

    async def on_set_steering_mode(self, cmd: Cmd) -> Any:
        self.agent.steering_mode = cmd["mode"]
        self.rt.settings.save_global("steeringMode", cmd["mode"])
        return NO_DATA

    async def on_set_follow_up_mode(self, cmd: Cmd) -> Any:
        self.agent.follow_up_mode = cmd["mode"]
        self.rt.settings.save_global("followUpMode", cmd["mode"])
        return NO_DATA

    async def on_set_auto_retry(self, cmd: Cmd) -> Any:
        self.agent.auto_retry = bool(cmd["enabled"])
        self.rt.settings.save_global("retry.enabled", self.agent.auto_retry)
        return NO_DATA

    async def on_compact(self, _cmd: Cmd) -> Any:
        from atomic_host.engine.compaction import manual_compact

        return await manual_compact(self.agent)

    async def on_abort_compaction(self, _cmd: Cmd) -> Any:
        from atomic_host.engine.compaction import abort_compaction

        abort_compaction(self.agent)
        return NO_DATA

    async def on_set_auto_compaction(self, cmd: Cmd) -> Any:
        self.agent.auto_compaction = bool(cmd["enabled"])
        self.rt.settings.save_global("compaction.enabled", self.agent.auto_compaction)
        return NO_DATA

    # --- state ---

    async def on_get_state(self, _cmd: Cmd) -> Any:
        a = self.agent
        data: dict[str, Any] = {
            "model": a.model,
            "thinkingLevel": a.thinking_level,
            "isStreaming": a.is_streaming,
            "isCompacting": a.compaction_job is not None and not a.compaction_job.task.done(),
            "steeringMode": a.steering_mode,
            "followUpMode": a.follow_up_mode,
            "sessionId": a.session.id,
            "autoCompactionEnabled": a.auto_compaction,
            "messageCount": len(a.messages),
            "pendingMessageCount": len(a.steering) + len(a.follow_up),
            "queuedMessagesPaused": a.paused,
        }
        if a.session.location:
            data["sessionLocation"] = a.session.location
        if a.session.name:
            data["sessionName"] = a.session.name
        if a.model_fallback_message:
            data["modelFallbackMessage"] = a.model_fallback_message
            data["modelFallbackReason"] = "default_model_unavailable"
        if a.fallback_from is not None:  # a fallback model answers until the next prompt
            data["fallbackActive"] = True
            data["userModel"] = {"provider": a.fallback_from[0].get("provider"), "id": a.fallback_from[0].get("id")}
        return data

    async def on_get_messages(self, _cmd: Cmd) -> Any:
        return {"messages": self.agent.messages}

    async def on_get_last_assistant_text(self, _cmd: Cmd) -> Any:
        from atomic_host.session.tree import message_text

        for m in reversed(self.agent.messages):
            if m.get("role") != "assistant":
                continue
            if m.get("stopReason") == "aborted" and not m.get("content"):
                continue
            text = message_text(m).strip()
            return {"text": text or None}
        return {"text": None}

    async def on_get_session_stats(self, _cmd: Cmd) -> Any:
        from atomic_host.session.stats import session_stats

        return session_stats(self.agent)

    async def on_get_tools(self, _cmd: Cmd) -> Any:
        from atomic_host.plugins.selection import report

        return report(self.rt)

    async def on_get_commands(self, _cmd: Cmd) -> Any:
        order = {"extension": 0, "prompt": 1, "skill": 2}
        commands = []
        for c in sorted(self.rt.commands.all(), key=lambda c: order.get(c.source, 3)):
            item: dict[str, Any] = {"name": c.name, "source": c.source}
            if c.description:
                item["description"] = c.description
            if c.location and c.source != "extension":
                item["location"] = c.location
            if c.path:
                item["path"] = c.path
            commands.append(item)
        return {"commands": commands}

    async def on_get_command_completions(self, cmd: Cmd) -> Any:
        from atomic_host.contract.tools import resolve

        command = self.rt.commands.get(str(cmd["commandName"]).lstrip("/"))
        if command is None or command.completions is None:
            return {"completions": None}
        try:
            return {"completions": resolve(command.completions)(cmd.get("argumentPrefix", ""))}
        except Exception as exc:
            self.rt.extension_error(command.path or command.plugin, "get_command_completions", str(exc))
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

    async def on_get_available_models(self, _cmd: Cmd) -> Any:
        return self._models_data()

    async def on_refresh_models(self, _cmd: Cmd) -> Any:
        self.rt.models.reload()
        return self._models_data()

    async def on_set_model(self, cmd: Cmd) -> Any:
        return self.agent.set_model(cmd["provider"], cmd["modelId"], persist=bool(cmd.get("persist")))

    async def on_cycle_model(self, cmd: Cmd) -> Any:
        return self.agent.cycle_model(cmd.get("direction"), bool(cmd.get("persist")))

    async def on_logout_provider(self, cmd: Cmd) -> Any:
        reg = self.rt.models
        reg.logout(cmd["provider"])
        reg.reload()
        return {
            "provider": cmd["provider"],
            "authStatus": reg.auth_status(cmd["provider"]),
            "models": reg.available(),
            "scopedModels": [{"model": m} for m in self.agent.scoped_models()],
        }

    async def on_login_provider(self, cmd: Cmd) -> Any:
        key = cmd.get("apiKey")
        if not key:
            raise CommandFailed("login_provider needs apiKey (interactive OAuth is not available over RPC)")
        self.rt.models.login(cmd["provider"], key)
        self.rt.models.reload()
        return {"provider": cmd["provider"], "authStatus": self.rt.models.auth_status(cmd["provider"])}

    async def on_set_thinking_level(self, cmd: Cmd) -> Any:
        return self.agent.set_thinking_level(cmd["level"], persist=bool(cmd.get("persist")))

    async def on_cycle_thinking_level(self, _cmd: Cmd) -> Any:
        return self.agent.cycle_thinking_level()

    async def on_get_available_thinking_levels(self, _cmd: Cmd) -> Any:
        from atomic_host.core.models.thinking import supported_levels

        model = self.agent.model
        return {"levels": supported_levels(model) if model else ["off"]}

    # --- direct bash ---

    async def on_bash(self, cmd: Cmd) -> Any:
        from atomic_host.frontends.rpc.bash import run_bash_command

        return await run_bash_command(self.rt, cmd)

    async def on_user_bash(self, cmd: Cmd) -> Any:
        return await self.on_bash(cmd)

    async def on_abort_bash(self, cmd: Cmd) -> Any:
        from atomic_host.frontends.rpc.bash import abort_bash

        abort_bash(self.rt, cmd.get("requestId"))
        return NO_DATA

    # --- extension UI ---

    async def on_extension_ui_response(self, cmd: Cmd) -> Any:
        self.rt.ui.resolve(cmd)  # unknown or late ids are dropped silently (semantics §1)
        return NO_RESPONSE

    # --- sessions ---

    async def _before(self, hook: str, **data: Any) -> bool:
        """True when a plugin cancelled (first cancel wins)."""
        event = EVENT_TYPES[hook](**data)
        for _plugin, result in await self.rt.plugins.acall_each(hook, event=event, api=self.rt.api):
            if isinstance(result, Cancel) or (isinstance(result, dict) and result.get("cancel")):
                return True
        return False

    async def _activate(self, session: Session, reason: str, *, fresh: bool, cwd: str | None = None) -> None:
        """Make ``session`` the active one: the old one shuts down, model/thinking carry over or restore."""
        from atomic_host.engine.agent_session import AgentSession

        old = self.rt.session
        previous = old.session.location if old else None
        if old is not None:
            await old.close(reason)
        agent = AgentSession(self.rt, session)
        if cwd:
            agent.cwd = cwd
        if old is not None:
            agent.model, agent.thinking_level = old.model, old.thinking_level
            agent.steering_mode, agent.follow_up_mode = old.steering_mode, old.follow_up_mode
            agent.auto_retry, agent.auto_compaction = old.auto_retry, old.auto_compaction
        agent.rebuild_context(restore_model=not fresh)
        if fresh:
            agent.record_initial_settings()
        self.rt.session = agent
        await agent.fire_session_start(reason, previous)

    async def on_new_session(self, cmd: Cmd) -> Any:
        if await self._before("session_before_switch", reason="new"):
            return {"cancelled": True}
        session = self.rt.store.new_session(self.agent.cwd, parent_session=cmd.get("parentSession"))
        await self._activate(session, "new", fresh=True)
        return {"cancelled": False}

    async def _open(self, cmd: Cmd) -> Session:
        """Find and load the session a switch names, in a thread: a long session file takes tens of
        milliseconds to read and parse, and the loop keeps answering abort meanwhile."""
        from atomic_host.kit.sessions.errors import SessionNotFound

        store = self.rt.store
        try:
            if cmd.get("sessionId"):
                return await asyncio.to_thread(store.open, cmd["sessionId"], cmd.get("sessionDirectory"))
            if cmd.get("sessionPath"):
                return await asyncio.to_thread(store.open_path, cmd["sessionPath"])
        except SessionNotFound as exc:
            raise CommandFailed(str(exc) or f"Session not found: {cmd.get('sessionId')}") from None
        except (ValueError, OSError) as exc:  # not a session id (path parts, "..", NUL), not a session file
            raise CommandFailed(str(exc)) from None
        raise CommandFailed("switch_session requires sessionId")

    async def on_switch_session(self, cmd: Cmd) -> Any:
        session = await self._open(cmd)
        if await self._before("session_before_switch", reason="resume", target_session_file=session.location):
            return {"cancelled": True}
        await self._activate(session, "resume", fresh=False, cwd=cmd.get("cwdOverride"))
        return {"cancelled": False}

    async def on_import_session(self, cmd: Cmd) -> Any:
        path = Path(cmd["inputPath"]).expanduser()
        if not path.is_file():
            raise CommandFailed(f"File not found: {path}")
        if await self._before("session_before_switch", reason="resume", target_session_file=str(path)):
            return {"cancelled": True}
        session = await asyncio.to_thread(self.rt.store.import_file, path, cmd.get("cwdOverride"))
        await self._activate(session, "resume", fresh=False, cwd=cmd.get("cwdOverride"))
        return {"cancelled": False}

    async def on_delete_session(self, cmd: Cmd) -> Any:
        target = cmd.get("sessionId") or cmd.get("id")
        if not target or not isinstance(target, str):
            raise CommandFailed("delete_session requires sessionId")
        if target == self.agent.session.id:
            raise CommandFailed(f"Cannot delete the session that is currently open: {target}")
        try:
            await asyncio.to_thread(self.rt.store.delete, target)
        except ValueError as exc:
            raise CommandFailed(str(exc)) from None
        return NO_DATA

    async def on_list_sessions(self, _cmd: Cmd) -> Any:
        return {"sessions": await asyncio.to_thread(self.rt.store.list, self.rt.cwd)}

    async def on_fork(self, cmd: Cmd) -> Any:
        entry_id = cmd["entryId"]
        session = self.agent.session
        entry = session.get_entry(entry_id)
        message = (entry or {}).get("message") or {}
        if not entry or entry.get("type") != "message" or message.get("role") != "user":
            raise CommandFailed("Invalid entry ID for forking")
        from atomic_host.session.tree import message_text

        text = message_text(message)
        if await self._before("session_before_fork", entry_id=entry_id, position="before"):
            return {"text": text, "cancelled": True}
        forked = self.rt.store.fork(session, entry_id)
        await self._activate(forked, "fork", fresh=False)
        return {"text": text, "cancelled": False}

    async def on_clone(self, _cmd: Cmd) -> Any:
        session = self.agent.session
        if session.leaf_id is None:
            raise CommandFailed("Cannot clone session: no current entry selected")
        if await self._before("session_before_fork", entry_id=session.leaf_id, position="at"):
            return {"cancelled": True}
        cloned = self.rt.store.clone(session)
        await self._activate(cloned, "fork", fresh=False)
        return {"cancelled": False}

    async def on_get_fork_messages(self, _cmd: Cmd) -> Any:
        return {"messages": self.agent.session.fork_messages()}

    async def on_get_entries(self, cmd: Cmd) -> Any:
        session = self.agent.session
        since = cmd.get("since")
        if since is None:
            entries = list(session.entries)
        else:
            try:
                entries = session.entries_since(since)
            except KeyError:
                raise CommandFailed(f"Entry not found: {since}") from None
        return {"entries": entries, "leafId": session.leaf_id}

    async def on_get_tree(self, _cmd: Cmd) -> Any:
        from atomic_host.session.tree import tree_json_snapshot

        session = self.agent.session
        leaf_id, encode = session.leaf_id, tree_json_snapshot(session)
        return {"tree": await asyncio.to_thread(encode), "leafId": leaf_id}  # ~1 s at 20,000 turns

    async def on_set_session_name(self, cmd: Cmd) -> Any:
        self.agent.set_session_name(cmd["name"])
        return NO_DATA

    async def on_set_label(self, cmd: Cmd) -> Any:
        self.agent.set_label(cmd["entryId"], cmd.get("label"))
        return NO_DATA

    async def on_navigate_tree(self, cmd: Cmd) -> Any:
        from atomic_host.engine import summaries
        from atomic_host.engine.branch_summary import abandoned_path, summarize_entries
        from atomic_host.session.tree import message_text

        agent = self.agent
        if agent.is_streaming:
            raise CommandFailed("Cannot navigate the tree while the agent is streaming")
        summaries.cancel(agent)
        target = cmd["targetId"]
        entry = agent.session.get_entry(target)
        if entry is None:
            raise CommandFailed(f"Entry {target} not found")
        options = cmd.get("options") or {}
        message = entry.get("message") or {}
        kind = entry.get("type")
        editor_text = None
        new_leaf = target
        if (kind == "message" and message.get("role") == "user") or kind == "custom_message":
            # Re-editing a prompt: the leaf moves to its parent and the client gets the text back.
            content = entry.get("content")
            editor_text = message_text(message) if kind == "message" else (content if isinstance(content, str) else "")
            new_leaf = entry.get("parentId")
        summary = None
        if options.get("summarize"):
            abandoned = abandoned_path(agent, agent.session.leaf_id, new_leaf)
            try:
                summary = await summarize_entries(
                    agent, abandoned, options.get("customInstructions"), bool(options.get("replaceInstructions"))
                )
            except RuntimeError as exc:
                raise CommandFailed(str(exc)) from None
        agent.session.set_leaf(new_leaf)
        data: dict[str, Any] = {"cancelled": False}
        if summary and summary[0]:
            fields: dict[str, Any] = {"fromId": new_leaf or "root", "summary": summary[0]}
            if summary[1]:
                fields["usage"] = summary[1]
            data["summaryEntry"] = agent.session.append("branch_summary", **fields)
        if options.get("label"):
            agent.set_label(target, options["label"])
        agent.rebuild_context(restore_model=False)
        if editor_text is not None:
            data["editorText"] = editor_text
        return data

    async def on_get_session_summary(self, _cmd: Cmd) -> Any:
        return {"summary": self.agent.session.summary()}

    async def on_start_pending_recovery(self, cmd: Cmd) -> Any:
        from atomic_host.engine.recovery import recover

        return await recover(self.agent, cmd.get("reason"))

    async def on_export_html(self, cmd: Cmd) -> Any:
        from atomic_host.session.export import export_session

        session = self.agent.session
        if session.writer is None:
            raise CommandFailed("Cannot export in-memory session to HTML")
        if not session.entries:
            raise CommandFailed("Nothing to export yet - start a conversation first")
        return {"path": export_session(self.rt.exporter("html"), session, cmd.get("outputPath"), self.rt.cwd)}

    # --- workflows (the engine is the service the built-in workflows plugin offers) ---

    async def on_list_workflow_runs(self, cmd: Cmd) -> Any:
        engine = self.rt.services.get("workflows")
        if engine is None:
            return {"runs": []}
        return {"runs": await engine.list_runs(cmd.get("status"))}

    async def on_get_workflow_run_summary(self, cmd: Cmd) -> Any:
        run_id = str(cmd["runId"])
        if len(run_id) != 36:
            raise CommandFailed(f'Run id must be a full 36-character UUID; got "{run_id}" ({len(run_id)} chars).')
        engine = self.rt.services.get("workflows")
        detail = await engine.run_detail(run_id) if engine is not None else None
        if detail is None:
            raise CommandFailed(f"Run not found: {run_id}")
        return detail


NOT_BUILT = ("cancel_login_provider",)
"""Commands whose feature is not built yet: they answer success:false with an honest message."""
