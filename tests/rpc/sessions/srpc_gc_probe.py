"""``/srpc_gc off`` stops the cyclic garbage collector; ``/srpc_gc count`` notifies how many
AgentSession objects are alive. With the collector off, a switched-away session that is still
counted is kept by a reference cycle: it would hold its whole parsed file until a full collection."""

import gc

from atomic_host import SlashCommand, hookimpl


async def probe(args: str, api) -> None:
    if args.strip() == "off":
        gc.collect()
        gc.disable()
        api.ui.notify("srpc_gc: off")
        return
    alive = sum(1 for o in gc.get_objects() if type(o).__name__ == "AgentSession")
    api.ui.notify(f"srpc_gc: {alive}")


@hookimpl
def register_commands(register) -> None:
    register(SlashCommand(name="srpc_gc", handler=probe, description="garbage collector probe"))
