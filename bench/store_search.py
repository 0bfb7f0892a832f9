"""Search latency of the user-skill store at scale.

    python bench/store_search.py [--n 100000] [--repeat 30] [--keep DIR]

Builds a store of N synthetic live skills in a temporary directory (one transaction through
``human.import_skills``: validation, FTS triggers and an audit row per skill included), then
times ``Store.search`` over a fixed set of queries and prints p50/p99 per query, with ratios
against two baselines measured on the same store in the same run: a primary-key lookup
(``SELECT name FROM skills WHERE name = ?``) and ``list_live(20)``.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

from kite_skills.store import Store, human

TOPICS = [
    "fund",
    "margin",
    "position",
    "holdings",
    "order",
    "review",
    "alert",
    "tax",
    "sip",
    "rebalance",
    "dividend",
    "options",
    "futures",
    "gtt",
    "basket",
    "ledger",
]
QUERIES = [
    ("rare word", "zymurgy"),
    ("topic word", "rebalance"),
    ("common word", "check"),
    ("two words", "margin review"),
    ("prefix", "divid"),
    ("name-like", "compare-funds"),
    ("hostile syntax", '"unbalanced (AND NEAR( -x a*'),
    ("no match", "nonexistentword"),
]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size)}
    return sorted(words)


def synthetic(n: int, seed: int = 7) -> Iterator[tuple[str, str, str]]:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))  # Zipf-like
    common = ["check", "the", "and", "before", "then", "compare", "funds", "price"]
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        name = f"{topic}-{i}"
        words = rng.choices(vocab, cum_weights=weights, k=rng.randint(6, 14))
        description = f"When to {rng.choice(common)} {topic}: " + " ".join(words)
        lines = []
        for step in range(rng.randint(4, 12)):
            step_words = rng.choices(vocab, cum_weights=weights, k=rng.randint(5, 15))
            lines.append(f"{step + 1}. {rng.choice(common)} " + " ".join(step_words))
        if i % 5000 == 0:
            lines.append("Mind the zymurgy.")
        yield name, description, "# " + topic.title() + "\n\n" + "\n".join(lines) + "\n"


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm the page cache and statement cache
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=100_000, help="how many skills (default 100000)")
    ap.add_argument("--repeat", type=int, default=30, help="timed runs per query (default 30)")
    ap.add_argument("--keep", metavar="DIR", help="build the store in DIR and keep it")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep or tmp) / "skills.db"
        if path.exists():
            raise SystemExit(f"{path} exists; choose an empty --keep directory")
        started = time.perf_counter()
        with Store.open(path) as store:
            added = human.import_skills(store, synthetic(args.n), via="cli", who="bench")
        build_s = time.perf_counter() - started
        size_mb = path.stat().st_size / 1e6
        print(f"built {added} live skills in {build_s:.1f} s ({size_mb:.0f} MB file)")
        print(f"sqlite {sqlite3.sqlite_version}, {args.repeat} timed runs per row\n")

        with Store.open(path) as store, closing(sqlite3.connect(path)) as raw:
            step = max(1, args.n // 50)
            names = [f"{TOPICS[i % len(TOPICS)]}-{i}" for i in range(0, args.n, step)]
            lookup = iter(names * (args.repeat + 1))
            rows: list[tuple[str, int, list[float]]] = [
                (
                    "baseline: SELECT name WHERE name = ?",
                    1,
                    timed(
                        lambda: raw.execute(
                            "SELECT name FROM skills WHERE name = ?", (next(lookup),)
                        ).fetchone(),
                        args.repeat,
                    ),
                ),
                ("baseline: list_live(20)", 20, timed(lambda: store.list_live(20), args.repeat)),
            ]
            for label, q in QUERIES:
                hits = len(store.search(q, 100))
                rows.append(
                    (
                        f"search {label}: {q!r}",
                        hits,
                        timed(lambda q=q: store.search(q, 20), args.repeat),
                    )
                )
            all_search = [s for label, _, ss in rows if label.startswith("search") for s in ss]

        base_pk = statistics.median(rows[0][2])
        base_list = statistics.median(rows[1][2])
        width = max(len(r[0]) for r in rows)
        print(
            f"{'query':<{width}}  {'hits':>5}  {'p50 ms':>8}  {'p99 ms':>8}"
            f"  {'p50/pk':>8}  {'p50/list':>8}"
        )
        for label, hits, samples in rows:
            p50 = p(samples, 0.5)
            print(
                f"{label:<{width}}  {hits:>5}  {p50:>8.3f}  {p(samples, 0.99):>8.3f}"
                f"  {p50 / base_pk:>8.1f}  {p50 / base_list:>8.1f}"
            )
        print(
            f"\nall search queries together: p50 {p(all_search, 0.5):.3f} ms, "
            f"p99 {p(all_search, 0.99):.3f} ms (N={args.n})"
        )


if __name__ == "__main__":
    main()
