"""The chunker: properties (Hypothesis) and the Markdown structures it must keep intact."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import chunk_markdown, count_words, split_sections
from ingest.chunker import Section, chunk_section

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=9)


@st.composite
def sentences(draw: st.DrawFn, max_words: int = 12) -> str:
    words = draw(st.lists(WORD, min_size=2, max_size=max_words))
    return words[0].capitalize() + " " + " ".join(words[1:]) + "."


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Markdown with headings and paragraphs; also returns every sentence in order."""
    parts: list[str] = []
    order: list[str] = []
    for n in range(draw(st.integers(1, 4))):
        parts.append(f"{'#' * draw(st.integers(1, 3))} Heading {n}")
        for _ in range(draw(st.integers(1, 3))):
            drawn = draw(st.lists(sentences(), min_size=1, max_size=8))
            # a unique word per sentence, so each can be found again
            para = [f"S{len(order) + i} {text}" for i, text in enumerate(drawn)]
            order.extend(para)
            parts.append(" ".join(para))
    return "\n\n".join(parts), order


@settings(max_examples=150, deadline=None)
@given(doc=documents(), max_tokens=st.integers(30, 120), overlap=st.integers(0, 14))
def test_chunk_properties(doc: tuple[str, list[str]], max_tokens: int, overlap: int) -> None:
    markdown, order = doc
    chunks = chunk_markdown(markdown, max_tokens=max_tokens, overlap_tokens=overlap)
    # no empty chunks, size bound
    assert all(c.text.strip() for c in chunks)
    assert all(count_words(c.text) <= max_tokens for c in chunks)
    assert all(c.tokens == count_words(c.text) for c in chunks)
    # every sentence lands in some chunk, and in order of first appearance
    first_seen = []
    for sentence in order:
        holders = [i for i, c in enumerate(chunks) if sentence in c.text]
        assert holders, sentence
        first_seen.append(holders[0])
    assert first_seen == sorted(first_seen)
    # overlap: within a section, a chunk starts with the previous chunk's trailing sentences
    # (at most `overlap` tokens), always including its last sentence when that one fits
    for prev, nxt in itertools.pairwise(chunks):
        if prev.heading_path != nxt.heading_path:
            continue
        last = re.split(r"(?<=\.)\s+", prev.text)[-1]
        if 0 < count_words(last) <= overlap:
            end = nxt.text.find(last)
            assert end >= 0, (prev.text, nxt.text)
            repeated = nxt.text[: end + len(last)]
            assert prev.text.endswith(repeated) and count_words(repeated) <= overlap
        if overlap == 0:
            assert last not in nxt.text


@settings(max_examples=50, deadline=None)
@given(words=st.lists(WORD, min_size=1, max_size=400), max_tokens=st.integers(8, 40))
def test_oversized_sentences_are_split_at_words(words: list[str], max_tokens: int) -> None:
    text = " ".join(words)
    chunks = chunk_section(Section((), text), max_tokens=max_tokens, overlap_tokens=0)
    assert all(count_words(c.text) <= max_tokens for c in chunks)
    assert " ".join(c.text for c in chunks).split() == words


def test_a_word_longer_than_the_budget_is_cut() -> None:
    def chars(text: str) -> int:
        return len(text.replace(" ", ""))

    chunks = chunk_section(Section((), "x" * 50), max_tokens=16, overlap_tokens=0, count=chars)
    assert "".join(c.text for c in chunks) == "x" * 50
    assert all(chars(c.text) <= 16 for c in chunks)


def test_sections_keep_heading_paths_and_ignore_headings_in_code() -> None:
    markdown = """Intro before any heading.

# Guide
Top text.
## Install
```bash
# not a heading
pip install thing
```
### Linux
Use the package manager.
## Usage
Run it.
# Appendix
The end.
"""
    paths = [(s.heading_path, s.text.splitlines()[0]) for s in split_sections(markdown)]
    assert paths == [
        ((), "Intro before any heading."),
        (("Guide",), "Top text."),
        (("Guide", "Install"), "```bash"),
        (("Guide", "Install", "Linux"), "Use the package manager."),
        (("Guide", "Usage"), "Run it."),
        (("Appendix",), "The end."),
    ]


