"""JavaScript the explorer runs inside the page (through Playwright's `evaluate`)."""
# ruff: noqa: E501  (JavaScript reads better unwrapped)

import json

from crawl.browser import BUSY, COLLAPSED_CLASS, FRAME_DOCS

# Installed before any page script: the time of the last DOM mutation, for "DOM quiet".
WATCH_MUTATIONS = """
(() => {
  // Survives client-side routing, not a new document: how a route change is told from a load.
  window.__loreDoc = Math.random().toString(36).slice(2);
  window.__loreLastMutation = performance.now();
  window.__loreMutated = [];
  const observe = (root) => new MutationObserver((records) => {
    window.__loreLastMutation = performance.now();
    for (const r of records) {
      if (r.type === 'attributes') continue;
      const node = r.type === 'characterData' ? r.target.parentElement : r.target;
      const element = node && node.nodeType === 11 ? node.host : node;  // a shadow root's host
      if (element && window.__loreMutated.length < 5000) window.__loreMutated.push(element);
    }
  }).observe(root, {subtree: true, childList: true, attributes: true, characterData: true});
  const start = () => observe(document);
  if (document.documentElement) start(); else document.addEventListener('readystatechange', start, {once: true});
  // Web components render into shadow roots, which a document's observer does not see.
  const attach = Element.prototype.attachShadow;
  Element.prototype.attachShadow = function (init) {
    const root = attach.call(this, init);
    if (init && init.mode === 'open') observe(root);
    return root;
  };
})();
"""

# How long the DOM has not changed; 0 while the page says it is busy (a route's loading
# skeleton, marked `aria-busy`, stays put while its script runs).
QUIET_FOR_MS = (
    (
        """() => {
  FRAME_DOCS
  if ((BUSY)()) return 0;
  // A same-origin frame's own watch (the script runs in every frame), in its own clock.
  const quiet = (w) => !w || w.__loreLastMutation === undefined ? Infinity : w.performance.now() - w.__loreLastMutation;
  return Math.min(performance.now() - (window.__loreLastMutation || 0), ...frameDocs().map((d) => quiet(d.defaultView)));
}"""
    )
    .replace("BUSY", BUSY)
    .replace("FRAME_DOCS", FRAME_DOCS)
)
# The HTTP status the document on screen was answered with (0 where the browser does not say).
DOCUMENT_STATUS = "() => (performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0"
# An app's own "page not found" view, drawn for a route it has no page for (the server answered
# the shell with success): its first shown `h1` says so ("404", "Page not found", "404: This
# page could not be found.") over a few words (a link home). Nuxt, VitePress, Docusaurus,
# Next.js and Starlight draw theirs so.
NOT_FOUND_VIEW = r"""() => {
  const h1 = Array.from(document.querySelectorAll('h1')).find(h => h.getClientRects().length);
  if (!h1 || !/^\s*(404\b|(page\s+)?not\s+found\b|this page could not be found)/i.test(h1.textContent)) return false;
  const main = h1.closest('main, [role=main], article') || document.body;
  return main.innerText.split(/\s+/).filter(Boolean).length <= 60;
}"""

# Names that make an element navigation by its class or id (a sidebar, table of contents, menu
# or navigation bar), as whole words of it, camelCase words split first: `VPSidebar`,
# `toc-wrapper`, `main-menu`, `menuList`, `MenuBar`, `navbar-nav`, `NavBar`, `site-navigation`,
# and a "nav" said where (`side-nav`, `sidenav`, `topNav`) or what (`nav-tree`, Doxygen's);
# not `stock`, `protocol`, `menuitem`, `canvas`, `nav-tabs` or `nav-item` (Bootstrap's `nav` is
# a tab strip as often). The scanner (here) and the region reader (`dom.py`) share it
# (case-insensitive); it reads the same in JavaScript and Python.
NAV_NAME = (
    r"(?:^|[^a-z0-9])(?:toc[a-z0-9]*|[a-z0-9]*menu(?:bar)?|[a-z0-9]*sidebar[a-z0-9]*"
    r"|[a-z0-9]*nav(?:igation| ?bar[a-z0-9]*)"
    r"|(?:side|sub|top|site|main|global|primary|left|docs?|mobile)[ _-]?nav"
    r"|nav[ _-]?(?:tree|list|pane|panel|drawer))(?:$|[^a-z0-9])"
)
CAMEL_WORD = r"([a-z0-9])([A-Z])"  # where camelCase starts a word: replaced by "$1 $2"

