"""Model references as typed by users: ``provider/model-id[:level]``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_host.core.models.thinking import LEVELS
from atomic_host.kit.copies import json_copy

if TYPE_CHECKING:
    from atomic_host.core.models.registry import ModelRegistry


def parse_model_ref(ref: str) -> tuple[str | None, str, str | None]:
    """Split ``ref`` into ``(provider, model_id, level)``.

    The provider is the text before the first ``/`` (ids may contain more ``/``, as in
    ``openrouter/meta/llama``); a trailing ``:<level>`` counts only when it names a known thinking
    level, so ``llama:free`` keeps its suffix.
    """
    ref = ref.strip()
    level: str | None = None
    head, sep, tail = ref.rpartition(":")
    if sep and head and tail in LEVELS:
        ref, level = head, tail
    provider, sep, model_id = ref.partition("/")
    if sep and provider and model_id:
        return provider, model_id, level
    return None, ref, level


def resolve_model(registry: ModelRegistry, ref: str, provider: str | None = None) -> dict[str, Any] | None:
    """Find the model ``ref`` names: exact provider/id first, else an id match (available models first).

    ``provider`` (e.g. from ``--provider``) scopes the search; the whole ref is then tried as an id too,
    so ``--provider openrouter --model meta/llama`` works. Returns None when nothing matches.
    """
    ref_provider, model_id, _level = parse_model_ref(ref)
    whole_id = f"{ref_provider}/{model_id}" if ref_provider else model_id
    attempts: list[tuple[str, str]] = []
    if provider:
        attempts.append((provider, whole_id))
        if ref_provider == provider:
            attempts.append((provider, model_id))
    elif ref_provider:
        attempts.append((ref_provider, model_id))
    for prov, mid in attempts:
        found = registry.find(prov, mid)
        if found is not None:
            return found
    ids = {whole_id}
    # The registry's own dicts, uncopied (read-only here): only the match is copied.
    known_provider = any(m["provider"] == ref_provider for m in registry.iter_models())
    if (not provider and not known_provider) or ref_provider == provider:
        # "meta/llama" where "meta" is no provider: the tail alone may still be an id.
        ids.add(model_id)
    for available in (True, False):
        for m in registry.iter_models(available=available):
            # Several providers may share an id; the catalog order decides, available ones first.
            if m["id"] in ids and (not provider or m["provider"] == provider):
                return json_copy(m)
    return None
