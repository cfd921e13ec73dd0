"""The catalog's prices are what ``scripts/update_catalog_prices.py`` makes of genai-prices, every
curated exception names its source, and the host never imports genai-prices."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_paths import ROOT as ROOT_DIR

ROOT = ROOT_DIR
SCRIPT = ROOT / "scripts" / "update_catalog_prices.py"
CATALOG_DIR = ROOT / "builtin_plugins" / "catalog"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("update_catalog_prices", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _script()
NO_GENAI = (
    "genai-prices is NOT installed, so the catalog's prices are NOT checked against it: "
    "pip install -e '.[test]' (it pins genai-prices) to run this check"
)


def _load(name: str) -> dict[str, Any]:
    return json.loads((CATALOG_DIR / name).read_text("utf-8"))


@pytest.mark.parametrize("name", gen.FILES)
def test_shipped_json_is_what_the_generator_writes(name: str) -> None:
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    shipped = (CATALOG_DIR / name).read_text("utf-8")
    assert gen.render(name) == shipped, (
        f"{name} is not what genai-prices gives: run scripts/update_catalog_prices.py and review the table it prints"
    )


def test_the_recorded_genai_prices_version_is_the_installed_one() -> None:
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    from importlib.metadata import version

    for name in gen.FILES:
        assert _load(name)["_provenance"]["genaiPricesVersion"] == version("genai-prices")


@pytest.mark.parametrize("name", gen.FILES)
def test_every_model_names_where_its_price_comes_from(name: str) -> None:
    prov = _load(name)["_provenance"]
    refs = [f"{p['id']}/{m['id']}" for p in _load(name)["providers"] for m in p["models"]]
    assert sorted(prov["priceSources"]) == sorted(refs)
    curated = {**prov.get("curatedPrices", {}), **prov.get("staleInGenaiPrices", {})}
    for ref in refs:
        source = prov["priceSources"][ref]
        assert source.startswith(("genai-prices ", "curated ")), source
        if source.startswith("curated"):
            assert len(curated[ref]) > 40, f"{ref}: a curated price needs its source"  # a sentence, not a tag
    for ref in curated:
        assert prov["priceSources"][ref].startswith("curated")
    assert "never fetched" in prov["summary"]


def test_limits_sources_name_real_models() -> None:
    for name in gen.FILES:
        data = _load(name)
        refs = {f"{p['id']}/{m['id']}" for p in data["providers"] for m in p["models"]}
        assert set(data["_provenance"].get("limitSources", {})) <= refs
        for p in data["providers"]:
            for m in p["models"]:
                assert 0 < m["maxTokens"] <= m["contextWindow"], (p["id"], m["id"])


def test_a_model_genai_prices_lacks_needs_a_documented_curated_price() -> None:
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    from genai_prices.data import providers

    data = {
        "_provenance": {"summary": "x"},
        "providers": [{"id": "cerebras", "models": [{"id": "no-such-model-anywhere", "cost": {"input": 1}}]}],
    }
    with pytest.raises(gen.CatalogError, match="cerebras/no-such-model-anywhere"):
        gen.regenerate(data, providers, "0", dt.date(2026, 12, 3))
    data["_provenance"]["curatedPrices"] = {"cerebras/no-such-model-anywhere": "from the vendor's page, 2026-12-01"}
    out = gen.regenerate(data, providers, "0", dt.date(2026, 12, 3))
    assert out["providers"][0]["models"][0]["cost"] == {"input": 1}
    assert out["_provenance"]["priceSources"] == {"cerebras/no-such-model-anywhere": "curated (see curatedPrices)"}


def test_a_curated_price_goes_once_genai_prices_has_the_model() -> None:
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    from genai_prices.data import providers

    data = {
        "_provenance": {"summary": "x", "curatedPrices": {"openai/gpt-4o": "an old note"}},
        "providers": [{"id": "openai", "models": [{"id": "gpt-4o", "contextWindow": 128000, "cost": {"input": 99}}]}],
    }
    out = gen.regenerate(data, providers, "0", dt.date(2026, 12, 3))
    assert "curatedPrices" not in out["_provenance"]
    assert out["providers"][0]["models"][0]["cost"]["input"] == 2.5  # genai-prices' gpt-4o
    assert out["_provenance"]["priceSources"]["openai/gpt-4o"] == "genai-prices openai/gpt-4o"


def test_dated_time_of_day_and_tiered_prices() -> None:
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    from genai_prices.types import (
        ClauseEquals,
        ConditionalPrice,
        ModelInfo,
        ModelPrice,
        StartDateConstraint,
        Tier,
        TieredPrices,
        TimeOfDateConstraint,
    )

    d = Decimal
    model = ModelInfo(
        id="m",
        match=ClauseEquals(equals="m"),
        prices=[
            ConditionalPrice(prices=ModelPrice(input_mtok=d("1"), output_mtok=d("2"))),
            ConditionalPrice(
                constraint=StartDateConstraint(start_date=dt.date(2026, 6, 1)),
                prices=ModelPrice(
                    input_mtok=TieredPrices(base=d("3"), tiers=[Tier(start=200000, price=d("6"))]),
                    output_mtok=d("4"),
                    cache_read_mtok=TieredPrices(base=d("0.3"), tiers=[Tier(start=100000, price=d("0.5"))]),
                ),
            ),
            ConditionalPrice(
                constraint=TimeOfDateConstraint(start_time=dt.time(1), end_time=dt.time(2)),
                prices=ModelPrice(input_mtok=d("8"), output_mtok=d("1")),
            ),
        ],
    )
    price, note = gen._resolve(model, dt.date(2026, 5, 31))
    assert (price.input_mtok, price.output_mtok) == (d("8"), d("2"))  # peak input, base output
    assert "off-peak is 1/2/0" in note
    price, _ = gen._resolve(model, dt.date(2026, 6, 1))
    cost = gen._cost_dict(price)
    assert cost == {
        "input": 8,  # the daily window's 8 beats the tiered base of 3
        "output": 4,
        "cacheRead": 0.3,
        "cacheWrite": 0,
        "tiers": [
            {"inputTokensAbove": 100000, "input": 8, "output": 4, "cacheRead": 0.5, "cacheWrite": 0},
        ],
    }
    flat, _ = gen._resolve(
        ModelInfo(id="t", match=ClauseEquals(equals="t"), prices=model.prices[1].prices), dt.date(2026, 1, 1)
    )
    assert gen._cost_dict(flat)["tiers"] == [
        {"inputTokensAbove": 100000, "input": 3, "output": 4, "cacheRead": 0.5, "cacheWrite": 0},
        {"inputTokensAbove": 200000, "input": 6, "output": 4, "cacheRead": 0.5, "cacheWrite": 0},
    ]


def test_the_host_never_imports_genai_prices() -> None:
    """Package data stays static JSON: loading every built-in catalog imports no genai_prices."""
    code = (
        "import sys\n"
        "from builtin_plugins.catalog import data\n"
        "data.builtin_providers(); data.compat_providers(); data.catalog_providers('google.json')\n"
        "data.key_only_providers()\n"
        "import builtin_plugins.catalog, builtin_plugins.catalog.known_keys, builtin_plugins.providers\n"
        "assert 'genai_prices' not in sys.modules, 'the host imported genai_prices'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for path in [*(ROOT / "atomic_host").rglob("*.py"), *(ROOT / "builtin_plugins").rglob("*.py")]:
        assert "genai_prices" not in path.read_text("utf-8"), path


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=30), inner, max_size=6),
    max_leaves=40,
)


@given(_json)
def test_the_formatter_round_trips_any_json(value: Any) -> None:
    text = gen.dump(value)
    assert json.loads(text) == value and text.endswith("\n")
    for line in text.splitlines():
        # Only a scalar (a long string or number) may make a line longer than the width; a
        # container that does not fit is split.
        if len(line) > gen.WIDTH:
            assert not line.rstrip(",").endswith(("}", "]")), line


def test_pi_models_parser_reads_limits_and_ignores_the_rest(tmp_path: Path) -> None:
    ts = tmp_path / "models.generated.ts"
    ts.write_text(
        "export const MODELS = {\n"
        '\t"xai": {\n'
        '\t\t"grok-4": {\n'
        '\t\t\tid: "grok-4",\n'
        "\t\t\tcost: {\n\t\t\t\tinput: 3,\n\t\t\t},\n"
        "\t\t\tcontextWindow: 256000,\n"
        "\t\t\tmaxTokens: 64000,\n"
        "\t\t},\n"
        '\t\t"weird": {\n\t\t\tcontextWindow: "x",\n\t\t},\n'
        "\t},\n"
        "};\n"
    )
    assert gen.pi_models(ts) == {("xai", "grok-4"): {"contextWindow": 256000, "maxTokens": 64000}}


_ts_lines = st.lists(
    st.sampled_from(['\t"p": {', '\t\t"m": {', "\t\t\tcontextWindow: 5,", "\t\t\tmaxTokens: 7,", "};"])
    | st.text(max_size=40),
    max_size=30,
)


@given(_ts_lines)
def test_pi_models_parser_survives_hostile_text(lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "models.generated.ts"
        path.write_bytes("\n".join(lines).encode("utf-8", "replace"))
        parsed = gen.pi_models(path)
    assert all(set(limits) <= {"contextWindow", "maxTokens"} for limits in parsed.values())
    assert all(isinstance(v, int) and v >= 0 for limits in parsed.values() for v in limits.values())


@pytest.mark.parametrize("name", gen.FILES)
def test_context_windows_agree_with_genai_prices_or_say_why_not(name: str) -> None:
    """Where genai-prices has a context window, the catalog's is the same, or ``limitSources``
    names the model and says where its number comes from instead."""
    pytest.importorskip("genai_prices", reason=NO_GENAI)
    from genai_prices.data import providers

    data = _load(name)
    explained = data["_provenance"].get("limitSources", {})
    for raw in data["providers"]:
        theirs = next((p for p in providers if p.id == gen.GENAI_PROVIDER_IDS.get(raw["id"], raw["id"])), None)
        for model in raw["models"]:
            info = theirs.find_model(model["id"], all_providers=providers) if theirs else None
            window = getattr(info, "context_window", None)
            ref = f"{raw['id']}/{model['id']}"
            if window is not None and window != model["contextWindow"]:
                assert ref in explained, f"{ref}: {model['contextWindow']} here, {window} in genai-prices"