# Stable selectors, visibility and a label, shared by the functions below.
_COMMON = (
    r"""
const STABLE_ID = /^[A-Za-z][\w-]{0,80}$/;
// Every element matching `sel`, open shadow roots included (web components render there).
// Each root's matches are found at once: a `matches` call per element was the largest item in
// the profile of a 5,000-element scan.
const deepAll = (sel) => {
  const out = [];
  const visit = (root) => {
    const hits = sel === '*' ? null : new Set(root.querySelectorAll(sel));
    for (const el of root.querySelectorAll('*')) {
      if (!hits || hits.has(el)) out.push(el);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return out;
};
// Same-origin frames, read as the page's (Storybook draws each page in an `iframe` beside its
// sidebar).
"""
    + FRAME_DOCS
    + r"""
// The marks the capture sets on a page before a snapshot (MARK_HIDDEN), taken off again.
const MARKS = ['data-lore-hidden', 'data-lore-apart', 'data-lore-title', 'data-lore-titled', 'data-lore-column'];
const clearMarks = () => {
  const sel = MARKS.map(m => `[${m}]`).join(', ');
  const marked = [...deepAll(sel), ...frameDocs().flatMap((d) => [...d.querySelectorAll(sel)])];
  for (const el of marked) for (const m of MARKS) el.removeAttribute(m);
};
// Ids a framework numbers as it renders ("ember1234", "headlessui-disclosure-button-7",
// Vue's "scalar-refs-0-47"), and ids that name a state a script moves from element to element
// (Doxygen's tree calls the row shown `selected`): not the same element in the next render.
// As dom.py's _GENERATED_ID.
const GENERATED = /\d{4,}|^(ember|react|radix|mui|rc|ng)[-_]?\d|^headlessui-|[-_:]\d+[-_:]\d+$|^(selected|current|active|highlighted|focused)$/i;
const stableId = (el) => el.id && STABLE_ID.test(el.id) && !GENERATED.test(el.id) ? el.id : null;
const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
// An element's position among its parent's children of its tag, and how many there are:
// worked out once per parent, so a list of thousands of rows is read in linear time.
const positions = new Map();
const tagCounts = new Map();
const nth = (el) => {
  const parent = el.parentElement;
  if (!parent) return [1, 1];
  let seen = tagCounts.get(parent);
  if (seen === undefined) {
    seen = new Map();
    for (let c = parent.firstElementChild; c; c = c.nextElementSibling) { const tag = c.tagName; const i = (seen.get(tag) || 0) + 1; seen.set(tag, i); positions.set(c, i); }
    tagCounts.set(parent, seen);
  }
  return [positions.get(el), seen.get(el.tagName)];
};
// The path from the nearest anchor (a stable id, a unique test id) down to an element, once
// per element: the controls of a list share their ancestors' paths.
const paths = new WeakMap();
const pathOf = (cur) => {
  if (!cur || cur.nodeType !== 1 || cur === document.body || cur === document.documentElement) return '';
  let path = paths.get(cur);
  if (path !== undefined) return path;
  const id = stableId(cur);
  const testId = id ? null : cur.getAttribute('data-testid');
  if (id) path = '#' + CSS.escape(id);
  else if (testId && !testId.includes('"') && unique(`[data-testid="${testId}"]`)) path = `[data-testid="${testId}"]`;
  else {
    const [n, of] = nth(cur);
    const part = cur.tagName.toLowerCase() + (of > 1 ? `:nth-of-type(${n})` : '');
    const up = pathOf(cur.parentElement);
    path = up ? up + ' > ' + part : part;
  }
  paths.set(cur, path);
  return path;
};
const selectorOf = (el) => {
  const root = el.getRootNode();
  if (root instanceof ShadowRoot) {
    // Playwright's CSS pierces open shadow roots: the host's selector, then the path inside.
    const inner = [];
    for (let c = el; c && c.nodeType === 1; c = c.parentElement) {
      const id = stableId(c);
      if (id) { inner.unshift('#' + CSS.escape(id)); break; }
      const [n, of] = nth(c);
      inner.unshift(c.tagName.toLowerCase() + (of > 1 ? `:nth-of-type(${n})` : ''));
    }
    return selectorOf(root.host) + ' >> ' + inner.join(' > ');
  }
  const path = pathOf(el);
  return !path ? 'body' : path[0] === '#' || path[0] === '[' ? path : 'body > ' + path;
};
// The element at a selector `selectorOf` made (`' >> '` steps into a shadow root), or null.
const elementAt = (selector) => {
  let el = null;
  let root = document;
  for (const part of selector.split(' >> ')) {
    try { el = root ? root.querySelector(part) : null; } catch (e) { return null; }
    if (!el) return null;
    root = el.shadowRoot;
  }
  return el;
};
// An element's box, read once per scan (visibility and position both need it).
const rects = new WeakMap();
const rectOf = (el) => {
  let r = rects.get(el);
  if (!r) { r = el.getBoundingClientRect(); rects.set(el, r); }
  return r;
};
// The page's scroll offsets, read once a script (no script here scrolls): each read of
// `window.scrollX` brings the layout up to date first (9 ms for the controls of a long listing).
let scrolled_ = null;
const scrolled = () => scrolled_ || (scrolled_ = {x: window.scrollX, y: window.scrollY});
// How far the boxes around an element have scrolled it (a sidebar pane's own scrollbars).
const scrolledInside = (el) => {
  let x = 0, y = 0;
  for (let a = el.parentElement; a && a !== document.body && a !== document.documentElement; a = a.parentElement) {
    x += a.scrollLeft; y += a.scrollTop;
  }
  return {x, y};
};
// Visible to a person who scrolls: laid out, drawn, not hidden, inside the document (above
// the viewport counts: a click scrolls it into view; so does left of a pane scrolled right,
// as Doxygen's tree is when a long title was shown), not pushed off the page.
const visible = (el) => {
  const r = rectOf(el);
  if (!(r.width > 1 && r.height > 1)) return false;
  if (!(r.right + scrolled().x > 0 && r.bottom + scrolled().y > 0)) {
    const inner = scrolledInside(el);
    if (!(r.right + scrolled().x + inner.x > 0 && r.bottom + scrolled().y + inner.y > 0)) return false;
  }
  // Inside a shut `details`: Chromium skips drawing its contents but lays them out when
  // asked, so they have a size all the same (Starlight's and Sphinx's sidebar groups).
  if (el.checkVisibility && !el.checkVisibility()) return false;
  const style = getComputedStyle(el);
  // `collapse` hides as `hidden` does outside tables (Material for MkDocs' closed sections).
  return style.visibility === 'visible' && parseFloat(style.opacity) !== 0;
};
// Navigation: sidebars, tables of contents and menus (their links swap the main view). One
// named so by its class or id only when it does not hold the page's main content: a layout's
// `has-sidebar` (VitePress) or `sidebar-visible` (mdBook) wraps the page itself.
const NAV = 'nav, aside, [role=navigation], [role=tree]';
const NAV_NAME = new RegExp("""
    + json.dumps(NAV_NAME)
    + r""", 'i');
const CAMEL_WORD = new RegExp("""
    + json.dumps(CAMEL_WORD)
    + r""", 'g');
const namedNav = (el) => NAV_NAME.test(`${el.getAttribute('class') || ''} ${el.id || ''}`.replace(CAMEL_WORD, '$1 $2'));
const MAIN = 'main, [role=main], article, h1';
const isNav = (el) => el.matches(NAV) || (namedNav(el) && !el.matches(MAIN) && !el.querySelector(MAIN));
const inNav = (el) => {
  for (let at = el; at; at = at.parentElement) if (isNav(at)) return true;
  return false;
};
// The outermost navigation around an element (the document when none): where the links its
// group shows are looked for, not in the page's text, which may link the same pages.
const navOf = (el) => {
  let scope = document;
  for (let at = el; at; at = at.parentElement) if (isNav(at)) scope = at;
  return scope;
};
// The nearest container that tells equal controls apart: a repeated block (an API operation,
// a card), a list item, a section or an element with a stable id.
// How many of a parent's children share a tag and class attribute, counted once per parent.
const classCounts = new WeakMap();
const sameClass = (el) => {
  const parent = el.parentElement;
  let counts = classCounts.get(parent);
  if (!counts) {
    counts = new Map();
    for (const c of parent.children) { const k = c.tagName + ' ' + c.className; counts.set(k, (counts.get(k) || 0) + 1); }
    classCounts.set(parent, counts);
  }
  return counts.get(el.tagName + ' ' + el.className) || 0;
};
// The parent, or past the top of a shadow tree its host: a step up that leaves a web
// component's shadow root for the page around it.
const parentAcross = (c) => c.parentElement || (c.getRootNode() instanceof ShadowRoot ? c.getRootNode().host : null);
// `up`: the step to the parent; `parentAcross` finds a web component's container outside its
// own shadow tree.
const containerOf = (el, up = (c) => c.parentElement) => {
  for (let cur = up(el); cur && cur !== document.body; cur = up(cur)) {
    if (stableId(cur) || cur.matches('section, article, li, tr, details, [role=listitem], [role=row], [role=tabpanel]')) return cur;
    if (cur.parentElement && cur.className && typeof cur.className === 'string' && sameClass(cur) >= 2) return cur;
  }
  return null;
};
const label = (el) => (el.getAttribute('aria-label') || el.innerText || el.value || el.title || '')
  .replace(/[\u200b-\u200d\ufeff]/g, '').replace(/\s+/g, ' ').trim().slice(0, 80);
"""
)

