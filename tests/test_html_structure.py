# ruff: noqa: E501  (the pages are real generators' markup, line for line)
"""HTML pages keep their structure: titles, every heading in the heading paths verbatim, code
blocks with their exact text, API signatures as headings, tables as tables; bad pages fail with
a clear error. The pages are small copies of the markup real generators write (DocBook,
Sphinx, rustdoc, a news article), with the failures issue 15 found on them."""

from __future__ import annotations

import re
import time

import pytest

from ingest import EmptyDocumentError, PreparedDocument, SourceDocument, prepare
from ingest.html import extract_html

PROSE = (
    "This paragraph explains the feature in enough words for a main-content extractor to take "
    "it for the body of the page rather than for navigation, which is what real pages look like. "
)


def page(data: str | bytes, url: str = "http://docs.test/page.html") -> PreparedDocument:
    raw = data.encode() if isinstance(data, str) else data
    return prepare(SourceDocument("t", raw, url, "link", "s", "page.html"))


def paths(prepared: PreparedDocument) -> set[tuple[str, ...]]:
    return {tuple(c.heading_path) for c in prepared.chunks}


def entries(prepared: PreparedDocument) -> set[str]:
    return {h for c in prepared.chunks for h in c.heading_path}


def stored(prepared: PreparedDocument) -> str:
    return "\n".join(c.text for c in prepared.chunks)


DOCBOOK = f"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"
 "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml"><head>
<title xmlns:d="http://docbook.org/ns/docbook">6.3. The apt-cache Command</title></head>
<body><ul class="docnav top"><li><a href="prev.html"><strong>Prev</strong></a></li></ul>
<div class="section"><div class="titlepage"><div><div>
<h2 class="title"><a id="sect.apt-cache"></a>6.3. The <code class="command">apt-cache</code>
 Command</h2></div></div></div>
<div class="para">{PROSE} The <code class="command">apt-cache</code> command shows the cache.</div>
<div class="section"><div class="titlepage"><div><div>
<h3 class="title">6.3.1. Searching my_table entries</h3></div></div></div>
<div class="para">{PROSE}</div>
<pre class="programlisting"># configure the cache
SELECT * FROM my_table
  WHERE name = 'apt_cache';

