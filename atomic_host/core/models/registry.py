"""The model registry: providers and their models, models.json, auth.json and API-key resolution.

API-key order for a provider (providers.md §2 "API keys"):

1. the CLI ``--api-key`` (for ``cli_provider`` when given, else for every provider);
2. ``auth.json`` (``<agent_dir>/auth.json``, then the optional legacy file) — a stored credential owns
   the provider: if it resolves to nothing there is no fallback;
3. environment variables (``ProviderInfo.env_keys``: the catalog declares them for the well-known
   providers, also for those it lists without models, so a models.json provider of such an id finds its key);
4. the provider's ``apiKey`` in ``models.json``.

A provider is *configured* (its models are *available*) when one of these yields a value or it is
``always_authenticated``. The catalog's keyless local servers (ollama, llama.cpp, vllm, lmstudio) are;
a keyless server under another id in models.json still needs a dummy ``"apiKey"`` to show up.

Every credential the registry learns is registered with :mod:`atomic_host.kit.secrets` so the host
masks it in everything it writes: at load (env vars, auth.json keys and OAuth tokens, models.json
``apiKey``/``headers`` literals and ``$VAR`` values, the credentials in every ``baseUrl``) and when a
``!command`` runs at request time.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from atomic_host.contract import records
from atomic_host.contract.providers import ApiImpl, OAuthLogin, ProviderInfo
from atomic_host.core.models import values
from atomic_host.core.models.auth_store import AuthFileError, read_auth, record_secret, write_auth
from atomic_host.core.models.models_json import (
    ProviderConfig,
    apply_override,
    load_models_json,
    normalize_model,
    upsert,
    upsert_all,
)
from atomic_host.kit import secrets, tool_env
from atomic_host.kit.copies import json_copy

CREDENTIAL_ENV_SUFFIXES = ("_API_KEY", "_TOKEN")
"""Environment variables named like this hold credentials (``ANTHROPIC_API_KEY``, ``HF_TOKEN``,
``ANTHROPIC_OAUTH_TOKEN``, …): their values are masked from startup on, before any provider plugin
has said which variables it reads. Declared names of other shapes are masked once registered."""
MODELS_JSON_PLUGIN = "models.json"
AuthStatus = dict[str, Any]


def credential_env_names(env: Mapping[str, str]) -> list[str]:
    """The variables of ``env`` whose names say they hold a credential (:data:`CREDENTIAL_ENV_SUFFIXES`)."""
    return [name for name in env if name.upper().endswith(CREDENTIAL_ENV_SUFFIXES)]


def register_env_credentials(env: Mapping[str, str], names: Any) -> None:
    """Register the values of the env vars ``names`` (unset/empty ones are skipped), labelled by name,
    and the names as credential variables (left out of tool environments: :mod:`atomic_host.kit.tool_env`)."""
    names = list(names)
    tool_env.declare(names)
    for name in names:
        secrets.register(env.get(name), name)


def register_reference_values(value: str, env: Mapping[str, str]) -> None:
    """Register the env vars a ``$VAR`` config value refers to (``env`` output shows them bare)."""
    if "$" in value and not values.is_command(value):
        register_env_credentials(env, values.env_refs(value))


def register_auth_records(auth: Mapping[str, Any], env: Mapping[str, str]) -> None:
    """Register every stored credential: api_key records (``$VAR`` resolved; ``!commands`` only when
    they run) and OAuth access and refresh tokens."""
    for provider, record in auth.items():
        if not isinstance(record, dict):
            continue
        label = f"auth.json:{provider}"
        if record.get("type") == "oauth":
            secrets.register(record.get("access"), f"{label}:access")
            secrets.register(record.get("refresh"), f"{label}:refresh")
            for key, value in record.items():  # provider extras (id tokens, account ids)
                if key not in ("type", "access", "refresh", "expires", "enterpriseUrl") and isinstance(value, str):
                    secrets.register(value, f"{label}:{key}")
            continue
        key = record.get("key")
        if not isinstance(key, str) or values.is_command(key):
            continue
        extra = record.get("env") if isinstance(record.get("env"), dict) else {}
        scope = {**env, **{k: str(v) for k, v in extra.items()}}
        register_reference_values(key, scope)
        secrets.register(values.interpolate(key, scope), label)


def register_startup_credentials(agent_dir: Path, env: Mapping[str, str], cli_api_key: str | None) -> None:
    """What can be known before any plugin loads (a plugin may print at import): ``--api-key``,
    every env var named like a credential (:func:`credential_env_names`; the key variables of the
    well-known providers all are) and the stored credentials in ``<agent_dir>/auth.json``. The
    variables providers declare are registered again, by name, when the registry loads."""
    secrets.register(cli_api_key, "--api-key")
    register_env_credentials(env, credential_env_names(env))
    try:
        register_auth_records(read_auth(Path(agent_dir) / "auth.json"), env)
    except AuthFileError:
        pass  # reported by the registry when it loads


@records.record  # not @dataclass: no per-class code to compile at every start
class _Provider:
    info: ProviderInfo
    config: ProviderConfig | None = None
    models: list[dict[str, Any]] = records.field(default_factory=list)
    oauth: OAuthLogin | None = None
    """The login method (the last registration of this id that declares one)."""


class ModelRegistry:
    """All known models plus the auth that makes them usable. Call ``reload()`` to re-read the files."""

    def __init__(self, agent_dir: Path, providers: list[ProviderInfo], apis: dict[str, ApiImpl],
                 cli_api_key: str | None = None, cli_provider: str | None = None,
                 env: Mapping[str, str] | None = None, legacy_auth_path: Path | None = None,
                 builtin_plugins: Collection[str] = frozenset()) -> None:
        self.builtin_plugins = frozenset(builtin_plugins)
        """Names of the built-in plugins (their providers are not "extension" providers)."""
        self.agent_dir = Path(agent_dir)
        self.models_path = self.agent_dir / "models.json"
        self.auth_path = self.agent_dir / "auth.json"
        self.legacy_auth_path = legacy_auth_path
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.cli_api_key = cli_api_key or None
        self.cli_provider = cli_provider
        self.errors: list[str] = []
        """Problems found by the last ``reload()`` (broken models.json / auth.json); never fatal."""
        self._registered = list(providers)
        self._apis = dict(apis)
        self._stream_fns: dict[str, Any] = {}
        self._command_cache: dict[tuple[str, str], str | None] = {}
        self._providers: dict[str, _Provider] = {}
        self._auth: dict[str, Any] = {}
        self.fetched: dict[str, tuple[float, list[dict[str, Any]]]] = {}
        """Dynamic catalogs (``ProviderInfo.refresh_models``): provider id → (monotonic time of the
        fetch, its models), merged over the registered models by ``reload`` (core/models/catalogs.py)."""
        self.reload()

    # -- loading -------------------------------------------------------------------------------

    def reload(self) -> None:
        """Re-read models.json and auth.json and rebuild the model list."""
        self.errors = []
        configs, errors = load_models_json(self.models_path)
        self.errors.extend(errors)
        self._auth = self._read_all_auth()
        self._providers = {}
        for info in self._registered:
            entry = self._providers.get(info.id)
            if entry is None:
                entry = self._providers[info.id] = _Provider(info=info)
            if info.oauth is not None:
                entry.oauth = info.oauth
            for raw in info.models:
                upsert(entry.models, normalize_model(raw, info.id, info.api, info.base_url))
        for pid, (_when, fetched) in self.fetched.items():
            entry = self._providers.get(pid)
            if entry is not None:
                info = entry.info
                upsert_all(entry.models, (normalize_model(raw, pid, info.api, info.base_url) for raw in fetched))
        for pid, cfg in configs.items():
            self._apply_config(pid, cfg)
        self._register_credentials(configs)

    def _register_credentials(self, configs: dict[str, ProviderConfig]) -> None:
        """Tell :mod:`atomic_host.kit.secrets` every credential known without running a command."""
        secrets.register(self.cli_api_key, "--api-key")
        register_env_credentials(self.env, credential_env_names(self.env))
        for entry in self._providers.values():
            register_env_credentials(self.env, [*entry.info.env_keys, *entry.info.secret_env])
        register_auth_records(self._auth, self.env)
        for pid, entry in self._providers.items():
            for url in {entry.info.base_url, *(m.get("baseUrl") for m in entry.models)}:
                secrets.register_url(url, f"baseUrl:{pid}")
        for pid, cfg in configs.items():
            if cfg.api_key:
                self._register_config_value(cfg.api_key, f"models.json:{pid}")
            header_sets = [cfg.headers, *(m.get("headers") for m in cfg.models),
                           *(o.get("headers") for o in cfg.overrides.values() if isinstance(o, dict))]
            for headers in header_sets:
                for name, value in (headers or {}).items():
                    if isinstance(value, str):
                        self._register_config_value(value, f"models.json:{pid}:{name}")

    def _register_config_value(self, value: str, label: str) -> None:
        """A models.json value: literal and ``$VAR`` ones now; ``!commands`` when they run."""
        if values.is_command(value):
            return
        register_reference_values(value, self.env)
        secrets.register(values.interpolate(value, self.env), label)

    def _apply_config(self, pid: str, cfg: ProviderConfig) -> None:
        entry = self._providers.get(pid)
        if entry is None:
            info = ProviderInfo(id=pid, name=cfg.name or pid, api=cfg.api or "", base_url=cfg.base_url or "",
                                plugin=MODELS_JSON_PLUGIN)
            entry = self._providers[pid] = _Provider(info=info)
        else:
            # baseUrl alone reroutes the registered models; provider compat merges under theirs.
            for model in entry.models:
                if cfg.base_url:
                    model["baseUrl"] = cfg.base_url
                if cfg.compat:
                    model["compat"] = {**(model.get("compat") or {}), **cfg.compat}
        entry.config = cfg
        api = cfg.api or entry.info.api
        base_url = cfg.base_url or entry.info.base_url
        for raw in cfg.models:
            if not (raw.get("api") or api) or not (raw.get("baseUrl") or base_url):
                self.errors.append(f"models.json: provider {pid!r}: model {raw['id']!r} needs api and "
                                   "baseUrl (on the model or the provider); skipped")
                continue
            compat = {**entry.info.compat, **cfg.compat}
            upsert(entry.models, normalize_model(raw, pid, api, base_url, compat))
        known = {m["id"]: m for m in entry.models}
        for model_id, patch in cfg.overrides.items():
            if model_id in known and isinstance(patch, dict):
                apply_override(known[model_id], patch)
        if not entry.models:
            self.errors.append(f"models.json: provider {pid!r} has no models")

    def _read_all_auth(self) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for path in (self.legacy_auth_path, self.auth_path):
            if path is None:
                continue
            try:
                merged.update(read_auth(path))
            except AuthFileError as exc:
                self.errors.append(str(exc))
        return merged

    # -- models --------------------------------------------------------------------------------

    def provider_ids(self) -> list[str]:
        """Every provider id, registration order first, then new models.json providers."""
        return list(self._providers)

    def provider_info(self, provider: str) -> ProviderInfo | None:
        """The registered (or models.json-made) ProviderInfo for ``provider``."""
        entry = self._providers.get(provider)
        return entry.info if entry else None

    def all_models(self) -> list[dict[str, Any]]:
        """Every model (full Model dicts, copies), catalog order."""
        return [json_copy(m) for m in self.iter_models()]

    def available(self) -> list[dict[str, Any]]:
        """Models whose provider has configured auth, catalog order."""
        return [json_copy(m) for m in self.iter_models(available=True)]

    def iter_models(self, available: bool = False) -> Iterator[dict[str, Any]]:
        """The registry's own model dicts (all, or only the available ones), catalog order, not copied.

        Read-only: the registry keeps answering from these dicts, so a caller that hands one on or
        may change it takes a :func:`~atomic_host.kit.copies.json_copy` of it (as
        :meth:`all_models`, :meth:`available`, :meth:`find` and :meth:`default_model` do). Lookups
        that return one model scan these and copy only the match."""
        for pid, entry in self._providers.items():
            if entry.models and (not available or self.auth_status(pid)["configured"]):
                yield from entry.models

    def find(self, provider: str, model_id: str) -> dict[str, Any] | None:
        """The model ``provider``/``model_id`` among all models (a copy), or None."""
        entry = self._providers.get(provider)
        for m in entry.models if entry else []:
            if m["id"] == model_id:
                return json_copy(m)
        return None

    def default_model(self) -> dict[str, Any] | None:
        """The model to use when the user chose none (a copy), or None when nothing is available.

        Each provider's ``preferred_models``, providers in registration order (built-ins first), the
        first available one wins; otherwise the first available model of a provider that is not
        ``scripted`` (the scripted ``faux`` is only used when asked for by name)."""
        available = list(self.iter_models(available=True))
        by_key = {(m["provider"], m["id"]): m for m in available}
        for pid, entry in self._providers.items():
            for model_id in entry.info.preferred_models:
                if (pid, model_id) in by_key:
                    return json_copy(by_key[(pid, model_id)])
        scripted = {pid for pid, entry in self._providers.items() if entry.info.scripted}
        found = next((m for m in available if m["provider"] not in scripted), None)
        return json_copy(found) if found is not None else None

    def needs_http(self, api: str) -> bool:
        """Whether requests of ``api`` take the shared HTTP client (``ApiImpl.needs_http``; True
        for an API no plugin registered, so a models.json one is treated as HTTP)."""
        impl = self._apis.get(api)
        return impl.needs_http if impl is not None else True

    # -- auth ----------------------------------------------------------------------------------

    def env_key_names(self, provider: str) -> tuple[str, ...]:
        """The environment variables that can hold ``provider``'s key, in priority order."""
        return self._env_keys(provider)

    def _env_keys(self, provider: str) -> tuple[str, ...]:
        entry = self._providers.get(provider)
        return tuple(entry.info.env_keys) if entry else ()

    def _cli_applies(self, provider: str) -> bool:
        return bool(self.cli_api_key) and (self.cli_provider is None or self.cli_provider == provider)

    def _models_json_key(self, provider: str) -> str | None:
        entry = self._providers.get(provider)
        return entry.config.api_key if entry and entry.config else None

    def resolve_api_key(self, provider: str) -> str | None:
        """The API key to send for ``provider`` (runs ``!commands``), or None. The key is registered
        with :mod:`atomic_host.kit.secrets` before it is returned, so it is masked wherever it is echoed."""
        if self._cli_applies(provider):
            return self.cli_api_key
        record = self._auth.get(provider)
        secret = record_secret(record)
        if secret is not None:
            key = self._resolve_stored(provider, record, secret)
            secrets.register(key, f"auth.json:{provider}")
            return key
        for var in self._env_keys(provider):
            if self.env.get(var):
                secrets.register(self.env[var], var)
                return self.env[var]
        raw = self._models_json_key(provider)
        # models.json commands run at request time, uncached.
        key = values.resolve_value(raw, self.env) if raw else None
        secrets.register(key, f"models.json:{provider}")
        return key

    def _resolve_stored(self, provider: str, record: dict[str, Any], secret: str) -> str | None:
        if record.get("type") == "oauth":
            return secret
        extra = record.get("env") if isinstance(record.get("env"), dict) else {}
        env = {**self.env, **{k: str(v) for k, v in extra.items()}}
        if values.is_command(secret):
            # auth.json commands are cached for the life of the process.
            key = (provider, secret)
            if key not in self._command_cache:
                self._command_cache[key] = values.run_command(secret[1:], env)
            return self._command_cache[key]
        return values.interpolate(secret, env) or None

    def auth_status(self, provider: str) -> AuthStatus:
        """``{"configured", "source"?, "label"?}``; never runs commands (a ``!cmd`` counts as configured)."""
        if self._cli_applies(provider):
            return {"configured": True, "source": "cli", "label": "--api-key"}
        record = self._auth.get(provider)
        if record_secret(record) is not None:
            label = "OAuth" if record.get("type") == "oauth" else "stored credential"
            return {"configured": True, "source": "stored", "label": label}
        for var in self._env_keys(provider):
            if self.env.get(var):
                return {"configured": True, "source": "environment", "label": var}
        raw = self._models_json_key(provider)
        if raw and (values.is_command(raw) or values.interpolate(raw, self.env)):
            return {"configured": True, "source": "models_json", "label": "models.json"}
        entry = self._providers.get(provider)
        if entry and entry.info.always_authenticated:
            return {"configured": True}
        return {"configured": False}

    def login(self, provider: str, key: str) -> AuthStatus:
        """Store an API key for ``provider`` in auth.json (0600, atomic); returns the new status."""
        if not key:
            raise ValueError("API key must not be empty")
        secrets.register(key, f"auth.json:{provider}")
        data = read_auth(self.auth_path)
        data[provider] = {"type": "api_key", "key": key}
        write_auth(self.auth_path, data)
        self._forget(provider)
        return self.auth_status(provider)

    def logout(self, provider: str) -> AuthStatus:
        """Remove the stored credential (auth.json and the legacy file); env/CLI/models.json stay."""
        for path in (self.auth_path, self.legacy_auth_path):
            if path is None:
                continue
            data = read_auth(path)
            if provider in data:
                del data[provider]
                write_auth(path, data)
        self._forget(provider)
        return self.auth_status(provider)

    def _forget(self, provider: str) -> None:
        self._command_cache = {k: v for k, v in self._command_cache.items() if k[0] != provider}
        self._auth = self._read_all_auth()

    def dynamic_providers(self) -> list[ProviderInfo]:
        """The providers with a dynamic catalog (``refresh_models``), the last registration of each id."""
        latest = {i.id: i for i in self._registered if i.refresh_models is not None}
        return list(latest.values())

    def reload_auth(self) -> None:
        """Re-read auth.json (and the legacy file) only: after a login, refresh or logout."""
        self._auth = self._read_all_auth()
        register_auth_records(self._auth, self.env)

    def stored_record(self, provider: str) -> dict[str, Any] | None:
        """The credential stored for ``provider`` (a copy; auth.json wins over the legacy file)."""
        record = self._auth.get(provider)
        return json_copy(record) if isinstance(record, dict) else None

    def uses_stored_oauth(self, provider: str) -> bool:
        """Requests for ``provider`` use an OAuth record from auth.json (no ``--api-key`` overrides it)."""
        record = self._auth.get(provider)
        return (not self._cli_applies(provider) and isinstance(record, dict) and record.get("type") == "oauth"
                and record_secret(record) is not None)

    def oauth_login(self, provider: str) -> OAuthLogin | None:
        """The OAuth login method declared for ``provider``, if any."""
        entry = self._providers.get(provider)
        return entry.oauth if entry else None

    def oauth_providers(self) -> list[dict[str, Any]]:
        """``[{id, name, loginLabel?, usesCallbackServer?}]``: the providers with an OAuth login."""
        out = []
        for pid, entry in self._providers.items():
            if entry.oauth is None:
                continue
            item: dict[str, Any] = {"id": pid, "name": entry.oauth.name}
            if entry.oauth.login_label:
                item["loginLabel"] = entry.oauth.login_label
            if entry.oauth.uses_callback_server:
                item["usesCallbackServer"] = True
            out.append(item)
        return out

    def save_credential(self, provider: str, credential: Any) -> AuthStatus:
        """Store a credential record (``{"type":"api_key","key",...}`` or ``{"type":"oauth","access",
        "refresh","expires",...}``) for a known provider in auth.json (0600, atomic)."""
        if provider not in self._providers:
            raise ValueError(f"Unknown provider: {provider}")
        record = validate_credential(credential)
        if record["type"] == "oauth":
            register_auth_records({provider: record}, self.env)
        else:
            secrets.register(record["key"], f"auth.json:{provider}")
        data = read_auth(self.auth_path)
        data[provider] = record
        write_auth(self.auth_path, data)
        self._forget(provider)
        return self.auth_status(provider)

    def _is_extension(self, info: ProviderInfo) -> bool:
        return bool(info.plugin) and info.plugin != MODELS_JSON_PLUGIN and info.plugin not in self.builtin_plugins

    def custom_auth_providers(self) -> list[dict[str, str]]:
        """Extension-registered providers that take an API key through ``login_provider``."""
        return [{"id": e.info.id, "name": e.info.name} for e in self._providers.values()
                if self._is_extension(e.info) and not e.info.always_authenticated]

    def provider_auth_statuses(self) -> list[dict[str, Any]]:
        """``[{provider, status}]`` for extension-registered providers whose auth is not in auth.json."""
        out = []
        for pid, entry in self._providers.items():
            if self._is_extension(entry.info):
                status = self.auth_status(pid)
                if status.get("source") != "stored":
                    out.append({"provider": pid, "status": status})
        return out

    # -- requests ------------------------------------------------------------------------------

    def stream_fn(self, api: str) -> Any:
        """The stream function of ``api`` (resolving ``"module:function"``), or None if unknown/broken.
        It refreshes OAuth credentials before they expire and retries once on a 401
        (:func:`atomic_host.core.models.auth_oauth.oauth_stream`)."""
        if api in self._stream_fns:
            return self._stream_fns[api]
        impl = self._apis.get(api)
        fn: Any = None
        if impl is not None and callable(impl.stream):
            fn = impl.stream
        elif impl is not None:
            module, _, name = str(impl.stream).partition(":")
            try:
                fn = getattr(importlib.import_module(module), name)
            except BaseException as exc:  # a provider module is plugin code: even its sys.exit() is its error
                self.errors.append(f"Cannot load stream function {impl.stream!r} for api {api!r}: {exc}")
        if fn is not None and any(e.oauth is not None for e in self._providers.values()):
            # lazy: the OAuth machinery loads only when a provider signs in with OAuth
            from atomic_host.core.models.auth_oauth import oauth_stream

            fn = oauth_stream(self, fn)
        self._stream_fns[api] = fn
        return fn

    def stream_module(self, api: str) -> str | None:
        """The module :meth:`stream_fn` imports for ``api`` (a ``"module:function"`` declaration)
        while it is not loaded yet; None when there is nothing to import."""
        impl = self._apis.get(api)
        if api in self._stream_fns or impl is None or callable(impl.stream):
            return None
        return str(impl.stream).partition(":")[0] or None

    def request_headers(self, model: dict[str, Any]) -> dict[str, str]:
        """Provider + models.json provider + model headers, values resolved (``$VAR``, ``!cmd``)."""
        entry = self._providers.get(model.get("provider", ""))
        raw: dict[str, str] = {}
        if entry:
            raw.update(entry.info.headers)
            if entry.config:
                raw.update(entry.config.headers)
        raw.update(model.get("headers") or {})
        headers = {}
        for name, value in raw.items():
            resolved = values.resolve_value(value, self.env)
            if resolved:
                headers[name] = resolved
                if values.is_command(value) or "$" in value:  # resolved config: a credential by default
                    register_reference_values(value, self.env)
                    secrets.register(resolved, f"header:{model.get('provider', '')}:{name}")
        if entry and entry.config and entry.config.auth_header:
            key = self.resolve_api_key(entry.info.id)
            if key:
                headers["Authorization"] = f"Bearer {key}"
        return headers


def validate_credential(credential: Any) -> dict[str, Any]:
    """A clean copy of a credential record for auth.json; ValueError says what is wrong."""
    if not isinstance(credential, dict):
        raise ValueError("Invalid credential: expected an object")
    kind = credential.get("type")
    if kind == "api_key":
        key, env = credential.get("key"), credential.get("env")
        if not isinstance(key, str) or not key:
            raise ValueError("Invalid credential: api_key needs a non-empty key")
        if env is not None and not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
            raise ValueError("Invalid credential: env must map names to strings")
        return {"type": "api_key", "key": key, **({"env": dict(env)} if env else {})}
    if kind == "oauth":
        access, refresh, expires = credential.get("access"), credential.get("refresh"), credential.get("expires")
        if not isinstance(access, str) or not access:
            raise ValueError("Invalid credential: oauth needs a non-empty access token")
        if not isinstance(refresh, str):
            raise ValueError("Invalid credential: oauth needs a refresh token")
        if isinstance(expires, bool) or not isinstance(expires, int | float):
            raise ValueError("Invalid credential: oauth needs expires (milliseconds since the epoch)")
        return json_copy(credential)
    raise ValueError('Invalid credential: type must be "api_key" or "oauth"')