# Marks the topmost elements a person cannot see (computed style), for hidden-text safety; and
# inline elements the layout sets apart from the element before them with nothing between
# (`data-lore-apart`: the items of a flex or grid, a span shown as a block), so that the
# Markdown keeps their words apart: Stoplight Elements' "Allowed values: open merged declined"
# is three spans in a flex row, which read "openmergeddeclined"; Kong's spec renderer's
# "limit" "integer" are spans with a margin between them. And a line drawn as a title but not
# marked up as one (`data-lore-title`, its level; the block it leads `data-lore-titled`): a
# short line, not a paragraph, list, table or the like, whose first words are bold or larger
# than the text around them and not run on into a sentence, opening the nearest block with
# headings (`h3` or below), as OpenAPI UI's operation name in bold with its summary beside
# it, over its "Description", "Parameters" and "Responses"; the headings it leads are one
# level below it. And blocks drawn side by side (`data-lore-column`), whose headings lead only
# their own column, but for the heading a column opens with.
MARK_HIDDEN = (
    "() => {"
    + _COMMON
    + r"""
  let marked = 0;
  clearMarks();
  const INLINE = /^(A|ABBR|B|BDI|CITE|CODE|DATA|DFN|EM|I|KBD|LABEL|MARK|Q|S|SAMP|SMALL|SPAN|STRONG|SUB|SUP|TIME|U|VAR)$/;
  const LAID_OUT = /^(block|flex|grid|list-item|table)$/;
  // What comes before `node` as the Markdown will read it: comments (a framework's markers)
  // and empty text are dropped there.
  const before = (node) => {
    let at = node.previousSibling;
    while (at && (at.nodeType === 8 || (at.nodeType === 3 && !at.textContent))) at = at.previousSibling;
    return at;
  };
  // Set apart by the page's style: a margin or gap between two boxes on one line, or the
  // second on a line of its own (Kong's "limit" "integer" "(int32)", spans with margins).
  const spaced = (a, b) => a.width > 0 && b.width > 0 && (b.left - a.right >= 2 || b.top >= a.bottom - 1);
  // Lines that may be titles: a block (not a paragraph, list, table, quote, figure, form, code
  // or landmark) of 30 words at most, not a label ending in a colon, holding no paragraph,
  // list, table, heading or control, whose first words, 8 at most, are bold or larger than
  // the text around them and not run on into a sentence.
  const HEADS = 'h1, h2, h3, h4, h5, h6';
  const NOT_LINES = /^(H[1-6]|P|UL|OL|DL|TABLE|BLOCKQUOTE|FIGURE|FORM|PRE|HEADER|FOOTER|NAV|ASIDE|MAIN|SECTION|ARTICLE)$/;
  const INSIDE = 'p, li, tr, td, th, dt, dd, br, pre, ' + HEADS
    + ', a[href], button, input, select, textarea, [role=button], [role=link], [role=tab]';
  const lines = [];
  const firstWords = (el) => {
    const at = document.createTreeWalker(el, NodeFilter.SHOW_TEXT,
      {acceptNode: (t) => t.data.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP}).nextNode();
    return at && at.parentElement;
  };
  const fewWords = (text, most) => {
    let n = 0;
    for (const word of text.split(/\s+/)) if (word && ++n > most) return false;
    return n > 0;
  };
  // Whether plain words follow `el` on its line ("<b>Note</b> that …": a sentence, not a
  // name with a summary box beside it).
  const inSentence = (el, line) => {
    for (let at = el; at && at !== line; at = at.parentElement) {
      let next = at.nextSibling;
      while (next && (next.nodeType === 8 || (next.nodeType === 3 && !next.data.trim()))) next = next.nextSibling;
      if (next) return next.nodeType === 3;
    }
    return false;
  };
  const strong = (el, around) => {
    const style = getComputedStyle(el);
    return parseInt(style.fontWeight, 10) >= 600
      || parseFloat(style.fontSize) >= 1.2 * parseFloat(getComputedStyle(around).fontSize);
  };
  // A block drawn beside the one before it, the two overlapping from top to bottom and each a
  // few lines tall at least: columns (an operation's description and its code samples), not a
  // row of labels or tabs.
  const sizable = (r) => r.width >= 150 && r.height >= 80;
  const beside = (a, b) => sizable(a) && sizable(b) && b.left >= a.right - 1
    && b.top < a.bottom - 1 && b.bottom > a.top + 1;
  const walk = (el, display) => {
    let blockBefore = null;  // the last child an inline tag shown as a block (its words end there)
    let column = null;  // the last child laid out as a block, with words
    const inner = frameBody(el);
    for (const child of [...el.children, ...(el.shadowRoot ? el.shadowRoot.children : []), ...(inner ? [inner] : [])]) {
      const style = getComputedStyle(child);
      const r = rectOf(child);
      const offscreen = r.right + scrolled().x < -100 || r.bottom + scrolled().y < -100 || r.left > 10000;
      const tiny = parseFloat(style.fontSize) < 2;
      const clipped = style.clipPath === 'inset(50%)' || style.clip === 'rect(0px, 0px, 0px, 0px)';
      const invisible = style.display === 'none' || style.visibility !== 'visible'
        || parseFloat(style.opacity) === 0 || style.color === 'rgba(0, 0, 0, 0)';
      if ((invisible || offscreen || tiny || clipped) && (frameBody(child) || child).textContent.trim()) {
        child.setAttribute('data-lore-hidden', '1'); marked++;
      } else {
        const prior = before(child);
        const runsOn = prior && (prior.nodeType === 1 || !/\s$/.test(prior.textContent));
        const apart = /flex|grid/.test(display) || LAID_OUT.test(style.display) || (prior && prior === blockBefore)
          || (prior && prior.nodeType === 1 && spaced(rectOf(prior), r));
        if (runsOn && apart && INLINE.test(child.tagName) && !child.closest('pre')) {
          child.setAttribute('data-lore-apart', '1');
        }
        blockBefore = INLINE.test(child.tagName) && LAID_OUT.test(style.display) ? child : null;
        if (LAID_OUT.test(style.display) && child.textContent.trim()) {
          if (column && beside(rectOf(column), r)) {
            column.setAttribute('data-lore-column', '1');
            child.setAttribute('data-lore-column', '1');
          }
          column = child;
        }
        if (LAID_OUT.test(style.display) && !NOT_LINES.test(child.tagName)) {
          const lead = firstWords(child);
          if (lead && strong(lead, el) && !inSentence(lead, child)) {
            const text = child.textContent;
            if (text.length <= 400 && fewWords(text, 30) && !/[:;,]\s*$/.test(text)
                && fewWords(lead.textContent, 8) && !child.querySelector(INSIDE)) lines.push(child);
          }
        }
        walk(child, style.display);
      }
    }
  };
  if (document.body) walk(document.body, getComputedStyle(document.body).display);
  // A line is a title when it opens the nearest block around it (four levels up at most) that
  // has headings: nothing with words comes before it on the way up, so they all follow it. Not
  // in navigation, page chrome, a callout, lists, tables, controls or code. Not over `h2`s: a
  // bold line there is the page's banner (RapiDoc's "Swagger Petstore 1.0.0"), and the page's
  // name is its title's and its `h1`'s to say, not a guess from its style.
  const AWAY = NAV + ', header, footer, [role=banner], [role=contentinfo], [role=complementary], '
    + 'li, dt, dd, td, th, label, summary, legend, pre, code, a[href], button, [role=button], '
    + '[role=link], [role=tab], [role=option], [role=menuitem], [data-lore-title], '
    + '[class*=admonition i], [class*=callout i], [class*=alert i], [class*=warning i], [class*=notice i]';
  const worded = (node) => node.nodeType !== 8 && !!(node.textContent || '').trim();
  for (const line of lines) {
    if (line.closest(AWAY) || inNav(line)) continue;
    let scope = null, first = null;  // the block it opens, and that block's first heading
    for (let at = line, n = 0; at.parentElement && at.parentElement !== document.body && n < 4; at = at.parentElement, n++) {
      let before = at.previousSibling;
      while (before && !worded(before)) before = before.previousSibling;
      if (before) break;
      first = at.parentElement.querySelector(HEADS);
      if (first) { scope = at.parentElement; break; }
    }
    const level = first ? parseInt(first.tagName[1], 10) - 1 : 0;
    if (level >= 2) { line.setAttribute('data-lore-title', String(level)); scope.setAttribute('data-lore-titled', '1'); }
  }
  return marked;
}"""
)

