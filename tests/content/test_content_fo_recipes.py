"""The recipes added for F&O traders (issue 20 §2): option chain, IV and Greeks, spreads, entry
with a stop and a target, cancel everything, and the fat-finger guard in prepare.md. Worked
examples are recomputed through the `calc` tool in test_content_worked_examples.py."""

import re

import pytest
from content_helpers import (
    catalog_root,
    links,
    mode_pairs,
    numbered_steps,
    sections,
    split_frontmatter,
    subsection,
)

NEW = (
    "derivatives/option-chain.md",
    "derivatives/greeks.md",
    "derivatives/spreads.md",
    "orders/entry-stop-target.md",
    "orders/cancel-all.md",
)


def read(name: str) -> str:
    return (catalog_root() / name).read_text(encoding="utf-8")


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def steps_of(name: str) -> list[str]:
    body = split_frontmatter(read(name)).body
    return [flat(item) for _, item, _ in numbered_steps(sections(body)["Steps"])]


def example(name: str) -> tuple[list[dict[str, str]], str]:
    """The table rows and the text of a recipe's '### Worked example'."""
    text = subsection(split_frontmatter(read(name)).body, "Worked example")
    rows = [line for line in text.split("\n") if line.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    table = [
        dict(zip(header, (c.strip() for c in r.strip("|").split("|")), strict=True))
        for r in rows[2:]
    ]
    return table, text


def printed(text: str, label: str) -> str:
    found = re.search(rf"^- {re.escape(label)} = (-?[\d.]+)", text, re.M)
    assert found, f"no '- {label} = ...' line"
    return found.group(1)


@pytest.mark.parametrize("name", NEW)
def test_new_recipe_is_linked_from_index_and_its_topic(name):
    assert name in links(read("index.md"))
    topic, recipe = name.split("/")
    assert recipe in links(read(f"{topic}/SKILL.md"))


def test_greeks_template_repeats_the_example():
    _, text = example("derivatives/greeks.md")
    template = read("derivatives/greeks.md").split("Report template:")[1].split("```")[1]
    for label in ("IV", "delta", "gamma"):
        assert printed(text, label) in template, label
    assert "r = 6.50%; q = 0.00% (assumptions)" in template


def test_greeks_recipe_states_inputs_and_limits():
    steps = " ".join(steps_of("derivatives/greeks.md"))
    for phrase in ("mid", "525,600", "15:30 IST", "risk-free rate", "dividend yield", "bisection"):
        assert phrase in steps, phrase
    limits = flat(read("derivatives/greeks.md")).split("When not to trust them:")[1]
    assert "Illiquid strikes" in limits and "Near expiry" in limits


# ------------------------------------------------------------- option chain


def test_option_chain_example_recomputes():
    rows, text = example("derivatives/option-chain.md")
    calls = sum(int(r["CE oi"]) for r in rows)
    puts = sum(int(r["PE oi"]) for r in rows)
    assert printed(text, "PCR (OI, strikes shown)") == f"{puts / calls:.2f}"
    d_calls = sum(int(r["CE oi"]) - int(r["CE oi prev"]) for r in rows)
    d_puts = sum(int(r["PE oi"]) - int(r["PE oi prev"]) for r in rows)
    assert f"- Change in OI: calls {d_calls:+d}, puts {d_puts:+d}" in text
    warnings = []
    for r in rows:
        for side in ("CE", "PE"):
            bid, ask = float(r[f"{side} bid"]), float(r[f"{side} ask"])
            pct = (ask - bid) / ((ask + bid) / 2) * 100
            if pct > 1:
                warnings.append(
                    f"- Liquidity warning: {r['strike']} {side} spread {ask - bid:.2f} = "
                    f"{pct:.2f}% of mid"
                )
    assert warnings
    assert sorted(re.findall(r"^- Liquidity warning:.*$", text, re.M)) == sorted(warnings)


def test_option_chain_uses_full_underlying_search_and_batched_quotes():
    steps = steps_of("derivatives/option-chain.md")
    search = next(s for s in steps if "`filter_on` `underlying`" in s)
    assert "`verbosity` `full`" in search and "`total`" in search
    quote = next(s for s in steps if "Quote the chosen contracts" in s)
    assert "500" in quote and "1,000" in quote and "`oi`" in quote and "`volume`" in quote
    stale = sections(split_frontmatter(read("derivatives/option-chain.md")).body)[
        "Stale or missing data"
    ]
    assert "Outside market hours" in stale


# ------------------------------------------------------------- spreads


def test_spread_places_the_hedge_first_and_the_short_after_its_fill():
    steps = steps_of("derivatives/spreads.md")
    order = next(s for s in steps if "Order of the legs" in s)
    assert "the long (hedge) leg first" in order and "only after the hedge is `COMPLETE`" in order
    funds = next(s for s in steps if s.startswith("5. Funds"))
    assert "only after the hedge has filled" in funds and "does not expose" in funds
    resolve = next(s for s in steps if "Resolve every leg" in s)
    assert "`freeze_quantity`" in resolve and "`lot_size`" in resolve
    places = [i for i, s in enumerate(steps) if ("orders", "place") in mode_pairs(s)]
    assert len(places) == 2
    between = " ".join(steps[places[0] + 1 : places[1]])
    assert "`COMPLETE`" in between and "filled whole lots" in between
    assert "holds the long leg alone" in steps[places[1] + 1]


# ------------------------------------------------------------- entry with a stop and a target


def test_entry_sizes_the_protection_from_the_fill():
    steps = steps_of("orders/entry-stop-target.md")
    writes = [i for i, s in enumerate(steps) if mode_pairs(s) and "place" in s and "`tag`" in s]
    assert writes, "no entry place step"
    after = " ".join(steps[writes[0] + 1 :])
    assert "`filled_quantity`" in after and "never from the order's `quantity`" in after
    assert ("gtt", "place") in mode_pairs(after)
    text = flat(read("orders/entry-stop-target.md"))
    assert "`meta.demat_consent`" in text and "TPIN" in text
    assert "T+1 shares, not demat shares" in text


# ------------------------------------------------------------- cancel everything


def test_cancel_all_lists_approves_cancels_reconciles_and_reports():
    steps = steps_of("orders/cancel-all.md")
    text = " ".join(steps)
    assert ("orders", "list") in mode_pairs(steps[0]) and ("gtt", "list") in mode_pairs(steps[1])
    summary = next(s for s in steps if "Present one summary" in s)
    assert "numbered list" in summary and 'no "cancel all" or "exit all" call' in summary
    cancel = next(s for s in steps if ("orders", "cancel") in mode_pairs(s))
    assert ("gtt", "delete") in mode_pairs(cancel) and "own `variety`" in cancel
    assert "Reconcile" in text and "Report what is left" in text
    body = split_frontmatter(read("orders/cancel-all.md")).body
    assert body.index("**Stop for approval.**") < body.index("Cancel each approved item")


# ------------------------------------------------------------- fat-finger guard (prepare.md)


def test_prepare_has_a_fat_finger_guard_with_defaults():
    step = next(s for s in steps_of("orders/prepare.md") if "Fat-finger guard" in s)
    for phrase in ("`net` (default 25%)", "5 times", "usual size", "5% from `last_price`"):
        assert phrase in step, phrase
    assert "today's trades" in step and "holding's `quantity`" in step
