"""A plugin whose tool_call implementation is a pluggy wrapper: refused at registration."""

from atomic_host import hookimpl


@hookimpl(wrapper=True)
def tool_call(event):
    result = yield
    return result