# The marks taken off again once the snapshot is serialised: left on, they would hide what a
# later action reveals from the explorer's scan (which honours them, for agents' DOMs).
UNMARK_HIDDEN = "() => {" + _COMMON + "clearMarks(); }"

# Every actionable element: selector, pattern, label and a summary by type; form fields; and
# the page facts its patterns are read from (repeated item lists, dialogs, consent banners).
# One scanner for the explorer (on a live page) and `POST /agent/scan` (on an agent's DOM).
SCAN = (
    "() => {"
    + _COMMON
    + r"""
  const DESTRUCTIVE = /\b(delete|remove|log ?out|sign ?out|unsubscribe|pay|purchase|buy|checkout|deactivate|reset|destroy|drop|erase|submit|send|transfer|execute|authori[sz]e|save|confirm|publish|place order|sign ?up|register)\b/i;
  // Disclosure controls only show and hide: "DELETE /pets/{id}" on an expander deletes nothing;
  // nor does a link to a client-side route ("deletePet DELETE" to #/operations/deletePet).
  const DISCLOSURES = new Set(['cookie_dismiss', 'tab', 'details', 'expander', 'expanded']);
  // Nor a link to an API operation's documentation, named by its method before a path
  // ("DELETE /pets/{id}") or by a method badge beside its name ("DELETE" in an element of its
  // own, then "Deletes a pet"): its GET shows the operation and deletes nothing. Read from the
  // markup's text, not the label (CSS capitals turn "Delete account" into "DELETE ACCOUNT");
  // a link that runs a script (`#`, `javascript:`, `onclick`, `data-method`) is what it says.
  const METHOD = /^(GET|PUT|POST|DELETE|DEL|PATCH|HEAD|OPTIONS|get|put|post|delete|del|patch|head|options)$/;
  const operationLink = (el) => {
    const href = el.getAttribute('href') || '';
    if (!href || href === '#' || /^javascript:/i.test(href) || el.hasAttribute('onclick') || el.hasAttribute('data-method')) return false;
    const text = el.textContent.replace(/\s+/g, ' ').trim();
    if (/\b(get|put|post|delete|patch)\s+\/\S*/i.test(text)) return true;
    return Array.from(el.querySelectorAll('*')).some((badge) => {
      const name = badge.textContent.trim();
      return badge.children.length === 0 && METHOD.test(name) && text.length > name.length + 2;
    });
  };
  const ACCEPT = /^(accept|agree|ok|got it|allow( all)?|i understand|dismiss|close|accept all)\b/i;
  // Controls that hide the page's own chrome (its navigation, a sidebar, the menu) or skip past
  // it, switch its theme, or open an assistant's chat (which answers from the page it is on);
  // by its name or its title (a theme picker named by its choice: "System", "Change theme").
  const CHROME = /\b(hide|close|collapse|toggle|open)\b.{0,30}\b(nav|navigation|sidebar|side bar|menu|toc|table of contents|drawer)\b|^(menu|☰|skip to (main )?content|skip navigation|((toggle|switch|change)( to| between)? )?(the )?((dark|light|system|colou?r)( (and|or) (dark|light))? (mode|theme|scheme)|theme)( \(.*)?|ask ai|ask (the )?(ai|assistant)|ai assistant|(open )?chat( with (us|ai|the assistant))?)$/i;
  // A menu of commands ("More actions", as a kebab button is titled) and sharing, printing or
  // exporting what is shown: they act on it and show none of it (TiddlyWiki's "more" and
  // "export tiddler" on each page opened). Not a link, a tab or navigation: those show pages.
  const COMMANDS = /^(more (actions|options)|(share|print|export)\b.{0,40})$/i;
  // Nor do downloading it ("Download OpenAPI Document") and copying it ("Copy", "Copied" after,
  // "Copy item path to clipboard",
  // "JSON Copy" beside a code block's language); an API playground's launcher ("Try it out",
  // "Test Request") sends requests to the API, or opens a form of fields to fill in for one.
  // Named so, a disclosure or a list's item still shows something ("Try it yourself" opens a
  // walkthrough, "Download and install" its steps): those are opened.
  const ACTS = /^(try( it)?( out| now)?!?|test (request|it)( ?\(.{0,40}\))?|run in postman|download\b.{0,40}|copy\b.{0,40}|copied!?|[\w.+#-]{1,20} (copy|copied)!?)$/i;
  // (a name said twice, shown and for screen readers, as Scalar's "JSON Copy JSON Copy", once)
  const once = (t) => t.replace(/^(.+) \1$/, '$1');
  const commands = (el, text, title, pattern) => !el.matches('a[href], [role=tab]')
    && !inside(el).nav && (COMMANDS.test(text) || COMMANDS.test(title)
      || ((ACTS.test(once(text)) || ACTS.test(title)) && pattern === 'button'));
  // A button that opens the site's search, named with its keyboard shortcut ("Search ⌘K"): its
  // dialog is an index of what the page and its routes hold. A link or a route named "Search"
  // is a page, and a group or tab named "search" (an API's tag) shows content: both are opened.
  const SEARCH = /^(open )?search\b/i;
  const SHORTCUT = /[⌘⌃]|\bctrl\b|keyboard shortcut/i;
  const searchLauncher = (el, text) => SEARCH.test(text) && !el.matches('a[href], [role=tab]')
    && (SHORTCUT.test(text) || !!el.querySelector('kbd') || el.hasAttribute('aria-keyshortcuts'));
  // A code sample's language or HTTP client ("Shell Curl", "Node.js undici", "Python",
  // "POSTMAN-CLI", "RestSharp"): the same request again in another language.
  const LANGS = /^(shell|curl|bash|powershell|httpie|wget|node(\.?js)?|javascript|js|typescript|python|ruby|php|java|kotlin|swift|go|c#|csharp|c\+\+|objective-c|rust|dart|clojure|elixir|ocaml|scala|perl|http|c|r|postman([ -]cli)?|axios|okhttp|unirest|restsharp|httpclient|guzzle|libcurl|jquery|xhr|nsurlsession)(\s+[\w.:#+\/-]+){0,2}$/i;
  const ROUTE = /^#!?\//;
  const PRICE = /(?:[$€£¥₹]\s?\d[\d.,]*|\b\d[\d.,]*\s?(?:€|EUR|USD|GBP|kr|zł)(?![A-Za-z]))/;
  const COOKIE = '[id*=cookie i], [class*=cookie i], [id*=consent i], [class*=consent i], [aria-label*=cookie i], [aria-label*=consent i], [id*=gdpr i], [class*=gdpr i]';
  const DIALOG = 'dialog[open], [role=dialog], [role=alertdialog], [aria-modal=true]';
  const LANDMARK = 'nav, header, footer, aside, main, form, dialog, [role=dialog], [role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=main], [role=search], [role=form], section, fieldset';
  const FACETS = 'aside, [class*=filter i], [id*=filter i], [class*=facet i], [id*=facet i], [class*=refine i], [aria-label*=filter i]';
  // What acts when clicked by what it is; anything marked expanded or not is a control too.
  const ACTING = 'a[href], button, [role=button], [role=tab], [role=menuitem], [role=option], [role=link], summary, '
    + '[aria-haspopup], [onclick], input[type=button], input[type=submit], input[type=image], li[data-id], tr[data-id]';
  const CONTROL = ACTING + ', [aria-expanded]';
  const query = CONTROL + ', [tabindex="0"]';
  // Focusable only, around controls of its own: a group that moves focus among them (a tab
  // list, a toolbar), not a control.
  const focusGroup = (el) => el.matches('[tabindex="0"]') && !el.matches(CONTROL + ', ' + FIELDS)
    && !!el.querySelector(CONTROL);
  const FIELDS = 'input:not([type=hidden]):not([type=button]):not([type=submit]):not([type=image]):not([type=reset]), select, textarea, [contenteditable=true], [role=searchbox], [role=combobox], [role=textbox], [role=checkbox], [role=switch], [role=slider]';
  const all = [];
  const fieldEls = [];
  const order = new Map();  // document order, shared by controls and fields
  const any = query + ', ' + FIELDS;
  // A script's click handler leaves no trace in the markup; the pointer cursor it is styled
  // with does (a sidebar group that opens, "pets" with a chevron): the outermost such element
  // that holds no control and sits in none, with a short text: a name, a summary line at most
  // (OpenAPI UI's sidebar entries, "list-searchable-fields Provides the general information…").
  const pointer = (el) => {
    if (getComputedStyle(el).cursor !== 'pointer') return false;
    const up = el.parentElement;
    if (up && getComputedStyle(up).cursor === 'pointer') return false;
    const text = el.textContent.trim();
    return text.length > 0 && text.length <= 200 && !el.closest(query) && !el.querySelector(any);
  };
  // Inside a button a control is part of it (ARIA: a button's children are presentational):
  // the chevron Vocs draws as a button of its own in a sidebar section's header toggles that
  // section again.
  const inButton = (el) => !!el.parentElement && !!el.parentElement.closest('button, [role=button]');
  // Inside a link what is no control of its own is part of it: a click on it follows the link
  // (Nuxt UI's zoomable image, a dialog's trigger by its ARIA, inside a README badge's link to
  // npm). The link is listed for itself.
  const inLink = (el) => !!el.parentElement && !!el.parentElement.closest('a[href]')
    && !el.matches('a[href], button, input, select, textarea, summary, [role=button]');
  // A list or item the page marks expanded or not (Read the Docs' table of contents: its
  // `ul`, each `li` once clicked) around controls of its own: a group, not a control.
  const stateGroup = (el) => el.matches('ul[aria-expanded], ol[aria-expanded], li[aria-expanded]')
    && !el.matches(ACTING + ', [tabindex="0"], [role]') && !!el.querySelector(CONTROL);
  for (const el of deepAll('*')) {
    if (el.matches(any)) {
      order.set(el, order.size);
      if (focusGroup(el) || inButton(el) || inLink(el) || stateGroup(el)) continue;
      if (el.matches(FIELDS) && !el.matches(query)) fieldEls.push(el);
      else all.push(el);
    } else if (el.parentElement && el !== document.body && pointer(el)) {
      order.set(el, order.size);
      all.push(el);
    }
  }
  // Signatures and sibling counts, computed once per element and per parent: a list of
  // thousands of rows is read in linear time.
  const sigs = new WeakMap();
  const signature = (el) => {
    let s = sigs.get(el);
    if (s === undefined) {
      const names = el.classList;
      s = el.tagName + '.' + (names.length > 1 ? Array.from(names).sort().join('.') : names.length ? names[0] : '');
      sigs.set(el, s);
    }
    return s;
  };
  const same = new Map();  // element -> how many of its parent's children share its signature
  const sameSiblings = (el) => {
    let n = same.get(el);
    if (n !== undefined) return n;
    const parent = el.parentElement;
    if (!parent) return 0;
    const c = new Map();
    for (let ch = parent.firstElementChild; ch; ch = ch.nextElementSibling) { const s = signature(ch); c.set(s, (c.get(s) || 0) + 1); }
    for (let ch = parent.firstElementChild; ch; ch = ch.nextElementSibling) same.set(ch, c.get(signature(ch)));
    return same.get(el);
  };
  const containers = new WeakMap();
  const containerOfFast = (el) => {
    const parent = el.parentElement;
    if (!parent) return null;
    if (containers.has(parent)) return containers.get(parent);
    const c = containerOf(el);
    containers.set(parent, c);
    return c;
  };
  // `#install` where an element has that id: it only scrolls (`#` alone is a script's link).
  const inPageAnchor = (href) => { try { return href.length > 1 && href[0] === '#' && !!document.getElementById(decodeURIComponent(href.slice(1))); } catch (e) { return false; } };
  // A tab's panel drawn inside its tablist (TiddlyWiki's): what is in it is the panel's, not a tab.
  const inPanel = (panel, list) => !!panel && list.contains(panel);
  // A panel's selector, worked out once for all the controls inside it.
  const panelSelectors = new Map();
  const panelSelector = (panel) => {
    if (!panel) return '';
    if (!panelSelectors.has(panel)) panelSelectors.set(panel, selectorOf(panel));
    return panelSelectors.get(panel);
  };
  // The panel a tab switches: the one it names, else the shown panel inside or beside its tablist.
  const panelOfTab = (el) => {
    const named = (el.getAttribute('aria-controls') || '').split(' ')[0];
    const byId = named && document.getElementById(named);
    if (byId) return byId;
    const list = el.closest('[role=tablist]');
    if (!list) return null;
    const near = [...list.querySelectorAll('[role=tabpanel]'), ...Array.from(list.parentElement ? list.parentElement.children : []).filter(c => c.matches('[role=tabpanel]'))];
    return near.find(visible) || null;
  };
  const sameOrigin = (el) => { try { return new URL(el.href).origin === location.origin; } catch (e) { return false; } };
  // A link to another page of the site: the same origin, another path (not this page with
  // another query, rustdoc's `?search=`, or anchor), a page by its name (a last part without a
  // dot, or `.html`, `.php` and the like; not a file to download). Once per link.
  const PAGE_PATH = /(\/[^./]*|\.(html?|php|aspx?|jsp))$/i;
  const pageLinks = new Map();
  const pageLink = (a) => {
    if (!a) return false;
    let is = pageLinks.get(a);
    if (is === undefined) {
      is = !!a.href && !a.target && a.origin === location.origin
        && a.pathname !== location.pathname && PAGE_PATH.test(a.pathname || '');
      pageLinks.set(a, is);
    }
    return is;
  };
  // The link a row opens with: its first, with no text before it (not one inside a sentence).
  const leaders = new Map();
  const leader = (row) => {
    let a = leaders.get(row);
    if (a === undefined) {
      a = row.querySelector('a[href]');
      if (a) {
        const before = document.createRange();
        before.setStart(row, 0);
        before.setEndBefore(a);
        if (before.toString().trim()) a = null;
      }
      leaders.set(row, a);
    }
    return a;
  };
  // An index of pages in the page's text: rows side by side (a list's items, a table's rows, a
  // definition list's terms, `div`s alike), four in five of them or more each opening with a
  // link to another page of the site, two or more (one in a list or table): rustdoc's table of
  // a module's items, a directory of subpages. Not a page's header or footer. A link opening
  // one is as the page's navigation: the pages it lists are the page's to visit.
  const indexRows = new Map();
  const LIST = /^(UL|OL|DL|TABLE|TBODY)$/;
  const FRAME = 'header, footer, [role=banner], [role=contentinfo]';
  const indexLink = (el) => {
    if (el.closest(FRAME)) return false;
    for (let row = el.parentElement, n = 0; row && n < 4 && !row.matches(MAIN) && row !== document.body; row = row.parentElement, n++) {
      if (leader(row) !== el) return false;
      if (row.tagName === 'TD' || row.tagName === 'TH') continue;  // a cell: the row is its `tr`
      const parent = row.parentElement;
      if (!indexRows.has(parent)) indexRows.set(parent, new Map());
      const byTag = indexRows.get(parent);
      let led = byTag.get(row.tagName);
      if (led === undefined) {
        const all = Array.from(parent.children).filter((r) => r.tagName === row.tagName);
        const leading = all.filter((r) => pageLink(leader(r))).length;
        led = leading >= 0.8 * all.length && (leading >= 2 || (leading === 1 && LIST.test(parent.tagName)));
        byTag.set(row.tagName, led);
      }
      if (led) return true;
    }
    return false;
  };
  const clean = (t, n) => (t || '').replace(/[\u200b-\u200d\ufeff]/g, '').replace(/\s+/g, ' ').trim().slice(0, n);
  // Text with a space between elements' texts ("Red shoe $40.99 Add to cart"), without the
  // options of a select inside (a label's own words only).
  const UNREAD = 'select, script, style, template';
  const textOf = (root, n) => {
    if (root.closest(UNREAD)) return '';
    // A text's parent is looked up only in a root that holds such an element.
    const check = !!root.querySelector(UNREAD);
    const parts = [];
    let size = 0;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t && size < n; t = walker.nextNode()) {
      const p = check && t.parentElement;
      if (p && p.closest(UNREAD)) continue;
      parts.push(t.data); size += t.data.length;
    }
    return clean(parts.join(' '), n);
  };
  // The landmark or named section an element sits in: "nav", "form: Sign in", "dialog: Cookies".
  const regions = new Map();
  const regionOf = (el) => {
    const r = inside(el.parentElement).region;
    if (!r) return '';
    if (regions.has(r)) return regions.get(r);
    const kind = (r.getAttribute('role') || r.tagName.toLowerCase()).replace('complementary', 'aside').replace('contentinfo', 'footer').replace('banner', 'header').replace('navigation', 'nav');
    const heading = r.querySelector('legend, h1, h2, h3, h4');
    const name = clean(r.getAttribute('aria-label') || (heading ? heading.textContent : ''), 40);
    const value = name ? `${kind}: ${name}` : kind;
    regions.set(r, value);
    return value;
  };
  // What an element sits inside (a consent banner, a dialog, a filter panel, navigation, a
  // landmark), worked out once per ancestor rather than by `closest` for every element.
  const within = new WeakMap();
  const NONE = {cookie: null, dialog: false, facet: false, nav: false, region: null, marked: false};
  const inside = (el) => {
    if (!el || el.nodeType !== 1) return NONE;
    let f = within.get(el);
    if (f) return f;
    const up = inside(el.parentElement);
    f = {cookie: up.cookie || (el.matches(COOKIE) ? el : null), dialog: up.dialog || el.matches(DIALOG),
         marked: up.marked || el.hasAttribute('data-lore-hidden'),
         facet: up.facet || el.matches(FACETS), nav: up.nav || isNav(el),
         region: el.matches(LANDMARK) ? el : up.region};
    within.set(el, f);
    return f;
  };
  // Visible, and not marked hidden (`data-lore-hidden`) by the browser the DOM came from: an
  // agent's DOM arrives without its stylesheets, so what they hide is marked before sending.
  const shown_ = (el) => visible(el) && !inside(el).marked;
  // A repeated item (a product card, a result row): the nearest ancestor with 2+ siblings like it.
  // Worked out once per parent: the controls of a card share it.
  const itemsAbove = new Map();
  const itemOf = (el) => {
    const parent = el.parentElement;
    if (!parent || el === document.body) return null;
    let found = itemsAbove.get(parent);
    if (found !== undefined) return found;
    found = null;
    let cur = parent;
    for (let depth = 1; cur && cur !== document.body && depth < 6; depth++, cur = cur.parentElement) {
      if (sameSiblings(cur) >= 3 && cur.parentElement && cur.parentElement !== document.body) { found = cur; break; }
    }
    itemsAbove.set(parent, found);
    return found;
  };
  const top = (el) => Math.round(rectOf(el).top + scrolled().y);
  const fieldLabel = (el) => {
    let t = el.getAttribute('aria-label') || '';
    if (!t && el.id) { const l = document.querySelector(`label[for="${CSS.escape(el.id)}"]`); if (l) t = l.textContent; }
    if (!t) { const l = el.closest('label'); if (l) t = textOf(l, 80); }
    const by = el.getAttribute('aria-labelledby');
    if (!t && by) { const l = document.getElementById(by.split(' ')[0]); if (l) t = l.textContent; }
    return clean(t || el.getAttribute('placeholder') || el.getAttribute('title') || el.getAttribute('name') || '', 80);
  };
  const RICH = 'h2, h3, h4, h5, time, img, cite, [class*=price i], [class*=date i], [class*=snippet i], [class*=desc i], [class*=summary i]';
  const items = new Map();  // item element -> index in `lists`
  const lists = [];
  const listOf = (item) => {
    if (items.has(item)) return items.get(item);
    const parent = item.parentElement;
    let index = lists.findIndex(l => l.el === parent && l.sig === signature(item));
    if (index < 0) {
      const peers = Array.from(parent.children).filter(c => signature(c) === signature(item));
      const prices = peers.filter(p => PRICE.test(p.textContent)).length;
      // Items that say more than a link: a heading, a snippet, a date, an image, a price.
      const rich = peers.filter(p => p.querySelector(RICH)).length;
      // Document sections repeat too, but read long: listing items are short.
      const length = Math.round(peers.slice(0, 50).reduce((n, p) => n + p.textContent.length, 0) / Math.min(50, peers.length));
      index = lists.push({el: parent, sig: signature(item), selector: selectorOf(parent), tag: item.tagName.toLowerCase(), items: peers.length, prices, rich, length,
                          visible: peers.filter(visible).length, region: regionOf(parent)}) - 1;
    }
    items.set(item, index);
    return index;
  };
  // A repeated item's text, once: the product name and price beside its "Add to cart".
  const contexts = [];
  const contextIndex = new Map();
  const contextOf = (item) => {
    let i = contextIndex.get(item);
    if (i === undefined) { i = contexts.push(textOf(item, 160)) - 1; contextIndex.set(item, i); }
    return i;
  };
  // Whether a control switches a code sample's language: a language's name, among three or
  // more in its list or menu, or next to a code block.
  const variantOf = (el, text) => {
    if (!LANGS.test(text)) return false;
    const group = el.closest('[role=listbox], [role=menu], [role=tablist], [role=radiogroup], ul, ol, select');
    if (group && Array.from(group.querySelectorAll('[role=option], [role=menuitem], [role=menuitemradio], [role=tab], li, option, button'))
      .filter(o => LANGS.test(clean(o.textContent, 80))).length >= 3) return true;
    for (let a = el.parentElement, n = 0; a && n < 5; a = a.parentElement, n++) if (a.querySelector('pre')) return true;
    return false;
  };
  // A tab strip drawn without roles: two to eight buttons side by side, exactly one of them
  // marked as the one showing (pressed, current, selected, or an "active" class), as a
  // Model | Example toggle. The explorer acts on it as on tabs; the agent scan still calls
  // it a button.
  const MARKED = /^(active|selected|current|is-active|is-selected|is-current)$/;
  const marked = (b) => ['aria-pressed', 'aria-current', 'aria-selected'].some(a => b.getAttribute(a) === 'true')
    || Array.from(b.classList).some(c => MARKED.test(c));
  const segment = (el) => {
    if (el.tagName !== 'BUTTON' || !el.parentElement) return false;
    const group = Array.from(el.parentElement.children).filter(b => b.tagName === 'BUTTON');
    return group.length >= 2 && group.length <= 8 && group.filter(marked).length === 1;
  };
  // A choice in an open listbox or menu (a response code's "default" under "200"): the control
  // that stands for it, unless it is the one chosen already. The explorer picks each, as tabs.
  const OPTION = '[role=option], [role=menuitem], [role=menuitemradio], [role=menuitemcheckbox]';
  const choiceOf = (el) => {
    const o = el.closest(OPTION);
    return o && o.closest('[role=listbox], [role=menu]') ? o : null;
  };
  const chosen = (o) => o.getAttribute('aria-selected') === 'true' || o.getAttribute('aria-checked') === 'true';
  // A select drawn as a button (no aria-haspopup): it or a near ancestor is classed as a
  // select, combobox or picker (Kong's "select-dropdown"; not any dropdown: "tryit-dropdown"
  // holds a console).
  const PICKER = /(^|[-_])(select|combobox|picker|listbox)([-_]|$)/i;
  const picker = (el) => {
    for (let a = el, n = 0; a && n < 3; a = a.parentElement, n++) {
      if (Array.from(a.classList).some(c => PICKER.test(c))) return true;
    }
    return false;
  };
  // An image's alt text, `data-lore-alt` in the scan page of an agent's DOM (scan.py's _inert).
  const IMAGE = 'img[alt], img[data-lore-alt]';
  const altOf = (el) => el && (el.getAttribute('alt') || el.getAttribute('data-lore-alt'));
  const WORDED = /[\p{L}\p{N}]/u;
  const NEXT = /^(next|next page|›|»|>|older|next ›|next »|next →)$/i;
  const candidates = [];
  const byType = {};
  let shown = 0;
  for (const el of all) {
    // A list row whose own control is listed too: the control stands for the row.
    if (el.matches('li[data-id], tr[data-id], ' + OPTION) && el.querySelector('a[href], button, [role=button]')) continue;
    const isVisible = shown_(el);
    if (isVisible) shown++;
    // Named by its title where its text is a glyph: rustdoc's "[−]" is "collapse all docs",
    // its "?" "help".
    const own = label(el);
    const text = (WORDED.test(own) ? own : '') || clean(el.getAttribute('title') || altOf(el) || altOf(el.querySelector(IMAGE)), 80) || own;
    const role = el.getAttribute('role') || '';
    const href = el.tagName === 'A' ? el.getAttribute('href') || '' : '';
    let pattern = 'button';
    const at = inside(el);
    const inCookie = at.cookie;
    const siblings = sameSiblings(el);
    const item = el.closest('li, [role=listitem], [role=option], tr');
    const itemSiblings = item ? sameSiblings(item) : 0;
    const inNav = at.nav;
    const aria = el.getAttribute('aria-label') || '';
    const title = clean(el.getAttribute('title') || '', 80);
    const tabPanel = el.closest('[role=tabpanel]');
    const tabList = el.closest('[role=tablist]');
    if (el.matches('input[type=submit], input[type=image]')) pattern = 'submit';
    else if (inCookie && ACCEPT.test(text)) pattern = 'cookie_dismiss';
    else if (role === 'tab' || (tabList && !inPanel(tabPanel, tabList))) pattern = 'tab';
    else if (el.tagName === 'SUMMARY') pattern = 'details';
    else if (href && ROUTE.test(href)) pattern = href.replace(/^#!?\/?/, '') ? 'route' : 'link';
    else if (NEXT.test(text) || NEXT.test(own) || el.getAttribute('rel') === 'next' || /\bnext\b/i.test(aria)) pattern = 'pagination';
    else if (/\b(load|show|see|view) more\b|more results/i.test(text)) pattern = 'load_more';
    else if (el.getAttribute('aria-expanded') === 'false') pattern = 'expander';
    else if (el.hasAttribute('aria-haspopup')) pattern = 'dropdown';
    else if (inPageAnchor(href) && !el.hasAttribute('aria-controls')) pattern = 'anchor';
    else if (href && inNav && !href.startsWith('javascript:') && !el.target && sameOrigin(el)) pattern = 'nav_link';
    else if (item && itemSiblings >= 3 && !(href && !href.startsWith('#') && !href.startsWith('javascript'))) pattern = 'list_item';
    else if (href && !href.startsWith('#') && !href.startsWith('javascript:')) pattern = 'link';
    else if (el.getAttribute('aria-expanded') === 'true') pattern = 'expanded';
    byType[pattern] = (byType[pattern] || 0) + 1;
    const disabled = el.disabled || el.getAttribute('aria-disabled') === 'true';
    const repeated = itemOf(el);
    const container = containerOfFast(el);
    const choice = choiceOf(el);
    candidates.push({
      selector: selectorOf(el), tag: el.tagName.toLowerCase(), role, label: text, pattern,
      visible: isVisible, disabled: !!disabled, destructive: DESTRUCTIVE.test(text) && !DISCLOSURES.has(pattern) && pattern !== 'route' && !operationLink(el),
      href, title: title !== text ? title : '', list: pattern === 'list_item' && item ? selectorOf(item.parentElement) : '',
      item: pattern === 'list_item' && item ? selectorOf(item) : '',
      siblings, nav: inNav, index: pattern === 'link' && pageLink(el) && indexLink(el), chrome: CHROME.test(text) || CHROME.test(title) || searchLauncher(el, text) || commands(el, text, title, pattern), variant: variantOf(el, text),
      segment: pattern === 'button' && segment(el),
      option: !!choice && !chosen(choice) && !(href && !href.startsWith('#')),
      picker: pattern === 'button' && !el.closest('[role=listbox], [role=menu]') && picker(el),
      open: el.tagName === 'SUMMARY' && !!el.parentElement && el.parentElement.hasAttribute('open'),
      selected: el.getAttribute('aria-selected') === 'true',
      container: container ? selectorOf(container) : '',
      // the tab panel it sits in, and the one a tab switches (its links are followed first)
      panel: panelSelector(tabPanel),
      controls: pattern === 'tab' ? panelSelector(panelOfTab(el)) : '',
      url: href ? el.href : '',
      region: regionOf(el), top: top(el), order: order.get(el),
      context: repeated ? contextOf(repeated) : -1,
      // Named by aria-label, it may say more in its text ("GET /pets": "Returns all pets").
      text: el.hasAttribute('aria-label') ? textOf(el, 160) : '',
      group: repeated ? listOf(repeated) : -1,
      cookie: !!inCookie, dialog: at.dialog, facet: at.facet,
      form: !!el.closest('form'),
      pressed: el.getAttribute('aria-pressed') === 'true' || el.getAttribute('aria-current') === 'page' || el.getAttribute('aria-selected') === 'true',
    });
  }
  const fields = [];
  for (const el of fieldEls) {
    const type = el.tagName === 'INPUT' ? (el.getAttribute('type') || 'text').toLowerCase() : (el.getAttribute('role') || el.tagName.toLowerCase());
    const form = el.form || el.closest('form, [role=search], [role=form]');
    const options = el.tagName === 'SELECT' ? Array.from(el.options).slice(0, 30).map(o => clean(o.textContent, 40)) : [];
    const repeated = itemOf(el);
    fields.push({
      selector: selectorOf(el), tag: el.tagName.toLowerCase(), type, name: el.getAttribute('name') || el.id || '',
      label: fieldLabel(el), placeholder: el.getAttribute('placeholder') || '', visible: shown_(el),
      disabled: !!el.disabled || !!el.closest('fieldset[disabled]') || el.getAttribute('aria-disabled') === 'true', region: regionOf(el), top: top(el), order: order.get(el), options,
      form: form ? selectorOf(form) : '', search: el.matches('input[type=search], [role=searchbox], [name*=search i], [placeholder*=search i], [aria-label*=search i], [name=q], [role=search] input') || !!el.closest('[role=search], form[action*=search i]'),
      context: repeated ? contextOf(repeated) : -1,
      cookie: !!inside(el).cookie, dialog: inside(el).dialog, facet: inside(el).facet,
      checked: !!el.checked,
    });
  }
  const inputs = fields.filter(f => f.search && f.visible && f.type !== 'checkbox' && f.type !== 'radio').map(f => f.selector);
  const dialogs = deepAll(DIALOG).filter(shown_).map(d => ({selector: selectorOf(d), label: clean(d.getAttribute('aria-label') || (d.querySelector('h1, h2, h3, h4') || {}).textContent || d.textContent, 80), cookie: d.matches(COOKIE) || !!d.closest(COOKIE) || /\bcookies?\b|\bconsent\b/i.test(d.textContent.slice(0, 2000))}));
  const banners = Array.from(document.querySelectorAll(COOKIE)).filter(b => b !== document.documentElement && b !== document.body && shown_(b) && !(b.parentElement && b.parentElement.closest(COOKIE)) && /\bcookies?\b|\bconsent\b|\bprivacy\b/i.test(b.textContent) && b.textContent.length < 5000)
    .map(b => ({selector: selectorOf(b), label: clean(b.textContent, 80)}));
  const pagers = Array.from(document.querySelectorAll('[class*=pagination i], [class*=pager i], nav[aria-label*=pag i], [role=navigation][aria-label*=pag i]'))
    .filter(p => p !== document.documentElement && p !== document.body && !(p.parentElement && p.parentElement.closest('[class*=pagination i], [class*=pager i]'))).map(p => ({selector: selectorOf(p), label: clean(p.textContent, 80)}));
  return {total: all.length, shown, byType, candidates, searchInputs: inputs, fields, contexts,
          lists: lists.map(({el, sig, ...rest}) => rest), dialogs, banners, pagers,
          title: document.title || '', viewport: {width: window.innerWidth, height: window.innerHeight}};
}"""
)