# the end</pre>
<div class="para">{PROSE} More text after the code.</div>
</div></div>
<ul class="docnav"><li><a href="next.html">Next</a></li></ul></body></html>"""


def test_xhtml_with_an_xml_declaration_keeps_its_title_headings_and_code() -> None:
    prepared = page(DOCBOOK)
    assert prepared.document.title == "6.3. The apt-cache Command"
    assert ("6.3. The apt-cache Command", "6.3.1. Searching my_table entries") in paths(prepared)
    text = stored(prepared)
    # the code block's exact text, in one fence; its comment is no heading
    code = "# configure the cache\nSELECT * FROM my_table\n  WHERE name = 'apt_cache';\n\n# the end"
    assert f"```\n{code}\n```" in text
    assert "# configure the cache" not in entries(prepared)
    assert "\\_" not in text and "my\\_table" not in text


SPHINX = f"""<html><head><title>json — JSON encoder and decoder</title></head><body>
<div class="sphinxsidebar"><h3>Table of Contents</h3><ul><li><a href="#">json</a></li></ul></div>
<div class="body" role="main"><section id="module-json">
<h1><code class="xref">json</code> — JSON encoder and decoder<a class="headerlink" href="#module-json">¶</a></h1>
<p>{PROSE}</p>
<section id="basic-usage"><h2>Basic Usage<a class="headerlink" href="#basic-usage">¶</a></h2>
<dl class="py function"><dt class="sig sig-object py" id="json.dumps">
<span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">dumps</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n">obj</span></em>, <em class="sig-param">*</em><span class="sig-paren">)</span><a class="headerlink" href="#json.dumps">¶</a></dt>
<dd><p>Serialize <em>obj</em> to a JSON formatted <a href="#"><code class="xref">str</code></a>. {PROSE}</p></dd></dl>
<p>Text that belongs to Basic Usage again, after the function. {PROSE}</p>
<p>Call <code class="docutils literal"><span class="pre">json.loads(s,</span>
<span class="pre">cls=None)</span></code> to decode. {PROSE}</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre><span></span><span class="gp">&gt;&gt;&gt; </span><span class="n">json</span><span class="o">.</span><span class="n">dumps</span><span class="p">([</span><span class="mi">1</span><span class="p">])</span>
<span class="c1"># on or after Oct 25.</span>
<span class="go">'[1]'</span>
</pre></div></div>
</section>
<section id="snake-case-name"><h2>The snake_case_name and a*b rule<a class="headerlink" href="#snake-case-name">¶</a></h2>
<p>{PROSE}</p></section>
</section></div></body></html>"""


def test_sphinx_signatures_become_headings_and_inline_code_stays_inline() -> None:
    prepared = page(SPHINX)
    found = paths(prepared)
    top = "json — JSON encoder and decoder"
    assert (top, "Basic Usage", "json.dumps()") in found
    assert (top, "The snake_case_name and a*b rule") in found
    assert not any("¶" in h or "Table of Contents" in h for h in entries(prepared))
    by_path = {tuple(c.heading_path): c.text for c in prepared.chunks}
    assert "Text that belongs to Basic Usage again" in by_path[(top, "Basic Usage")]
    # inline code across a line break is one code span, not a fence that flips the page
    assert "`json.loads(s, cls=None)`" in stored(prepared)
    assert "on or after Oct 25." not in entries(prepared)
    assert ">>> json.dumps([1])\n# on or after Oct 25.\n'[1]'" in stored(prepared)
    assert re.search(r"^```python3$", stored(prepared), re.M)


RUSTDOC = f"""<html><head><title>Vec in std::vec - Rust</title></head><body>
<nav class="sidebar"><h2 class="location">Vec</h2></nav>
<main><section id="main-content" class="content"><div class="main-heading">
<h1 class="fqn">Struct <a href="#">std</a>::<wbr><a href="#">vec</a>::<wbr><a class="struct" href="#">Vec</a></h1></div>
<div class="docblock item-decl"><pre class="rust struct"><code>pub struct Vec&lt;T&gt; where<br>&#160;&#160;&#160;&#160;T: Sized, {{ /* private fields */ }}</code></pre></div>
<details class="rustdoc-toggle top-doc" open><summary class="hideme"><span>Expand description</span></summary>
<div class="docblock"><p>A contiguous growable array type. {PROSE}</p></div></details>
<h2 id="implementations" class="small-section-header">Implementations<a href="#implementations" class="anchor"></a></h2>
<div id="implementations-list"><details class="rustdoc-toggle implementors-toggle" open><summary>
<section id="impl-Vec" class="impl"><h3 class="code-header in-band">impl&lt;T&gt; Vec&lt;T&gt;</h3></section></summary>
<div class="impl-items"><details class="rustdoc-toggle method-toggle" open><summary>
<section id="method.new" class="method"><h4 class="code-header">pub const fn new() -&gt; Vec&lt;T&gt;</h4></section></summary>
<div class="docblock"><p>Constructs a new, empty <code>Vec&lt;T&gt;</code>. {PROSE}</p></div></details></div></details></div>
<h2 id="synthetic-implementations" class="small-section-header">Auto Trait Implementations</h2>
<div id="synthetic-implementations-list">
<section id="impl-Send" class="impl"><h3 class="code-header in-band">impl Send for Vec</h3></section>
<section id="impl-Sync" class="impl"><h3 class="code-header in-band">impl Sync for Vec</h3></section>
</div></section></main></body></html>"""


def test_rustdoc_keeps_declarations_methods_and_heading_only_sections() -> None:
    prepared = page(RUSTDOC)
    found = paths(prepared)
    top = "Struct std::vec::Vec"
    assert (top, "Implementations", "impl<T> Vec<T>", "pub const fn new() -> Vec<T>") in found
    # sections that are only headings are still in the paths (each is its own chunk)
    assert (top, "Auto Trait Implementations", "impl Send for Vec") in found
    assert (top, "Auto Trait Implementations", "impl Sync for Vec") in found
    # <br> inside <pre> is a line break; the no-break spaces are kept
    assert "pub struct Vec<T> where\n\u00a0\u00a0\u00a0\u00a0T: Sized" in stored(prepared)
    assert "Vec" not in entries(prepared)  # the sidebar's heading


NEWS = f"""<html><head><title>City opens a new library | Daily News</title></head><body>
<header><h1>Daily News</h1><nav><a href="/">Home</a><a href="/world">World</a></nav></header>
<main><article><h1>City opens a new library</h1>
<p>{PROSE}</p><p>The library holds 40,000 books and opens at nine. {PROSE}</p>
<div class="share-buttons"><h3>Share this article</h3><a href="#">Facebook</a> <a href="#">X</a></div>
<p>Readers can borrow up to ten books at once. {PROSE}</p>
<aside class="related"><h3>Related stories</h3><ul><li><a href="/a">Museum reopens after the flood in the old town</a></li>
<li><a href="/b">New bridge over the river opens to traffic</a></li></ul></aside>
</article></main><footer><p>Copyright Daily News 2024. All rights reserved.</p></footer></body></html>"""


def test_a_news_article_keeps_its_text_and_leaves_boilerplate_out() -> None:
    prepared = page(NEWS)
    text = stored(prepared)
    assert "The library holds 40,000 books" in text
    assert "Readers can borrow up to ten books" in text
    for junk in ("Share this article", "Facebook", "Related stories", "Copyright", "Home"):
        assert junk not in text and junk not in entries(prepared)


def test_layout_tables_are_content_and_data_tables_are_tables() -> None:
    cells = "".join(
        f"<td><p>Column {i}: {PROSE}</p><ul><li>item {i}</li></ul></td>" for i in range(3)
    )
    data = "<table><tr><th>Option</th><th>Default</th></tr><tr><td>timeout</td><td>30 s</td></tr>"
    data += "<tr><td>retries</td><td>3</td></tr></table>"
    html = (
        f"<html><head><title>Options</title></head><body><main><h1>Options</h1>"
        f"<table role='presentation'><tr>{cells}</tr></table><p>{PROSE}</p><pre>x = 1</pre>"
        f"{data}</main></body></html>"
    )
    text = stored(page(html))
    assert "| Option | Default |\n|---|---|\n| timeout | 30 s |\n| retries | 3 |" in text
    assert not any(line.startswith("|") and len(line) > 200 for line in text.splitlines())
    assert "Column 2: This paragraph" in text


@pytest.mark.parametrize(
    "html",
    [
        "<html><body><nav><a href='/'>Home</a></nav><script>var x = 1;</script></body></html>",
        "<html><body></body></html>",
        "<?xml version='1.0'?>",
        "<html><body><div><span>  </span><p>\u00a0</p></div></body></html>",
    ],
)
def test_a_page_without_content_is_an_empty_document(html: str) -> None:
    with pytest.raises(EmptyDocumentError, match="no text could be extracted"):
        page(html)


def test_broken_markup_still_yields_its_text() -> None:
    html = (
        f"<html><head><title>Broken</title><body><h1>Broken page<p>{PROSE}</span></b>"
        f"<div><p>Second {PROSE}<table><tr><td>cell"
    )
    prepared = page(html)
    assert prepared.document.title == "Broken"
    assert "Second This paragraph explains" in stored(prepared)


def test_ten_megabytes_of_nested_divs_fail_cleanly_or_extract() -> None:
    depth = 200_000
    html = "<html><body>" + "<div>" * depth + PROSE * 3 + "</div>" * depth + "</body></html>"
    assert len(html) > 2_000_000
    start = time.monotonic()
    try:
        prepared = page(html)
    except EmptyDocumentError:
        pass  # a clear refusal is as good as the text
    else:
        assert "main-content extractor" in stored(prepared)
    assert time.monotonic() - start < 120  # a guard against a hang, not a benchmark


def test_extracted_markdown_has_no_needless_escapes() -> None:
    html = (
        "<html><head><title>Names</title></head><body><article><h1>Names</h1>"
        f"<p>The my_table_name column and 2*3*4 stay as written. {PROSE}</p>"
        f"<p># not a heading, a paragraph that starts with a hash. {PROSE}</p></article></body></html>"
    )
    markdown = extract_html(html).markdown
    assert "The my_table_name column and 2*3*4 stay as written." in markdown
    assert "\\# not a heading" in markdown  # the one escape Markdown needs here
    assert "\\_" not in markdown and "\\*" not in markdown


def test_the_encoders_read_a_title_and_the_heading_that_repeats_it_once() -> None:
    sphinx = page(
        "<html><head><title>json — JSON encoder and decoder — Python 3.11 documentation</title>"
        "</head><body><div role='main'><h1>json — JSON encoder and decoder</h1>"
        f"<p>{PROSE}</p><h2>Basic Usage</h2><p>{PROSE} Serialize obj as a JSON stream.</p>"
        f"<h3>Usage notes</h3><p>{PROSE}</p></div></body></html>"
    )
    usage = next(c for c in sphinx.chunks if "Serialize obj" in c.text)
    # the stored chunk keeps its whole path; what the encoders read says each run of words once
    assert usage.heading_path[:2] == ("json — JSON encoder and decoder", "Basic Usage")
    context = usage.search_text.split("\n\n", 1)[0]
    assert context == "json — JSON encoder and decoder — Python 3.11 documentation > Basic Usage"
    manpage = page(
        "<html><head><title>git-commit(1)</title></head><body><h1>git-commit(1) Manual Page</h1>"
        f"<h2>NAME</h2><p>{PROSE}</p></body></html>"
    )
    assert manpage.chunks[0].search_text.startswith("git-commit(1) Manual Page > NAME\n\n")
    # a heading that repeats only some of its parent's words stays
    notes = next(c for c in sphinx.chunks if c.heading_path[-1] == "Usage notes")
    assert notes.search_text.split("\n\n", 1)[0].endswith("> Basic Usage > Usage notes")


def test_a_code_viewer_that_draws_each_line_as_a_div_keeps_its_lines() -> None:
    # Stoplight Elements' code viewer: a <pre> of one <div> per line, no newlines between them,
    # each line's number drawn beside it
    lines = [
        "curl --request GET \\",
        "  --url https://petstore.test/v2/pets \\",
        "  --header 'Accept: application/json'",
    ]
    viewer = "".join(
        f'<div class="sl-flex"><div class="sl-code-highlight__ln sl-select-none">{n}</div>'
        f"<div><span>{line}</span></div></div>"
        for n, line in enumerate(lines, 1)
    )
    prepared = page(
        f"<html><head><title>Pets</title></head><body><main><h1>List pets</h1><p>{PROSE}</p>"
        f'<pre class="sl-code-viewer">{viewer}</pre><p>{PROSE}</p></main></body></html>'
    )
    assert "```\n" + "\n".join(lines) + "\n```" in stored(prepared)


def test_a_highlighter_s_lines_drawn_without_line_breaks_keep_their_lines() -> None:
    # Fumadocs' OpenAPI pages: Shiki's `<span class="line">` per line with the newlines between
    # them dropped (drawn as a flex column); Shiki's usual output keeps them, and nothing is
    # doubled
    lines = [
        'curl -X POST "https://example.com/pets" \\',
        "  -d '{",
        '    "name": "string"',
        "  }'",
    ]
    spans = [f'<span class="line"><span style="color:#000">{line}</span></span>' for line in lines]
    for joiner in ("", "\n"):
        prepared = page(
            f"<html><head><title>Pets</title></head><body><main><h1>Add pet</h1><p>{PROSE}</p>"
            f'<pre class="shiki"><code>{joiner.join(spans)}</code></pre><p>{PROSE}</p></main>'
            "</body></html>"
        )
        assert "```\n" + "\n".join(lines) + "\n```" in stored(prepared), joiner
    # Prism's token lines (Docusaurus), each ending in a <br>
    tokens = "".join(f'<span class="token-line">{line}<br></span>' for line in lines)
    prepared = page(
        f"<html><head><title>Pets</title></head><body><main><h1>Add pet</h1><p>{PROSE}</p>"
        f"<pre><code>{tokens}</code></pre><p>{PROSE}</p></main></body></html>"
    )
    assert "```\n" + "\n".join(lines) + "\n```" in stored(prepared)


def zudoku_operation(op_id: str, method: str, path: str, response: str) -> str:
    """An operation as Zudoku draws one with no summary: an `h2` holding only its permalink
    icon, then the method and path in the line after it."""
    return (
        f'<div><h2 id="{op_id}"><a href="#{op_id}" aria-label="Link to {op_id}"><svg></svg>'
        f"</a></h2><div><div><span>{method}</span><span><div>{path}</div></span></div></div>"
        f"<h3>Responses</h3><div role='tabpanel'><span>200</span><p>{response} {PROSE}</p>"
        "</div></div>"
    )


def test_a_heading_with_only_a_permalink_takes_the_line_the_page_shows_under_it() -> None:
    """A prerendered Zudoku page, read as a crawl reads it: each operation's sections stay
    under its method and path, not under the previous operation's "Responses", and the line
    is written once, as the heading."""
    prepared = page(
        "<html><head><title>Link Example</title></head><body><main><h1>Other endpoints</h1>"
        + zudoku_operation("getuserbyname", "GET", "/2.0/users/{username}", "The User.")
        + zudoku_operation("getrepository", "GET", "/2.0/repositories/{u}/{slug}", "The repo.")
        + "</main></body></html>"
    )
    user = next(c for c in prepared.chunks if "The User." in c.text)
    repo = next(c for c in prepared.chunks if "The repo." in c.text)
    assert user.heading_path[1:] == ("GET /2.0/users/{username}", "Responses")
    assert repo.heading_path[1] == "GET /2.0/repositories/{u}/{slug}"
    assert "/2.0/users/{username}" not in stored(prepared)


@pytest.mark.parametrize("mark", ["inert", 'data-aria-hidden="true"'])
def test_a_page_hidden_behind_an_open_popup_is_still_written(mark: str) -> None:
    """A theme picker left open when the page was rendered: Headless UI (`inert`) and Radix
    (`data-aria-hidden`) set `aria-hidden` on the rest of the page while their popup is open.
    That is the page, not an icon: it is written, and an icon's text inside it still is not."""
    prepared = page(
        '<html><head><title>Import</title></head><body><div class="layout"><aside>'
        '<button aria-haspopup="listbox" aria-expanded="true">System</button></aside>'
        f'<article aria-hidden="true" {mark}><h1>Import</h1><p>{PROSE}</p>'
        f'<h2>Usage<span aria-hidden="true">#</span></h2><pre>npm install @scalar/import</pre>'
        f"<p>{PROSE} Resolves any URL.</p></article></div>"
        '<ul role="listbox"><li>Light</li><li>Dark</li></ul></body></html>'
    )
    text = stored(prepared)
    assert "Resolves any URL." in text and "npm install @scalar/import" in text
    assert ("Import", "Usage") in paths(prepared)
    assert "#" not in text
    # Without a popup's mark, aria-hidden text stays out.
    hidden = page(f'<html><body><main><p>{PROSE}</p><p aria-hidden="true">Twice.</p></main>')
    assert "Twice." not in stored(hidden)


