"""Ends its code at import (``_px_how.end_it``)."""

from _px_how import end_it

end_it()