# What the person sees, as element signatures: for "did anything change" and state loops.
SIGNATURES = (
    "() => {"
    + _COMMON
    + r"""
  const out = [];
  const framed = frameDocs().flatMap((d) => [...d.body.querySelectorAll('*')]);
  for (const el of document.body ? [...deepAll('*'), ...framed] : []) {
    if (!visible(el)) continue;
    const own = Array.from(el.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join(' ')
      .replace(/\s+/g, ' ').trim().slice(0, 60);
    out.push(el.tagName + '.' + Array.from(el.classList).sort().join('.') + '|' + own);
  }
  return {signatures: out, url: location.href, doc: window.__loreDoc || '', height: document.documentElement.scrollHeight,
          dialogs: document.querySelectorAll('dialog[open], [role=dialog], [aria-modal=true]').length};
}"""
)

# Where the content changed since the last reset: the nearest region-like ancestor of every
# node whose children or text changed (class and style flips on the clicked control aside).
CHANGED_REGION = (
    "() => {"
    + _COMMON
    + r"""
  const targets = (window.__loreMutated || []).filter(n => n && n.isConnected);
  window.__loreMutated = [];
  if (!targets.length) return null;
  const up = parentAcross;
  const chain = (n) => { const out = []; for (let c = n; c; c = up(c)) out.unshift(c); return out; };
  let common = chain(targets[0]);
  for (const t of targets.slice(1)) {
    const other = chain(t);
    let i = 0;
    while (i < common.length && i < other.length && common[i] === other[i]) i++;
    common = common.slice(0, i);
  }
  let el = common[common.length - 1];
  const REGION = '[id], [role=dialog], [role=tabpanel], [role=region], [role=list], [role=listbox], section, article, aside, dialog, details, ul, ol, table, main';
  while (el && el !== document.body && !el.matches(REGION)) el = up(el);
  return el && el !== document.body && el !== document.documentElement ? selectorOf(el) : null;
}"""
)

