#!/usr/bin/env python3
"""Rewrite the prices of the built-in model catalog from genai-prices (build time only).

The host ships its catalog as static JSON (``builtin_plugins/catalog/{catalog,google,compat}.json``)
and never imports genai-prices. This script reads genai-prices' generated data module
(``genai_prices.data``, pydantic's maintained price list) and rewrites every model's ``cost``:

* the price in effect on the ``--as-of`` date (UTC; default today) — date-gated prices
  (``StartDateConstraint``) are resolved for that day;
* a time-of-day price (DeepSeek's peak/off-peak windows) cannot be expressed in the catalog, so
  the highest rate of the day is taken: an upper bound, like genai-prices' own comments say;
* batch variants and non-token units (web searches, audio, storage) are ignored: the host bills
  text tokens only;
* tiered prices become the catalog's ``tiers`` (``inputTokensAbove``: the rate for the whole
  request once the prompt exceeds it, the same cliff model genai-prices uses); a tier at or above
  the model's ``contextWindow`` can never apply and is left out.

A model genai-prices does not know keeps its curated cost, and only if ``_provenance.curatedPrices``
names it with the source of the number; otherwise the script fails. ``_provenance.priceSources``
records, per model, which genai-prices record (or curated source) the cost came from.

Context windows and output limits are curated (genai-prices has no output limits and rounds some
context windows); ``--limits PATH`` prints them next to genai-prices' context windows and pi's
``packages/ai/src/models.generated.ts`` (generated from models.dev) for review.

Usage::

    python scripts/update_catalog_prices.py            # rewrite the JSON, print what changed
    python scripts/update_catalog_prices.py --check    # exit 1 if the JSON is not what it would write
    python scripts/update_catalog_prices.py --limits /tmp/models.generated.ts
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

CATALOG_DIR = Path(__file__).resolve().parent.parent / "builtin_plugins" / "catalog"
FILES = ("catalog.json", "google.json", "compat.json")
# Catalog provider id -> genai-prices provider id, where they differ.
GENAI_PROVIDER_IDS = {"xai": "x-ai"}
_COST_KEYS = {
    "input": "input_mtok",
    "output": "output_mtok",
    "cacheRead": "cache_read_mtok",
    "cacheWrite": "cache_write_mtok",
}
WIDTH = 110  # the formatter puts a JSON value on one line when it fits in this many columns


class CatalogError(Exception):
    """A model has neither a genai-prices record nor a documented curated price."""


# --- reading genai-prices ---------------------------------------------------------------------


def _genai() -> tuple[list[Any], str]:
    try:
        from importlib.metadata import version

        from genai_prices.data import providers
    except ImportError as exc:  # pragma: no cover - exercised by hand
        raise SystemExit(
            "genai-prices is not installed: pip install -e '.[test]' (or pip install genai-prices)"
        ) from exc
    return providers, version("genai-prices")


def _number(value: Decimal) -> int | float:
    """A price as the JSON number it is written as (``5``, not ``5.0``; ``0.175``, not ``0.17500``)."""
    return int(value) if value == value.to_integral_value() else float(value)


def _resolve(model: Any, day: dt.date) -> tuple[Any, str]:
    """The ``ModelPrice`` of ``model`` on ``day``, and a note when a time-of-day price was folded."""
    from genai_prices.types import ModelPrice, StartDateConstraint, TimeOfDateConstraint

    if isinstance(model.prices, ModelPrice):
        return model.prices, ""
    dated = [p for p in model.prices if not isinstance(p.constraint, TimeOfDateConstraint)]
    chosen = (dated or model.prices)[0].prices  # genai-prices: with none active, the first applies
    for cond in dated:  # later entries win, as in genai-prices' get_prices
        if cond.constraint is None or (
            isinstance(cond.constraint, StartDateConstraint) and cond.constraint.start_date <= day
        ):
            chosen = cond.prices
    daily = [p.prices for p in model.prices if isinstance(p.constraint, TimeOfDateConstraint)]
    if not daily:
        return chosen, ""
    # A daily window (peak hours) on top of the base price: keep the highest rate per key.
    candidates = [chosen, *daily]
    peak = ModelPrice(
        **{
            key: max((getattr(c, key) for c in candidates if getattr(c, key) is not None), key=_base, default=None)
            for key in _COST_KEYS.values()
        }
    )
    base = _cost_dict(chosen)
    note = f"time-of-day prices: the highest (peak) rate is used; off-peak is {_short(base)}"
    return peak, note


def _base(value: Any) -> Decimal:
    return value.base if hasattr(value, "base") else value


def _short(cost: dict[str, Any]) -> str:
    return "/".join(str(cost[k]) for k in ("input", "output", "cacheRead"))


def _cost_dict(price: Any) -> dict[str, Any]:
    """genai-prices' ``ModelPrice`` as a catalog ``cost`` (with ``tiers`` when a rate is tiered)."""
    values = {ours: getattr(price, theirs, None) for ours, theirs in _COST_KEYS.items()}
    cost: dict[str, Any] = {k: _number(_base(v)) if v is not None else 0 for k, v in values.items()}
    starts = sorted({t.start for v in values.values() if hasattr(v, "tiers") for t in v.tiers})
    if starts:
        tiers = []
        for start in starts:
            tier: dict[str, Any] = {"inputTokensAbove": start}
            for key, v in values.items():
                if v is None:
                    tier[key] = 0
                elif hasattr(v, "tiers"):
                    rate = v.base
                    for t in v.tiers:  # sorted ascending; the last one at or below this start applies
                        if t.start <= start:
                            rate = t.price
                    tier[key] = _number(rate)
                else:
                    tier[key] = _number(v)
            tiers.append(tier)
        cost["tiers"] = tiers
    return cost


