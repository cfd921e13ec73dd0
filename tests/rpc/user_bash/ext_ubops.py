"""A plugin that runs direct bash commands through its own runner (``user_bash`` operations).

The runner is chosen by the command's first word, so one host exercises every path:

- ``box: CMD``     ``sh -c CMD`` in its own subprocess; each stdout line is prefixed ``[box] ``,
                   stderr goes to the stderr channel unchanged; the exit code is the process's.
                   On abort it kills the process and notes ``killed`` in UBOPS_LOG.
- ``thread: N``    N lines handed to ``on_data`` from a worker thread (exit code 0).
- ``stubborn:``    ignores the abort signal; notes ``cancelled`` in UBOPS_LOG when its task is cancelled.
- ``boom:``        emits a line, then raises.
- ``split: TEXT``  emits TEXT in 3-byte pieces (a key split across pieces).
- ``answer:``      answered outright with a BashResult, nothing runs.
- ``… # dict``     (any command ending so) returns a dict, the old result shape: reported and
                   ignored, so the host's local shell runs the command.
- ``plain: CMD``   ``sh -c CMD`` as ``box`` but without the prefix.
Anything else is left to the host's local shell.
"""

from __future__ import annotations

import asyncio
import os

from atomic_host import BashResult, hookimpl

LOG = os.environ.get("UBOPS_LOG", "")


def note(text: str) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")


class Box:
    """Runs the command (its ``head`` word removed) with ``sh -c`` in a subprocess of its own."""

    def __init__(self, head: str, prefix: str) -> None:
        self.head = head
        self.prefix = prefix

    async def exec(self, command, cwd, *, on_data, signal):
        note(f"exec {command!r} in {cwd}")
        command = command.replace(self.head, "", 1)  # any shellCommandPrefix lines stay in front
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", command, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )

        async def pump(stream, channel):
            while line := await stream.readline():
                on_data((self.prefix.encode() + line) if channel == "stdout" else line, channel)

        pumps = asyncio.gather(pump(proc.stdout, "stdout"), pump(proc.stderr, "stderr"))
        stop = asyncio.ensure_future(signal.wait())
        done, _ = await asyncio.wait({pumps, stop}, return_when=asyncio.FIRST_COMPLETED)
        if stop in done:
            proc.kill()
            note("killed")
        stop.cancel()
        await pumps
        return await proc.wait()


class Threaded:
    async def exec(self, command, cwd, *, on_data, signal):
        count = int(command.split()[-1])

        def work():
            for i in range(count):
                on_data(f"t-{i}\n")

        await asyncio.to_thread(work)
        return 0


class Stubborn:
    async def exec(self, command, cwd, *, on_data, signal):
        on_data("stubborn started\n")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            note("cancelled")
            raise
        return 0


class Boom:
    async def exec(self, command, cwd, *, on_data, signal):
        on_data("about to fail\n")
        raise RuntimeError("the box is gone")


class Split:
    async def exec(self, command, cwd, *, on_data, signal):
        text = command.split(" ", 1)[1] + "\n"
        for i in range(0, len(text), 3):
            on_data(text[i : i + 3])
            await asyncio.sleep(0)
        return 7


@hookimpl
def user_bash(event, api):
    head = event.command.split(" ", 1)[0]
    if head == "box:":
        return BashResult(operations=Box("box: ", "[box] "))
    if head == "plain:":
        return BashResult(operations=Box("plain: ", ""))
    if head == "thread:":
        return BashResult(operations=Threaded())
    if head == "stubborn:":
        return BashResult(operations=Stubborn())
    if head == "boom:":
        return BashResult(operations=Boom())
    if head == "split:":
        return BashResult(operations=Split())
    if head == "answer:":
        return BashResult("answered by the plugin\n", exit_code=5)
    if event.command.endswith("# dict"):
        return {"output": "a dict result\n", "exitCode": 0, "cancelled": False, "truncated": False}
    return None
