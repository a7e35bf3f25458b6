"""Prices on one basis (issue 22, item 7): every price dated, sourced, with its market and confidence;
one market and one snapshot per basis; unpriced cards said, never dropped; the sanity order of twins,
SXM/PCIe and generations on each basis; --prices validated; consumer cards marked."""

from __future__ import annotations

import pytest

from gpuarena.analysis.verbs import cost
from gpuarena.data import catalog
from gpuarena.data import prices as P
from gpuarena.errors import UserError
from gpuarena.report.text import cost as cost_text

# (better, worse): the same silicon with more memory, bandwidth or the SXM form factor, or a newer card at
# least as good on every paper figure.  On one basis the better one must not be cheaper unless flagged.
PAIRS = [("A100 80GB SXM4", "A100 80GB PCIe"), ("A100 80GB SXM4", "A100 40GB SXM4"),
         ("A100 80GB PCIe", "A100 40GB PCIe"), ("A100 40GB SXM4", "A100 40GB PCIe"),
         ("H100 80GB SXM5", "H100 80GB PCIe"), ("H200", "H100 80GB SXM5"), ("B200", "H200"),
         ("V100 32GB", "V100 16GB"), ("L40S", "L4"), ("A800 80GB", "A800 40GB")]


def _g(name):
    return catalog.match(name)


@pytest.mark.parametrize("basis", P.BASES)
def test_every_catalog_price_is_dated_sourced_and_from_one_snapshot(basis):
    got = [g.price(basis) for g in catalog.load() if g.price(basis).usd is not None]
    assert len(got) >= 7
    for p in got:
        assert p.source and P._DATE.match(p.date) and p.confidence in P.CONFIDENCE
        assert p.market == P.CATALOG_MARKET[basis] and p.basis == basis
    # one provider snapshot per basis: the same provider text and the same date on every card
    assert len({(p.source.rpartition(": ")[0], p.date) for p in got}) == 1


def test_the_cards_the_issue_names_are_priced_on_the_default_basis():
    """L40S, L4 and the A100 40GB had no price and never appeared per dollar: on the cloud basis they have one."""
    assert P.DEFAULT_BASIS == "cloud"
    for name, usd in (("L40S", 1.861), ("L4", 0.8048), ("A100 40GB SXM4", 2.7447), ("H200", 7.912)):
        assert _g(name).price("cloud").usd == usd
    # the China-market parts are on no western cloud: unpriced, with the reason
    for name in ("H800", "H20", "A800 80GB"):
        p = _g(name).price("cloud")
        assert p.usd is None and "China-market" in p.source and P.fmt(p) == "unpriced"


@pytest.mark.parametrize("basis", P.BASES)
def test_twins_and_form_factors_are_priced_in_order_on_one_basis(basis):
    gpus = catalog.priced(basis=basis)
    by = {g.name: g for g in gpus}
    flags = {(f["gpu"], f["cheaper_than"]) for f in P.order_flags(gpus, basis)}
    compared = 0
    for better, worse in PAIRS:
        a, b = by[_g(better).name], by[_g(worse).name]
        assert P.at_least_as_good(a, b), (better, worse)
        pa, pb = a.price(basis).usd, b.price(basis).usd
        if pa is None or pb is None:
            continue
        compared += 1
        assert pa >= pb or (a.name, b.name) in flags, (basis, better, worse)
    assert compared >= 3


def test_the_h200_below_h100_symptom_is_gone_on_one_basis():
    """It came from a 2025 China street price (H200 $27,000) set beside a 2023 estimate (H100 $27,500)."""
    h200, h100 = _g("H200"), _g("H100 80GB SXM5")
    assert h200.price("cloud").usd > h100.price("cloud").usd          # one AWS snapshot: in order
    assert h200.price("purchase").usd is None                          # not in Lambda's 2023 list: unpriced
    assert h100.price("purchase").usd > _g("H100 80GB PCIe").price("purchase").usd   # SXM above PCIe


def test_a_price_against_paper_is_flagged(tmp_path):
    """The old mixed prices, given as a street-price file, are flagged on that table."""
    f = tmp_path / "street.yaml"
    f.write_text("prices:\n"
                 "  - {gpu: H200, purchase_usd: 27000, market: street, source: old catalog, date: '2025'}\n"
                 "  - {gpu: H100 SXM, purchase_usd: 27500, market: street, source: old catalog, date: '2023'}\n")
    gpus = catalog.priced(catalog.load_prices(str(f)), basis="purchase")
    assert [(f["gpu"], f["cheaper_than"]) for f in P.order_flags(gpus, "purchase")] == \
        [("NVIDIA H200 SXM 141GB", "NVIDIA H100 80GB SXM5")]
    # one market per table: the file's street prices replace the basis; the catalog's list prices drop out
    priced = {g.name for g in gpus if g.purchase.usd is not None}
    assert priced == {"NVIDIA H200 SXM 141GB", "NVIDIA H100 80GB SXM5"}
    why = next(g for g in gpus if g.name == "NVIDIA A100 80GB SXM4").purchase.source
    assert "only a list price ($16,250" in why and "this table is street prices" in why