def starlight_heading(level: int, slug: str, title: str) -> str:
    """A heading as Starlight draws it: in a wrapper, beside a link to itself that shows an
    icon and says "Section titled …" to screen readers alone."""
    return (
        f'<div class="sl-heading-wrapper level-h{level}"><h{level} id="{slug}">{title}'
        f'</h{level}><a class="sl-anchor-link" href="#{slug}"><span aria-hidden="true" '
        f'class="sl-anchor-icon"><svg></svg></span><span class="sr-only">Section titled '
        f"“{title}”</span></a></div>"
    )


def test_a_heading_s_anchor_that_speaks_only_to_screen_readers_is_not_text() -> None:
    """Starlight: "Section titled “Usage”" ended every heading's line, crawled or captured (a
    third of a captured Starlight site's chunks were that line alone). A link to a place in
    the page that shows no words is a permalink, whatever it says to screen readers; one that
    shows words stays."""
    prepared = page(
        "<html><head><title>Import</title></head><body><main><h1>Import</h1>"
        f"<p>{PROSE}</p>{starlight_heading(2, 'usage', 'Usage')}<p>{PROSE} Resolves any URL.</p>"
        f"{starlight_heading(3, 'options', 'Options')}<p>{PROSE} Takes a timeout.</p>"
        '<p>See <a href="#usage">the usage</a> first.</p></main></body></html>'
    )
    text = stored(prepared)
    assert "Section titled" not in text
    assert {("Import", "Usage"), ("Import", "Usage", "Options")} <= paths(prepared)
    assert "Resolves any URL." in text and "See the usage first." in text


