"""JavaScript the explorer runs inside the page (through Playwright's `evaluate`)."""
# ruff: noqa: E501  (JavaScript reads better unwrapped)

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

QUIET_FOR_MS = "() => performance.now() - (window.__loreLastMutation || 0)"

# Stable selectors, visibility and a label, shared by the functions below.
_COMMON = r"""
const STABLE_ID = /^[A-Za-z][\w-]{0,80}$/;
// Every element matching `sel`, open shadow roots included (web components render there).
const deepAll = (sel) => {
  const out = [];
  const visit = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches(sel)) out.push(el);
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return out;
};
const GENERATED = /\d{4,}|^(ember|react|radix|headlessui|mui|rc|ng)[-_]?\d/i;
const stableId = (el) => el.id && STABLE_ID.test(el.id) && !GENERATED.test(el.id) ? el.id : null;
const unique = (sel) => { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
const selectorOf = (el) => {
  const parts = [];
  let cur = el;
  const root = el.getRootNode();
  if (root instanceof ShadowRoot) {
    // Playwright's CSS pierces open shadow roots: the host's selector, then the path inside.
    const inner = [];
    for (let c = el; c && c.nodeType === 1; c = c.parentElement) {
      const id = stableId(c);
      if (id) { inner.unshift('#' + CSS.escape(id)); break; }
      const same = c.parentElement ? Array.from(c.parentElement.children).filter(x => x.tagName === c.tagName) : [];
      inner.unshift(c.tagName.toLowerCase() + (same.length > 1 ? `:nth-of-type(${same.indexOf(c) + 1})` : ''));
    }
    return selectorOf(root.host) + ' >> ' + inner.join(' > ');
  }
  while (cur && cur.nodeType === 1 && cur !== document.body && cur !== document.documentElement) {
    const id = stableId(cur);
    if (id) { parts.unshift('#' + CSS.escape(id)); break; }
    const testId = cur.getAttribute('data-testid');
    if (testId && !testId.includes('"')) {
      const sel = `[data-testid="${testId}"]`;
      if (unique(sel)) { parts.unshift(sel); break; }
    }
    let part = cur.tagName.toLowerCase();
    const parent = cur.parentElement;
    if (parent) {
      const same = Array.from(parent.children).filter(c => c.tagName === cur.tagName);
      if (same.length > 1) part += `:nth-of-type(${same.indexOf(cur) + 1})`;
    }
    parts.unshift(part);
    cur = parent;
  }
  if (!parts.length || !parts[0].startsWith('#') && !parts[0].startsWith('[')) parts.unshift('body');
  return parts.join(' > ');
};
// Visible to a person who scrolls: laid out, not hidden, inside the document (above the
// viewport counts: a click scrolls it into view), not pushed off the page.
const visible = (el) => {
  if (!el.getClientRects().length) return false;
  const style = getComputedStyle(el);
  if (style.visibility === 'hidden' || parseFloat(style.opacity) === 0) return false;
  const r = el.getBoundingClientRect();
  return r.width > 1 && r.height > 1 && r.right + window.scrollX > 0 && r.bottom + window.scrollY > 0;
};
// Navigation: sidebars, tables of contents and menus (their links swap the main view).
const NAV = 'nav, aside, [role=navigation], [role=tree], [class*=sidebar i], [id*=sidebar i], [class*=toc i], [class*=menu i]';
// The nearest container that tells equal controls apart: a repeated block (an API operation,
// a card), a list item, a section or an element with a stable id.
const containerOf = (el) => {
  for (let cur = el.parentElement; cur && cur !== document.body; cur = cur.parentElement) {
    if (stableId(cur) || cur.matches('section, article, li, tr, details, [role=listitem], [role=row], [role=tabpanel]')) return cur;
    const parent = cur.parentElement;
    if (parent && cur.className && typeof cur.className === 'string') {
      const same = Array.from(parent.children).filter(c => c.tagName === cur.tagName && c.className === cur.className);
      if (same.length >= 2) return cur;
    }
  }
  return null;
};
const label = (el) => (el.getAttribute('aria-label') || el.innerText || el.value || el.title || '')
  .replace(/\s+/g, ' ').trim().slice(0, 80);
"""