def test_a_long_table_is_split_by_rows_with_the_header_repeated() -> None:
    rows = "\n".join(f"| item{i} | {i * 3} |" for i in range(40))
    markdown = f"# Parts\n\n| Name | Price |\n| --- | --- |\n{rows}\n"
    chunks = chunk_markdown(markdown, max_tokens=40, overlap_tokens=8)
    assert len(chunks) > 2
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert lines[:2] == ["| Name | Price |", "| --- | --- |"]
        assert all(line.startswith("| item") for line in lines[2:])
    assert sum(len(c.text.splitlines()) - 2 for c in chunks) == 40


def test_a_long_code_block_keeps_its_fences() -> None:
    code = "\n".join(f"print({i})" for i in range(60))
    chunks = chunk_markdown(f"# Code\n\n```python\n{code}\n```\n", max_tokens=20, overlap_tokens=4)
    assert len(chunks) > 2
    for chunk in chunks:
        lines = chunk.text.splitlines()
        assert lines[0] == "```python" and lines[-1] == "```"


@pytest.mark.parametrize(("max_tokens", "overlap"), [(4, 0), (50, 25), (50, -1)])
def test_bad_budgets_are_refused(max_tokens: int, overlap: int) -> None:
    with pytest.raises(ValueError, match="tokens"):
        chunk_markdown("# A\n\ntext", max_tokens=max_tokens, overlap_tokens=overlap)


def test_a_table_header_too_big_to_repeat_is_chunked_as_content() -> None:
    header = "| " + " | ".join(f"h{i}" for i in range(300)) + " |"
    table = "\n".join([header, "|" + "---|" * 300, *("| x | y |" for _ in range(5))])
    chunks = chunk_markdown(table, max_tokens=100, overlap_tokens=0)
    assert len(chunks) <= 8
    assert all(c.tokens <= 100 for c in chunks)
    assert "h299" in "".join(c.text for c in chunks)


def test_fences_close_only_by_their_own_kind_and_length() -> None:
    markdown = """# Shell

````markdown
```bash
# a comment in the example, not a heading
```
~~~
# still inside
````

## After
Text after the fence.
"""
    sections = split_sections(markdown)
    assert [s.heading_path for s in sections] == [("Shell",), ("Shell", "After")]
    assert "# still inside\n````" in sections[0].text


def test_a_code_span_at_a_line_start_opens_no_fence() -> None:
    markdown = (
        "# A\n\n``` `x` ``` starts this line.\n\n## B\n\n```python\n# comment\n```\n\n## C\nEnd."
    )
    assert [s.heading_path for s in split_sections(markdown)] == [
        ("A",),
        ("A", "B"),
        ("A", "C"),
    ]


def test_heading_paths_keep_the_heading_verbatim() -> None:
    markdown = (
        "# The `snake_case_name` and __slots__ ¶\n\ntext\n\n"
        "## new(*args, **kwargs) -> Config\n\ntext\n\n## **Bold** C# \\_escaped\\_ #\n\ntext"
    )
    assert [s.heading_path[-1] for s in split_sections(markdown)] == [
        "The snake_case_name and __slots__",
        "new(*args, **kwargs) -> Config",
        "Bold C# _escaped_",
    ]


def test_indented_headings_inside_lists_but_not_in_indented_code() -> None:
    markdown = """# Steps

- first step

    ### Details of the first step
    Some text.

Paragraph.

    # a comment in an indented code block
    make install

## Next
Done.
"""
    paths = [s.heading_path for s in split_sections(markdown)]
    assert ("Steps", "Details of the first step") in paths
    assert not any("a comment" in h for p in paths for h in p)
    [code] = [c for c in chunk_markdown(markdown) if "make install" in c.text]
    assert "    # a comment in an indented code block\n    make install" in code.text


def test_table_rows_separated_by_blank_lines_stay_one_table() -> None:
    markdown = "| Name | Port |\n|---|---|\n| api | 8741 |\n   \n| ui | 8742 |\n\n| db | 5432 |\n"
    [chunk] = chunk_markdown(markdown)
    assert chunk.text == "| Name | Port |\n|---|---|\n| api | 8741 |\n| ui | 8742 |\n| db | 5432 |"


