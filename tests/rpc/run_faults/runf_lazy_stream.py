"""The stream module of runf_lazy_provider. Importing it takes RUNF_IMPORT_S seconds (a provider
SDK's import on a loaded machine) and records the importing thread in RUNF_IMPORT_LOG: the host
must import it in a thread, so the loop answers meanwhile."""

import os
import threading
import time
from pathlib import Path

from atomic_host.kit.llm.stream import AssistantStream

Path(os.environ["RUNF_IMPORT_LOG"]).write_text(threading.current_thread().name)
time.sleep(float(os.environ.get("RUNF_IMPORT_S", "0")))


async def stream(model, context, options):
    out = AssistantStream(model)
    yield out.start()
    index, event = out.text_start()
    yield event
    yield out.text_delta(index, "lazy reply")
    yield out.text_end(index)
    yield out.done()