def genai_cost(
    providers: list[Any], provider_id: str, model_id: str, day: dt.date
) -> tuple[dict[str, Any], str] | None:
    """The catalog cost of ``provider_id/model_id`` from genai-prices on ``day`` and where it came
    from, or ``None`` when genai-prices has no such model for that provider."""
    theirs = GENAI_PROVIDER_IDS.get(provider_id, provider_id)
    provider = next((p for p in providers if p.id == theirs), None)
    if provider is None:
        return None
    model = provider.find_model(model_id, all_providers=providers)
    if model is None:
        return None
    owner = (
        provider
        if any(model is m for m in provider.models)
        else next(p for p in providers if any(model is m for m in p.models))
    )
    price, note = _resolve(model, day)
    cost = _cost_dict(price)
    one_hour = getattr(price, "cache_write_1h_mtok", None)
    if one_hour is not None and _base(one_hour) != 2 * _base(price.input_mtok):
        note = "; ".join(filter(None, [note, f"1h cache writes are {one_hour} here, the host bills 2x input"]))
    source = f"genai-prices {owner.id}/{model.id}" + (f" ({note})" if note else "")
    return cost, source


# --- rewriting the catalog ----------------------------------------------------------------------


def regenerate(data: dict[str, Any], providers: list[Any], version: str, day: dt.date) -> dict[str, Any]:
    """``data`` (one catalog file, parsed) with every cost from genai-prices, or its documented curated one."""
    out = copy.deepcopy(data)
    prov = out["_provenance"]
    curated: dict[str, str] = prov.get("curatedPrices", {})
    stale: dict[str, str] = prov.get("staleInGenaiPrices", {})
    sources: dict[str, str] = {}
    for raw in out["providers"]:
        for model in raw["models"]:
            ref = f"{raw['id']}/{model['id']}"
            found = genai_cost(providers, raw["id"], model["id"], day)
            if found is not None and ref in stale and found[0] != model.get("cost"):
                # A record known to be out of date: the curated number stays until genai-prices agrees.
                sources[ref] = f"curated (see staleInGenaiPrices); {found[1]} gives {json.dumps(found[0])}"
            elif found is not None:
                model["cost"], sources[ref] = found
                window = model.get("contextWindow")
                kept = [t for t in model["cost"].get("tiers", []) if not window or t["inputTokensAbove"] < window]
                if window and len(kept) != len(model["cost"].get("tiers", [])):
                    # A tier above the context window can never apply (e.g. a 1M-context beta's premium).
                    sources[ref] += f"; tiers above the {window:,}-token window dropped"
                    if kept:
                        model["cost"]["tiers"] = kept
                    else:
                        del model["cost"]["tiers"]
                curated.pop(ref, None)  # genai-prices has it (now): the curated number goes
                stale.pop(ref, None)
            elif ref in curated:
                sources[ref] = "curated (see curatedPrices)"
            else:
                raise CatalogError(
                    f"{ref}: genai-prices {version} has no price for it; add it to _provenance.curatedPrices "
                    "with where the number comes from"
                )
    prov["prices"] = (
        f"Costs (USD per million tokens) are generated by scripts/update_catalog_prices.py from genai-prices "
        f"{version} (pydantic's maintained price data, MIT), as in effect on {day.isoformat()}; "
        "priceSources names the record of each model; curatedPrices holds the models genai-prices lacks and "
        "staleInGenaiPrices the ones whose genai-prices record is known to be out of date, each with its source."
    )
    prov["genaiPricesVersion"] = version
    prov["pricesAsOf"] = day.isoformat()
    prov["priceSources"] = sources
    for key, value in (("curatedPrices", curated), ("staleInGenaiPrices", stale)):
        if value:
            prov[key] = value
        else:
            prov.pop(key, None)
    return out


def render(name: str, day: dt.date | None = None) -> str:
    """The text the script would write for the catalog file ``name`` (``day`` defaults to the file's
    own ``pricesAsOf``, so an unchanged genai-prices reproduces the file exactly)."""
    providers, version = _genai()
    data = json.loads((CATALOG_DIR / name).read_text("utf-8"))
    if day is None:
        day = dt.date.fromisoformat(data["_provenance"]["pricesAsOf"])
    return dump(regenerate(data, providers, version, day))