def test_known_flags_on_the_cloud_basis_are_the_v100s():
    """AWS still rents the V100 above the A100: said beside any per-dollar figure, not hidden."""
    flags = P.order_flags(catalog.priced(basis="cloud"), "cloud")
    assert {(catalog.match(f["gpu"]).short, catalog.match(f["cheaper_than"]).short) for f in flags} == {
        ("A100 40GB SXM4", "V100 16GB SXM2"), ("A100 40GB SXM4", "V100 32GB SXM2"),
        ("A100 80GB SXM4", "V100 32GB SXM2")}
    assert P.order_flags(catalog.priced(basis="purchase"), "purchase") == []


def test_consumer_cards_are_marked_and_can_be_left_out():
    assert _g("RTX 4090").segment == "consumer" and _g("RTX 4090").consumer
    assert [g.short for g in catalog.load() if g.consumer] == ["RTX 4090"]
    dc = catalog.priced(basis="cloud", include_consumer=False)
    assert "NVIDIA GeForce RTX 4090" not in {g.name for g in dc} and len(dc) == len(catalog.load()) - 1
    assert [e["gpu"] for e in catalog.consumer_excluded()] == ["NVIDIA GeForce RTX 4090"]
    assert "--include-consumer" in catalog.consumer_excluded()[0]["reason"]


def test_low_confidence_prices_never_pick_a_winner():
    assert not P.Price(10500, "x", "2023", "street", "low").rankable
    assert P.Price(3.43, "x", "2026-01", "cloud", "high").rankable
    assert not P.unpriced("cloud", "none").rankable


@pytest.mark.parametrize("body,message", [
    ("prices:\n  - {gpu: L4, purchase_usd: 3000, source: x, date: last year}\n", "date"),
    ("prices:\n  - {gpu: L4, purchase_usd: 3000, source: x, date: '2024', market: auction}\n", "market"),
    ("prices:\n  - {gpu: L4, purchase_usd: 3000, source: x, date: '2024', confidence: sure}\n", "confidence"),
    ("prices:\n  - {gpu: L4, purchase_usd: 3000, source: x, date: '2024', market: list}\n"
     "  - {gpu: L40S, purchase_usd: 9000, source: y, date: '2024', market: street}\n", "one market per file"),
    ("prices:\n  - {gpu: L4, source: x, date: '2024'}\n", "purchase_usd and/or cloud_usd_per_hr"),
    ("prices:\n  - {gpu: Z9000, cloud_usd_per_hr: 1, source: x, date: '2024'}\n", "not in the catalog"),
    ("prices:\n  - {gpu: L4, cloud_usd_per_hr: 1, market: street, source: x, date: '2024'}\n", "is for purchase_usd"),
    # YAML's true is not $1 (pydantic's lax float took it as 1.0)
    ("prices:\n  - {gpu: H200, cloud_usd_per_hr: true, source: x, date: '2024'}\n", "not true/false"),
    ("prices:\n  - {gpu: H200, purchase_usd: yes, source: x, date: '2024'}\n", "not true/false"),
    # one card twice on one basis, under two spellings: the second silently replaced the first
    ("prices:\n  - {gpu: H200, cloud_usd_per_hr: 5, source: x, date: '2024'}\n"
     "  - {gpu: h200 sxm, cloud_usd_per_hr: 1, source: y, date: '2024'}\n", "priced twice"),
])
def test_price_file_is_validated(tmp_path, body, message):
    f = tmp_path / "p.yaml"
    f.write_text(body)
    with pytest.raises(UserError, match=message):
        catalog.load_prices(str(f))


