"""The agent scan's goal ranker: how many element texts it embeds per scan. The embedder is the
deterministic hashed bag of words (a fake, for speed); the ranking itself is measured with the
real model by benchmarks/scan_eval.py."""

from __future__ import annotations

from collections.abc import Sequence

from ingest import HashEmbedder
from ingest.embed import Vector
from spa_phases.scan import Element, GoalRanker


def listing(n: int) -> list[Element]:
    return [
        Element(
            id=i,
            type="link",
            role="link",
            label=f"Product {i}",
            selector=f"main > a:nth-of-type({i + 1})",
            region="main",
            visible=True,
            context=f"Trail shoe {i} ${20 + i}.99",
        )
        for i in range(n)
    ]


def test_new_texts_are_embedded_only_near_the_top_of_the_goals_order() -> None:
    """At most 16 new element texts a scan, and only among the first 64 distinct texts in the
    goal's order: once those are embedded (an agent's later steps on the same page), a scan
    embeds its goal alone, not 16 texts from the rest of the page."""
    fake = HashEmbedder(384)
    embedded: list[list[str]] = []

    def embed(texts: Sequence[str]) -> list[Vector]:
        embedded.append(list(texts))
        return fake.embed_batch(texts)

    ranker = GoalRanker(embed)
    page = listing(300)
    for step, verb in enumerate(["buy", "get", "order", "find", "pick", "want"]):
        embedded.clear()
        goal = f"{verb} a trail shoe"
        scored, _ = ranker.rank(page, goal, [])
        assert len(scored) == 300
        new = [t for call in embedded for t in call if t.startswith("link: ")]
        assert len(new) == (16 if step < 4 else 0), (step, new)
    # A goal naming an element ranks it first (its word overlap alone would), and embeds
    # no element text: the first 64 of its order were embedded by the steps above.
    embedded.clear()
    scored, _ = ranker.rank(page, "product 7 trail shoe", [])
    assert scored[0][1].label == "Product 7"
    assert [t for call in embedded for t in call if t.startswith("link: ")] == []