def test_a_pager_to_the_pages_beside_this_one_is_not_its_last_section_s_text() -> None:
    # Docus and Fumadocs draw the pager as plain `div`s after the content: a card for the page
    # before and one for the page after, each with that page's title and first lines. It was
    # stored in the last section's chunk. The sidebar names the pages in order around this
    # one's own link; a link of the text to one of them stays.
    sidebar = "".join(
        f'<li><a href="/docs/{slug}">{title}</a></li>'
        for slug, title in (("install", "Install"), ("backup", "Backup"), ("restore", "Restore"))
    )
    card = '<a href="/docs/{}"><span>{}</span><p>{}</p></a>'
    html = (
        f"<html><head><title>Backup</title></head><body><main><aside><ul>{sidebar}</ul></aside>"
        f"<div><h1>Backup</h1><p>{PROSE}</p><h2>Rotation</h2><p>{PROSE}</p>"
        '<p>Before a backup, read <a href="/docs/install">Install</a> for the lockfile '
        "it writes, which the rotation keeps.</p>"
        '<div class="grid">'
        + card.format("install", "Install", "The installer writes a lockfile first. " + PROSE)
        + card.format("restore", "Restore", "A restore replays the journal. " + PROSE)
        + "</div></div></main></body></html>"
    )
    prepared = page(html, "http://docs.test/docs/backup")
    text = stored(prepared)
    assert ("Backup", "Rotation") in paths(prepared) and "read Install for the lockfile" in text
    assert "installer writes a lockfile" not in text and "replays the journal" not in text, text
    # Asked under another address, the sidebar names no page around it: nothing is taken out
    elsewhere = stored(page(html, "http://docs.test/docs/unlisted"))
    assert "installer writes a lockfile" in elsewhere, elsewhere


