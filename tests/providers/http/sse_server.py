"""The scripted SSE server now lives in :mod:`atomic_host.testing_sse`; this name stays for the
tests and benches that load it by path."""

from atomic_host.testing_sse import *  # noqa: F403
from atomic_host.testing_sse import Reply, SSEServer, anthropic_frames, openai_chat_frames, responses_frames, sse_frame

__all__ = ["Reply", "SSEServer", "anthropic_frames", "openai_chat_frames", "responses_frames", "sse_frame"]
