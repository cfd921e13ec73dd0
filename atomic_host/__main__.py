"""``python -m atomic_host`` is the ``atomic`` command."""

import sys

from atomic_host.frontends.cli import main

sys.exit(main())