def test_code_blocks_keep_their_blank_lines() -> None:
    code = "def a():\n    return 1\n\n\ndef b():\n    return 2"
    [chunk] = chunk_markdown(f"# Code\n\n```python\n{code}\n```")
    assert chunk.text == f"```python\n{code}\n```"


def test_a_list_of_bare_headings_is_kept_and_a_lone_one_is_not() -> None:
    markdown = "# Vec\n\nA vector.\n\n## Auto Trait Implementations\n### impl Send\n### impl Sync\n"
    sections = split_sections(markdown)
    assert [(s.heading_path, s.text) for s in sections] == [
        (("Vec",), "A vector."),
        (("Vec", "Auto Trait Implementations", "impl Send"), "impl Send"),
        (("Vec", "Auto Trait Implementations", "impl Sync"), "impl Sync"),
    ]
    assert split_sections("# Patients\n") == []


PANEL = """# getRepository

get /2.0/repositories/{username}/{slug}

## Request

### Path Parameters

slug string required

## Responses

### 200

The repository

#### Body

slug string owner object
"""


def test_a_heading_s_small_subsections_are_one_chunk_that_keeps_them_as_headings() -> None:
    [chunk] = chunk_markdown(PANEL, max_tokens=200, overlap_tokens=0, merge_tokens=200)
    assert chunk.heading_path == ("getRepository",)
    assert chunk.text == (
        "get /2.0/repositories/{username}/{slug}\n\n## Request\n\n### Path Parameters\n\n"
        "slug string required\n\n## Responses\n\n### 200\n\nThe repository\n\n#### Body\n\n"
        "slug string owner object"
    )
    # without merging, every label heads a chunk of its own
    assert len(chunk_markdown(PANEL, max_tokens=200, overlap_tokens=0)) == 4


def test_a_tree_over_the_budget_is_merged_heading_by_heading_below() -> None:
    long = " ".join(f"w{n}" for n in range(30))
    markdown = PANEL.replace("slug string required", long)
    chunks = chunk_markdown(markdown, max_tokens=200, overlap_tokens=0, merge_tokens=30)
    assert [(c.heading_path, c.text.split("\n\n")[0]) for c in chunks] == [
        (("getRepository",), "get /2.0/repositories/{username}/{slug}"),
        (("getRepository", "Request", "Path Parameters"), long),  # 30 words, no room to join
        (("getRepository", "Responses", "200"), "The repository"),  # with its "Body"
    ]
    assert chunks[2].text == "The repository\n\n## Body\n\nslug string owner object"


def test_top_level_headings_are_joined_only_when_the_markdown_is_one_section_s_part() -> None:
    markdown = "## Request\n\nslug string\n\n## Responses\n\n200\n"
    apart = chunk_markdown(markdown, max_tokens=200, overlap_tokens=0, merge_tokens=200)
    assert [c.heading_path for c in apart] == [("Request",), ("Responses",)]
    [whole] = chunk_markdown(markdown, 200, 0, merge_tokens=200, whole=True)
    assert whole.heading_path == ()
    assert whole.text == "## Request\n\nslug string\n\n## Responses\n\n200"


def test_a_merged_list_of_bare_headings_writes_each_title_once() -> None:
    markdown = "# Vec\n\nA vector.\n\n## Auto Trait Implementations\n### impl Send\n### impl Sync\n"
    [chunk] = chunk_markdown(markdown, merge_tokens=200)
    assert chunk.heading_path == ("Vec",)
    assert chunk.text == (
        "A vector.\n\n## Auto Trait Implementations\n\n### impl Send\n\n### impl Sync"
    )


@settings(max_examples=100, deadline=None)
@given(doc=documents(), max_tokens=st.integers(30, 120), merge=st.integers(1, 120))
def test_merging_keeps_every_sentence_in_order_within_the_budget(
    doc: tuple[str, list[str]], max_tokens: int, merge: int
) -> None:
    markdown, order = doc
    chunks = chunk_markdown(markdown, max_tokens, 0, merge_tokens=merge, whole=True)
    assert all(count_words(c.text) <= max_tokens for c in chunks)
    text = "\n".join(c.text for c in chunks)
    places = [text.find(sentence) for sentence in order]
    assert -1 not in places and places == sorted(places)
    assert len(chunks) <= len(chunk_markdown(markdown, max_tokens, 0))