def test_one_card_may_have_a_purchase_and_a_cloud_price_in_two_entries(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("prices:\n  - {gpu: H200, cloud_usd_per_hr: 5, source: x, date: '2024'}\n"
                 "  - {gpu: h200 sxm, purchase_usd: 30000, source: y, date: '2024'}\n")
    over = catalog.load_prices(str(f))
    assert {b: p.usd for b, p in over[catalog.match("H200").name].items()} == {"cloud": 5, "purchase": 30000}


def test_a_cloud_override_keeps_its_source_and_date(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("prices:\n  - {gpu: H100 PCIe, cloud_usd_per_hr: 3.29, source: 'Lambda: 1x H100 PCIe', "
                 "date: 2026-09-20, confidence: high}\n")
    g = next(g for g in catalog.priced(catalog.load_prices(str(f)), basis="cloud") if g.name.endswith("H100 80GB PCIe"))
    assert (g.cloud.usd, g.cloud.date, g.cloud.market) == (3.29, "2026-09-20", "cloud")
    assert g.cloud.label == "Lambda: 1x H100 PCIe [2026-09-20, cloud, high confidence]"


def test_cost_keeps_unpriced_cards_and_one_market(store):
    out = cost.cost_table(store, basis="cloud")
    a800 = [r for r in out.rows if r.gpu == "NVIDIA A800 40GB SXM4"]
    assert a800 and all(r.price_usd is None and r.per_dollar is None for r in a800)
    assert all(r.purchase_usd is None and r.price_market == "cloud" for r in out.rows)
    md = cost_text.render(out, "md")
    assert "unpriced: A800 40GB SXM4" in md and "| unpriced |" in md and "$/GPU-h" in md and "price $" not in md
    with pytest.raises(UserError, match="--price-basis 'rent'"):
        cost.cost_table(store, basis="rent")


@pytest.mark.parametrize("args,message", [
    (("cost", "--price-basis", "rent"), "--price-basis 'rent'"),
    (("cost", "--pue", "1.2"), "--pue: for --price-basis purchase"),
    (("gpus", "--price-basis", "spot"), "--price-basis 'spot'"),
])
def test_cli_refuses_bad_price_options_in_one_line(cli, tmp_path, args, message):
    p = cli(*args, "--db", str(tmp_path / "absent.db")) if args[0] == "cost" else cli(*args)
    assert p.returncode == 2 and message in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_cli_gpus_shows_one_basis_with_unpriced(cli):
    p = cli("gpus", "--price-basis", "purchase", "--format", "md")
    assert p.returncode == 0, p.stderr
    assert "| purchase $ |" in p.stdout and "cloud $/GPU-h" not in p.stdout
    h200 = next(line for line in p.stdout.splitlines() if line.startswith("| NVIDIA H200"))
    assert "| unpriced | unpriced: not in Lambda's 2023-02-14" in h200


def test_a_whole_list_file_prices_the_table_from_one_provider():
    """Lambda's on-demand list (shipped as an example): with whole_list, a card Lambda does not rent is
    unpriced, never priced from the catalog's AWS list; SXM above PCIe, 80GB above 40GB, no flags."""
    over = catalog.load_prices(str(catalog.DATA / "lambda_cloud_prices.yaml"))
    assert over.whole == {"cloud"}
    gpus = catalog.priced(over, basis="cloud")
    by = {g.short: g.cloud for g in gpus}
    assert {k for k, p in by.items() if p.usd} == {"A100 40GB SXM4", "A100 80GB SXM4", "H100 80GB SXM5",
                                                    "H100 80GB PCIe", "V100 16GB SXM2", "B200 (HGX, 1000 W)"}
    assert len({(p.source.rpartition(": ")[0], p.date) for p in by.values() if p.usd}) == 1
    assert by["H100 80GB SXM5"].usd > by["H100 80GB PCIe"].usd and by["A100 80GB SXM4"].usd > by["A100 40GB SXM4"].usd
    assert "which replaces the catalog's cloud prices" in by["H200 SXM 141GB"].source
    assert P.order_flags(gpus, "cloud") == []
    # the purchase basis is untouched by a cloud-only list
    assert next(g for g in gpus if g.short == "A100 80GB SXM4").purchase.usd == 16250


def test_cli_bad_price_file_is_one_line_exit_2(cli, tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("prices:\n  - {gpu: L4, purchase_usd: 3000, source: x, date: soon}\n")
    p = cli("cost", "--price-basis", "purchase", "--prices", str(f), "--db", str(tmp_path / "absent.db"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f"--prices {f}: prices.0.date" in p.stderr and "YYYY" in p.stderr


def test_a_price_files_escape_codes_never_reach_the_terminal(cli, store, tmp_path):
    """A --prices source holding ESC (a terminal escape), a bidi control or a newline is shown
    as printable text everywhere: the cost table's notes, its JSON, the one-line error that names it."""
    f = tmp_path / "p.yaml"
    f.write_text('prices:\n  - {gpu: "H100 80GB SXM5", purchase_usd: 30000, market: list,\n'
                 '     source: "Acme\\e[31m red\\u202e\\nsecond line: H100", date: "2026-01"}\n')
    for fmt in ("table", "md", "json"):
        out = cli("cost", "--price-basis", "purchase", "--prices", str(f), "--db", store.path, "-f", fmt)
        assert out.returncode == 0, out.stderr
        assert "Acme" in out.stdout and "\x1b" not in out.stdout + out.stderr and "\u202e" not in out.stdout
        assert "\\u001b" not in out.stdout and "\\u202e" not in out.stdout   # nor in JSON's escapes
    twice = tmp_path / "twice.yaml"
    twice.write_text(f.read_text() + '  - {gpu: "H100 80GB SXM5", purchase_usd: 1, source: "x\\e[0m", '
                                      'date: "2026"}\n')
    out = cli("cost", "--price-basis", "purchase", "--prices", str(twice), "--db", store.path)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "priced twice" in out.stderr and "\x1b" not in out.stderr