# Whether the content changed since the last reset outside the container (see `containerOf`,
# across shadow roots) of the element at `selector` (`>>` steps into a shadow root): what a
# click on a disclosure showed beyond its own operation or section (the next operation,
# rendered as the page scrolled). Changes in the document's head (a title), to the body's own
# children (a toast) and in navigation do not count. False when the element is gone.
CHANGED_BESIDE = (
    "(selector) => {"
    + _COMMON
    + r"""
  const el = elementAt(selector);
  if (!el) return false;
  const up = parentAcross;
  const box = containerOf(el, up) || el;
  const within = (n, outer) => { for (let c = n; c; c = up(c)) if (c === outer) return true; return false; };
  return (window.__loreMutated || []).some(n => n && n.isConnected && n !== document.body
    && within(n, document.body) && !within(n, box) && !inNav(n) && visible(n));
}"""
)

RESET_CHANGES = "() => { window.__loreMutated = []; }"

# The addresses of the links a person sees in the navigation around `selector`'s element (a
# group's toggle), to tell what opening the group showed.
VISIBLE_LINKS = (
    "(selector) => {"
    + _COMMON
    + r"""
  const el = elementAt(selector);
  if (!el) return [];
  return Array.from(navOf(el).querySelectorAll('a[href]')).filter(visible).map(a => a.href);
}"""
)

