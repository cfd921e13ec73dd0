"""The parameters of runf_lazy. Importing it records which thread imported it (in the file that
RUNF_IMPORT_LOG names): the host must never import a tool's module on its event loop."""

import os
import threading
from pathlib import Path

from pydantic import BaseModel

Path(os.environ["RUNF_IMPORT_LOG"]).write_text(threading.current_thread().name)


class Params(BaseModel):
    word: str