def test_the_frame_around_every_page_is_not_the_page_s_text() -> None:
    """What a documentation site's frame says on every page was stored as the page's text:
    Storybook's "Skip to sidebar" (twelve chunks of it, crawled), Docus' "Edit this page" at
    the end of each page's last chunk, TypeDoc's "Generated using TypeDoc" and Retype's
    "Powered by" under each page, the "On this page" over a table of contents, "Copy page",
    a search launcher's "Search… Ctrl K". An element saying that and nothing more is the
    frame; a sentence of the page that starts alike stays."""
    html = (
        "<html><head><title>Backup</title></head><body>"
        '<a href="#main">Skip to content</a><a href="#side">Skip to sidebar</a>'
        "<header><button>Search… <kbd>Ctrl</kbd> <kbd>K</kbd></button></header>"
        f"<main id='main'><h1>Backup</h1><p>{PROSE}</p><button>Copy page</button>"
        f"<h2>Rotation</h2><p>{PROSE} Rotation keeps seven copies.</p>"
        "<p>Made with a cron job, the copies rotate at midnight.</p>"
        "<p>Skip to the restore section if the copies already exist.</p>"
        '<p>The iterator adapter <a href="struct.Copied.html">Copied</a> yields copies.</p>'
        '<div><a href="https://git.test/edit/main/backup.md">Edit this page</a></div>'
        '<div><span>On this page</span><ul><li><a href="#rotation">Rotation</a></li></ul></div>'
        '</main><footer><p>Generated using <a href="https://typedoc.org">TypeDoc</a></p>'
        '<a href="https://retype.com"><span>Powered by</span></a></footer></body></html>'
    )
    text = stored(page(html))
    for frame in ("Skip to", "Edit this page", "Generated using", "Powered by", "On this page"):
        assert frame not in text.replace("Skip to the restore", ""), text
    assert "Ctrl" not in text and "Copy page" not in text, text
    assert "Rotation keeps seven copies." in text
    assert "Made with a cron job, the copies rotate at midnight." in text  # no credit: no link
    assert "Skip to the restore section if the copies already exist." in text
    assert "The iterator adapter Copied yields copies." in text  # rustdoc's type, a link