# Whether a navigation group opened earlier is shut again (back at the page after a route, its
# sections drawn closed anew): null when not; else the links it `revealed` when opened, none of
# them shown now, when it showed any; else the addresses of the links the item it heads holds
# beside its own label, none of them shown, or [] when the group it heads says by its class
# that it is collapsed (Vocs draws a shut section's links not at all). The selector may step
# into shadow roots, as CHANGED_BESIDE's.
SHUT_AGAIN = (
    "([selector, revealed]) => {"
    + _COMMON
    + r"""
  const el = elementAt(selector);
  if (!el) return null;
  if (revealed.length) {
    // The links it showed when it was opened: shut while none of them shows in its navigation
    // (a tree that draws a group's rows only when it opens has none at all, Doxygen's).
    const wanted = new Set(revealed);
    const shown = Array.from(navOf(el).querySelectorAll('a[href]')).some(a => wanted.has(a.href) && visible(a));
    return shown ? null : revealed;
  }
  const item = el.closest('li');
  const links = item ? Array.from(item.querySelectorAll('a[href]')).filter(a => !a.contains(el)) : [];
  if (links.length > 0 && !links.some(visible)) return links.map(a => a.href);
  const group = el.parentElement;
  return group && COLLAPSED.test(group.getAttribute('class') || '') ? [] : null;
}""".replace("COLLAPSED", COLLAPSED_CLASS)
)