# Marks the topmost elements a person cannot see (computed style), for hidden-text safety.
MARK_HIDDEN = (
    "() => {"
    + _COMMON
    + r"""
  let marked = 0;
  document.querySelectorAll('[data-lore-hidden]').forEach(el => el.removeAttribute('data-lore-hidden'));
  const walk = (el) => {
    for (const child of [...el.children, ...(el.shadowRoot ? el.shadowRoot.children : [])]) {
      const style = getComputedStyle(child);
      const r = child.getBoundingClientRect();
      const offscreen = r.right + window.scrollX < -100 || r.bottom + window.scrollY < -100 || r.left > 10000;
      const tiny = parseFloat(style.fontSize) < 2;
      const clipped = style.clipPath === 'inset(50%)' || style.clip === 'rect(0px, 0px, 0px, 0px)';
      const invisible = style.display === 'none' || style.visibility === 'hidden'
        || parseFloat(style.opacity) === 0 || style.color === 'rgba(0, 0, 0, 0)';
      if ((invisible || offscreen || tiny || clipped) && child.textContent.trim()) {
        child.setAttribute('data-lore-hidden', '1'); marked++;
      } else walk(child);
    }
  };
  if (document.body) walk(document.body);
  return marked;
}"""
)

# Every actionable element: selector, pattern, label and a summary by type.
SCAN = (
    "() => {"
    + _COMMON
    + r"""
  const DESTRUCTIVE = /\b(delete|remove|log ?out|sign ?out|unsubscribe|pay|purchase|buy|checkout|deactivate|reset|destroy|drop|erase|submit|send|transfer|execute|authori[sz]e|save|confirm|publish|place order|sign ?up|register)\b/i;
  // Disclosure controls only show and hide: "DELETE /pets/{id}" on an expander deletes nothing.
  const DISCLOSURES = new Set(['cookie_dismiss', 'tab', 'details', 'expander', 'expanded']);
  const ACCEPT = /^(accept|agree|ok|got it|allow( all)?|i understand|dismiss|close|accept all)\b/i;
  // Controls that hide the page's own chrome (its navigation, a sidebar, the menu) or skip past it.
  const CHROME = /\b(hide|close|collapse|toggle|open)\b.{0,30}\b(nav|navigation|sidebar|side bar|menu|toc|table of contents|drawer)\b|^(menu|☰|skip to (main )?content|skip navigation|toggle (dark|light) mode|dark mode|light mode|theme)$/i;
  const ROUTE = /^#!?\//;
  const query = 'a[href], button, [role=button], [role=tab], [role=menuitem], [role=option], summary, '
    + '[aria-expanded], [aria-haspopup], [onclick], input[type=button], [tabindex="0"], li[data-id], tr[data-id]';
  const all = deepAll(query);
  const signature = (el) => el.tagName + '.' + Array.from(el.classList).sort().join('.');
  // `#install` where an element has that id: it only scrolls (`#` alone is a script's link).
  const inPageAnchor = (href) => { try { return href.length > 1 && href[0] === '#' && !!document.getElementById(decodeURIComponent(href.slice(1))); } catch (e) { return false; } };
  const sameOrigin = (el) => { try { return new URL(el.href).origin === location.origin; } catch (e) { return false; } };
  const candidates = [];
  const byType = {};
  let shown = 0;
  for (const el of all) {
    // A list row whose own control is listed too: the control stands for the row.
    if (el.matches('li[data-id], tr[data-id]') && el.querySelector('a[href], button, [role=button]')) continue;
    const isVisible = visible(el);
    if (isVisible) shown++;
    const text = label(el);
    const role = el.getAttribute('role') || '';
    const href = el.tagName === 'A' ? el.getAttribute('href') || '' : '';
    let pattern = 'button';
    const inCookie = el.closest('[id*=cookie i], [class*=cookie i], [id*=consent i], [class*=consent i], [aria-label*=cookie i]');
    const parent = el.parentElement;
    const siblings = parent ? Array.from(parent.children).filter(c => signature(c) === signature(el)) : [];
    const item = el.closest('li, [role=listitem], [role=option], tr');
    const itemSiblings = item && item.parentElement
      ? Array.from(item.parentElement.children).filter(c => signature(c) === signature(item)) : [];
    const inNav = !!el.closest(NAV);
    if (inCookie && ACCEPT.test(text)) pattern = 'cookie_dismiss';
    else if (role === 'tab' || el.closest('[role=tablist]')) pattern = 'tab';
    else if (el.tagName === 'SUMMARY') pattern = 'details';
    else if (href && ROUTE.test(href)) pattern = href.replace(/^#!?\/?/, '') ? 'route' : 'link';
    else if (/^(next|next page|›|»|>|older)$/i.test(text) || el.getAttribute('rel') === 'next' || /next/i.test(el.getAttribute('aria-label') || '')) pattern = 'pagination';
    else if (/\b(load|show|see|view) more\b|more results/i.test(text)) pattern = 'load_more';
    else if (el.getAttribute('aria-expanded') === 'false') pattern = 'expander';
    else if (el.hasAttribute('aria-haspopup')) pattern = 'dropdown';
    else if (inPageAnchor(href) && !el.hasAttribute('aria-controls')) pattern = 'anchor';
    else if (href && inNav && !href.startsWith('javascript:') && !el.target && sameOrigin(el)) pattern = 'nav_link';
    else if (item && itemSiblings.length >= 3 && !(href && !href.startsWith('#') && !href.startsWith('javascript'))) pattern = 'list_item';
    else if (href && !href.startsWith('#') && !href.startsWith('javascript:')) pattern = 'link';
    else if (el.getAttribute('aria-expanded') === 'true') pattern = 'expanded';
    byType[pattern] = (byType[pattern] || 0) + 1;
    const disabled = el.disabled || el.getAttribute('aria-disabled') === 'true';
    candidates.push({
      selector: selectorOf(el), tag: el.tagName.toLowerCase(), role, label: text, pattern,
      visible: isVisible, disabled: !!disabled, destructive: DESTRUCTIVE.test(text) && !DISCLOSURES.has(pattern),
      href, list: pattern === 'list_item' && item ? selectorOf(item.parentElement) : '',
      item: pattern === 'list_item' && item ? selectorOf(item) : '',
      siblings: siblings.length, nav: inNav, chrome: CHROME.test(text),
      container: (() => { const c = containerOf(el); return c ? selectorOf(c) : ''; })(),
      url: href ? el.href : '',
    });
  }
  const inputs = deepAll('input[type=search], input[name*=search i], input[placeholder*=search i], [role=searchbox]')
    .filter(visible).map(selectorOf);
  return {total: all.length, shown, byType, candidates, searchInputs: inputs};
}"""
)