# --- the JSON formatter ----------------------------------------------------------------------


def dump(value: Any) -> str:
    """JSON with two-space indents where a value that fits in ``WIDTH`` columns stays on one line."""
    return _fmt(value, 0) + "\n"


def _fmt(value: Any, indent: int, used: int = 0, trail: int = 0) -> str:
    """``value`` at ``indent`` spaces, ``used`` columns of the line already taken (by its key) and
    ``trail`` after it (a comma)."""
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or not value or indent + used + len(flat) + trail <= WIDTH:
        return flat
    pad = " " * (indent + 2)
    last = len(value) - 1
    if isinstance(value, dict):
        items = []
        for i, (k, v) in enumerate(value.items()):
            key = json.dumps(k, ensure_ascii=False) + ": "
            items.append(pad + key + _fmt(v, indent + 2, len(key), int(i < last)))
    else:
        items = [pad + _fmt(v, indent + 2, 0, int(i < last)) for i, v in enumerate(value)]
    close = "}" if isinstance(value, dict) else "]"
    return ("{" if close == "}" else "[") + "\n" + ",\n".join(items) + "\n" + " " * indent + close


# --- limits review -----------------------------------------------------------------------------


def pi_models(path: Path) -> dict[tuple[str, str], dict[str, int]]:
    """``(provider, model id) -> {contextWindow, maxTokens}`` from pi's models.generated.ts."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    provider = model = None
    for line in path.read_text("utf-8").splitlines():
        if m := re.match(r'^\t"([^"]+)": \{$', line):
            provider = m.group(1)
        elif m := re.match(r'^\t\t"([^"]+)": \{$', line):
            model = m.group(1)
        elif (m := re.match(r"^\t\t\t(contextWindow|maxTokens): (\d+),$", line)) and provider and model:
            out.setdefault((provider, model), {})[m.group(1)] = int(m.group(2))
    return out


def limits_report(pi_path: Path | None) -> list[str]:
    """One row per model: our context window and output limit, genai-prices' context window, pi's."""
    providers, _ = _genai()
    pi = pi_models(pi_path) if pi_path else {}
    rows = ["| model | contextWindow | genai-prices | pi | maxTokens | pi |", "|---|---|---|---|---|---|"]
    for name in FILES:
        for raw in json.loads((CATALOG_DIR / name).read_text("utf-8"))["providers"]:
            for model in raw["models"]:
                gp = next((p for p in providers if p.id == GENAI_PROVIDER_IDS.get(raw["id"], raw["id"])), None)
                info = gp.find_model(model["id"], all_providers=providers) if gp else None
                theirs = pi.get((raw["id"], model["id"]), {})
                genai_window = getattr(info, "context_window", None)
                rows.append(
                    f"| {raw['id']}/{model['id']} | {model.get('contextWindow')} | {genai_window} "
                    f"| {theirs.get('contextWindow')} | {model.get('maxTokens')} | {theirs.get('maxTokens')} |"
                )
    return rows


# --- command line -------------------------------------------------------------------------------


def _changes(name: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    old = {f"{p['id']}/{m['id']}": m.get("cost") for p in before["providers"] for m in p["models"]}
    rows = []
    for p in after["providers"]:
        for m in p["models"]:
            ref = f"{p['id']}/{m['id']}"
            if old.get(ref) != m["cost"]:
                rows.append(f"| {name} | {ref} | {json.dumps(old.get(ref))} | {json.dumps(m['cost'])} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or ``--check``) the catalog files; print a before/after table of changed costs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file would change")
    parser.add_argument("--as-of", type=dt.date.fromisoformat, help="price date (default: today, UTC)")
    parser.add_argument("--limits", type=Path, metavar="MODELS_GENERATED_TS", help="print the limits review table")
    args = parser.parse_args(argv)
    if args.limits:
        print("\n".join(limits_report(args.limits)))
        return 0
    providers, version = _genai()
    day = args.as_of or dt.datetime.now(dt.UTC).date()
    stale = False
    print("| file | model | before | after |\n|---|---|---|---|")
    for name in FILES:
        path = CATALOG_DIR / name
        text = path.read_text("utf-8")
        before = json.loads(text)
        after = regenerate(before, providers, version, day)
        recorded = (
            before.get("_provenance", {}).get("pricesAsOf") if isinstance(before.get("_provenance"), dict) else None
        )
        if recorded and not args.as_of:
            # Same prices on the recorded day: keep that date rather than churn the file daily.
            same_day = regenerate(before, providers, version, dt.date.fromisoformat(recorded))
            if (
                _changes(name, same_day, after) == []
                and same_day["_provenance"]["priceSources"] == after["_provenance"]["priceSources"]
            ):
                after = same_day
        for row in _changes(name, before, after):
            print(row)
        new_text = dump(after)
        if new_text != text:
            stale = True
            if not args.check:
                path.write_text(new_text, "utf-8")
    if args.check and stale:
        print("the catalog is not what genai-prices gives: run scripts/update_catalog_prices.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
