"""advise's rows priced and explained: the GPU count (scaling from the interconnect model for
training, independent copies for inference), the budget, the price basis, and the text that says
what would change the ranking.  analysis/verbs/advise.py ranks; this finishes its rows."""

from __future__ import annotations

from gpuarena.analysis.physics import whatif
from gpuarena.data import catalog
from gpuarena.errors import UserError
from gpuarena.workloads import registry


def scale_and_price(rows, workload, gpus, budget, hours, excluded, batch_size, basis) -> None:
    from gpuarena.analysis.verbs.cost import per_dollar

    keep = []
    for x in rows:
        g = x["g"]
        scaling = 1.0
        if gpus > 1:
            if workload in whatif.gradient_sizes():
                p = whatif.predict(workload, g.name, [gpus], throughput=x["throughput"], batch_size=batch_size)
                scaling = p.rows[0].efficiency
            elif not registry.get(workload).trains:
                x["note"] = "; ".join(filter(None, [x["note"], f"{gpus} independent copies (no gradient "
                                                                 "exchange): linear"]))
            else:
                raise UserError(f"--gpus {gpus}: gpuarena has no interconnect model for {workload}'s gradients")
        total = x["throughput"] * gpus * scaling
        purchase = g.purchase.usd * gpus if g.purchase.usd else None
        cloud = g.cloud.usd * gpus * hours if (g.cloud.usd and hours) else None
        if budget is not None:
            spend = cloud if hours else purchase
            if spend is None or spend > budget:
                excluded.append({"gpu": g.name, "reason": f"no {'cloud' if hours else 'purchase'} price to check "
                                 "against the budget" if spend is None else f"${spend:,.0f} > budget ${budget:,.0f}"})
                continue
        price = g.price(basis)
        x.update({"scaling": scaling, "throughput": total, "low": x["low"] * gpus * scaling,
                  "high": x["high"] * gpus * scaling, "rank_value": x["rank_value"] * gpus * scaling,
                  "price_usd": price.usd * gpus if price.usd else None, "price_basis": basis,
                  "price_source": price.label if price.usd else f"unpriced: {price.source}",
                  "price_rankable": bool(price.usd) and price.rankable,
                  "per_dollar": per_dollar(total, price) / gpus if price.usd else None,
                  "items_per_s_per_1000usd": total / purchase * 1000 if purchase else None,
                  "cloud_usd_for_hours": cloud,
                  "items_per_joule": x["throughput"] / g.tdp_w if g.tdp_w else None, "memory_gb": g.memory_gb})
        keep.append(x)
    rows[:] = keep


PER_DOLLAR_TEXT = {"cloud": "per $ of cloud time (on-demand $/GPU-hour)", "purchase": "items/s per $1,000 of purchase"}


def explain(rows: list[dict], workload: str, gpus: int, budget: float | None, cls: str, fallback: str) -> str:
    fast = rows[0]
    s = (f"For {workload} on {gpus} GPU(s){f' within ${budget:,.0f}' if budget else ''}, ranked on {cls} figures: "
         f"the {catalog.match(fast['gpu']).short} is fastest at {fast['throughput']:,.0f} {fast['unit']} "
         f"({fast['basis']}, {fast['source']}).")
    if fallback:
        s += f" {fallback.capitalize()}."
    if len(rows) > 1:
        nxt = rows[1]
        s += (f" What would change it: the {catalog.match(nxt['gpu']).short} ({nxt['basis']}, "
              f"{nxt['throughput'] / fast['throughput']:.0%} of it")
        s += (f", band up to {nxt['high']:,.0f}) measuring above {fast['low']:,.0f}." if nxt["basis"] == "projected"
              else ") overtaking it in a measurement at the same settings.")
    priced = [x for x in rows if x.get("per_dollar") and x.get("price_rankable")]
    if priced:
        v = max(priced, key=lambda x: x["per_dollar"])
        basis = v["price_basis"]
        price = (f"${v['price_usd']:,.2f} per hour" if basis == "cloud" else f"${v['price_usd']:,.0f}")
        s += (f" Most throughput {PER_DOLLAR_TEXT[basis]}: the {catalog.match(v['gpu']).short}, "
              f"{v['throughput']:,.0f} {v['unit']} for {price} ({v['price_source']}) = {v['per_dollar']:,.0f} "
              f"{'items per $' if basis == 'cloud' else 'per $1,000'} ({v['basis']}), at "
              f"{v['throughput'] / fast['throughput']:.0%} of the fastest's speed.")
    unpriced = [catalog.match(x["gpu"]).short for x in rows if not x.get("price_usd")]
    if unpriced:
        s += f" Unpriced on this basis: {', '.join(unpriced)}."
    if fast["basis"] == "projected":
        s += " The top figure is a projection: measure before buying."
    return s