# What the person sees, as element signatures: for "did anything change" and state loops.
SIGNATURES = (
    "() => {"
    + _COMMON
    + r"""
  const out = [];
  for (const el of document.body ? deepAll('*') : []) {
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
  const up = (c) => c.parentElement || (c.getRootNode() instanceof ShadowRoot ? c.getRootNode().host : null);
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

RESET_CHANGES = "() => { window.__loreMutated = []; }"

# The DOM as HTML with open shadow roots flattened into their hosts (a slot shows what is
# assigned to it); null when the page has none, and its `page.content()` is used as it is.
SERIALIZE = r"""() => {
  let shadows = false;
  for (const el of document.querySelectorAll('*')) if (el.shadowRoot) { shadows = true; break; }
  if (!shadows) return null;
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
  const text = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const value = (t) => t.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
  const out = [];
  const node = (n) => {
    if (n.nodeType === 3) { out.push(text(n.data)); return; }
    if (n.nodeType !== 1) return;
    const tag = n.localName;
    if (tag === 'script' || tag === 'style' || tag === 'template') return;
    if (tag === 'slot') {
      const assigned = n.assignedNodes({flatten: true});
      (assigned.length ? assigned : Array.from(n.childNodes)).forEach(node);
      return;
    }
    out.push('<' + tag);
    for (const a of n.attributes) if (/^[a-zA-Z_:][\w:.-]*$/.test(a.name)) out.push(` ${a.name}="${value(a.value)}"`);
    out.push('>');
    if (VOID.has(tag)) return;
    (n.shadowRoot ? n.shadowRoot.childNodes : n.childNodes).forEach(node);
    out.push('</' + tag + '>');
  };
  node(document.documentElement);
  return '<!DOCTYPE html>' + out.join('');
}"""
