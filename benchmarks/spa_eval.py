"""SPA evaluation: lore's capture in headless Chromium on apps from the npm registry, served on
127.0.0.1.

API references over the OpenAPI specs in ../shared/data/spa: Swagger UI (swagger-ui-dist),
RapiDoc (a web component with shadow DOM), Stoplight Elements (its web component) and Scalar.
Each operation counts as retrievable when a query naming it (summary, method and path,
restricted to the page) returns its description in the top 8 chunks, a query for each of its
parameters that name, and a query for each of its responses that response's description.
Reported after phase 1 alone (the page at load) and after exploring (target 100 %).

Documentation apps over Markdown nobody here wrote (the READMEs of packages installed from
npm beside the apps): docute (hash-routed, `#/page`) and a VitePress build (history-routed).
Every page must be reached, by a capture that explores the home page and by a spider crawl
that renders, and a distinctive sentence of each page must come back at rank <= 3 under that
page's URL (target 100 %).

Also counted: chunks superseded by actions that collapse, hide, close or copy (target 0).

Forty-two more apps, not run by default, check that what was tuned on the six holds on apps
lore was not tuned on: Redoc, openapi-explorer, Kong's spec renderer and OpenAPI UI (API
references over the same specs; Kong's shows each response code through a select drawn as a
button, OpenAPI UI each operation on a route of its own, reached from sidebar entries that are
plain styled boxes and titled in bold, no heading markup; vitepress-openapi, a VitePress site
built from each spec, each operation a page of its own; Zudoku, a React site built from each
spec, started at its overview page, the operations on routes of their own, headed by an empty
`h2` when they have no summary; docusaurus-openapi, a Docusaurus site built from each spec by
PaloAltoNetworks' OpenAPI plugin, started at the spec's info page, each operation a page of its
own with its responses in tabs by status code; starlight-openapi, a Starlight site built from
each spec by its OpenAPI plugin, a page of HTML for each operation; fumadocs-openapi, a
Fumadocs site built from each spec by its OpenAPI integration, each operation a page of its own
opening with a playground form, its responses an accordion drawing a code's description only
once opened; slate, Slate's layout as Shins draws the Markdown Widdershins writes from each spec:
one page, each operation's code samples in eight languages beside it, one shown at a time),
docsify (hash-routed, its
own headings linked as `#/page?id=heading`), a Docusaurus build (history-routed, every page a
folder whose address ends in a slash, asked for without it), an Rspress build (history-routed,
React; `rspress2` with Rspress 2), a Nextra build (Next.js exported static, clean URLs, a
theme picker in the sidebar), a Material for MkDocs build (from PyPI; pages its instant
navigation swaps in place), a VuePress 2 build (history-routed, Vue; `vuepress1` with VuePress
1, Vue 2), a Vocs build (history-routed, React, clean URLs), a Starlight build (Astro: no
client router, every page a document of its own; `starlight-redirects` the same
with links without their slash, which the static server redirects to the page's folder), a
Sphinx build (from PyPI, the Furo theme: a document per page too; `sphinx-rtd`,
`pydata-sphinx`, `sphinx-book`, `shibuya`, `sphinxawesome` and `sphinx-alabaster` with Read the
Docs', the PyData, Jupyter Book's, Shibuya's, the Awesome theme and Sphinx's default,
Alabaster), MkDocs' own two themes (`mkdocs-default`, `mkdocs-rtd`) and two more
(`mkdocs-bootswatch`, `mkdocs-terminal`), a HonKit build (GitBook's successor: its script swaps
each page in), a dumi build (React on Umi, history-routed, every page's HTML the same empty
shell the app fills, the parts in a top bar), a Zensical build (Material for MkDocs' successor,
with its defaults), a TypeDoc build (Markdown documents beside an API page, the sidebar drawn
by its script), a Retype build (pages Turbo swaps in, the sidebar drawn by its script) and a
Fumadocs build (Next.js exported static, the sidebar's folders shut until opened), a Docus
build (Nuxt 4 and Nuxt Content exported static, its home a landing page with no sidebar) and a
JSDoc build with Docdash (the pages its tutorials, beside an API) and a Storybook build (the
pages MDX documentation pages, each drawn in a same-origin frame beside the sidebar, the
sidebar's address `?path=/docs/<id>` naming it) and a TiddlyWiki (one HTML file, each page a
Markdown tiddler listed in a sidebar tab, "Contents", beside the wiki's own tabs, opened in
place by a link to `#<title>` while the address stays the file's: a page's sentence is looked
for under that address) and a Doxygen build (Debian's, its Markdown pages in a sidebar tree its
script draws, each part's pages drawn when the part is opened) and a rustdoc build (Debian's,
`rustc`: the pages a crate's modules' documentation, a part a module holding its pages' modules,
which only the module's page lists, in a table of its items); the builds group the pages in
sidebar categories, collapsed until clicked where the theme can.

    .venv/bin/python benchmarks/spa_eval.py
        [--apps a,b,...]  (default: the six above; --help names the others)
        [--specs a.yaml,b.yaml] [--data ../shared/data/spa]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from _common import DATA, serve_directory

from api import Lore, Settings
from api.jobs import run_job
from crawl import canonicalize
from retrieval import ChunkFilter
from spa_phases.explorer import HIDING  # the explorer's own test for hiding actions

# Sphinx and the MyST Markdown reader, the same under each of its themes below.
SPHINX = "sphinx==9.0.4 myst-parser==5.2.0"
PACKAGES = {
    "swagger-ui": "swagger-ui-dist@5.35.0",
    "rapidoc": "rapidoc@9.3.8",
    "elements": "@stoplight/elements@9.0.25",
    "scalar": "@scalar/api-reference@1.46.4",
    "docute": "docute@4.23.3",
    "vitepress": "vitepress@1.6.4",
    # Generality checks: apps lore was not tuned on, not run by default. Each is installed in
    # a folder of its own, so the READMEs the documentation pages come from stay the same
    # (redoc 3 needs a package the registry does not have: 2.5).
    "redoc": "redoc@2.5.4",
    "openapi-explorer": "openapi-explorer@2.4.820",
    "docsify": "docsify@4.13.1",
    "spec-renderer": "@kong/spec-renderer@1.107.15",
    "openapi-ui": "openapi-ui-dist@2.2.1",
    # A site generator, built here (history-routed, every page a folder: /slug/).
    "docusaurus": "@docusaurus/core@3.10.2 @docusaurus/preset-classic@3.10.2 react@18.3.1 "
    "react-dom@18.3.1",
    # Rspress, a React site generator on Rsbuild (history-routed, pages `/slug.html`), and its
    # second major version (a new theme and router; its configuration's dead-link check moved).
    "rspress": "rspress@1.47.2",
    "rspress2": "@rspress/core@2.0.22",
    # dumi 2, a React site generator on Umi (history-routed, each route's HTML an empty shell
    # the app fills: nothing to read without running it).
    "dumi": "dumi@2.4.50 react@18.3.1 react-dom@18.3.1",
    # An API reference built by VitePress from the spec, each operation a page of its own.
    "vitepress-openapi": "vitepress-openapi@0.2.1 vitepress@1.6.4 vue@3.5.45",
    # Zudoku, a React API-docs framework on Vite, built per spec: an overview at /api, the
    # operations on pages of their own (/api/~endpoints or one a tag), clean URLs.
    "zudoku": "zudoku@0.76.0 react@19.3.1 react-dom@19.3.1",
    # Docusaurus with PaloAltoNetworks' OpenAPI plugin and theme, built per spec: each operation
    # an MDX page of its own (parameters, request body, responses in tabs by status code, the
    # schemas in collapsible details), the spec's info page at the root. webpack is pinned:
    # with the registry's newest (5.105+) the client bundle fails ("Cannot get final name for
    # export '__esModule'"); and its Babel reads the theme's CommonJS files as modules unless
    # told to tell them apart (`docusaurus_openapi_sites`).
    "docusaurus-openapi": "@docusaurus/core@3.10.2 @docusaurus/preset-classic@3.10.2 "
    "react@18.3.1 react-dom@18.3.1 docusaurus-plugin-openapi-docs@5.2.0 "
    "docusaurus-theme-openapi-docs@5.2.0 docusaurus-plugin-sass@0.2.6 sass@1.101.0 "
    "webpack@5.104.1",
    # Nextra, a documentation theme on Next.js (App Router, exported static: clean URLs, the
    # client router fetching each page's server-component payload). zod is pinned: with the
    # registry's newest (4.6) its layout's props check fails every page ("expected
    # nonoptional ... at children").
    "nextra": "nextra@4.6.1 nextra-theme-docs@4.6.1 next@15.5.29 react@19.2.0 react-dom@19.2.0 "
    "zod@4.1.12",
    # Material for MkDocs (from PyPI, in a virtual environment of its own): static pages that
    # its "instant" navigation swaps in place (fetched, pushState), the sidebar's sections
    # drawn as checkbox toggles.
    "mkdocs": "mkdocs-material==9.7.1",
    # VuePress 2, Vue's own site generator on Vite (history-routed, pages `/slug.html`, the
    # sidebar's groups collapsible; the default theme wants the registry's vuepress rc.30).
    "vuepress": "vuepress@2.0.0-rc.30 @vuepress/bundler-vite@2.0.0-rc.30 "
    "@vuepress/theme-default@2.0.0-rc.132 sass@1.101.0 vue@3.5.45",
    # VuePress 1 (Vue 2, webpack 4), which many projects' documentation still runs on: its
    # default theme's sidebar groups collapsible, the current page's headings listed under it.
    "vuepress1": "vuepress@1.9.9",
    # Vocs, a React documentation generator on Vite (React Router, clean URLs, collapsible
    # sidebar groups). 1.0.13: later versions need Node 22 (this machine's Debian has 20);
    # its code highlighter needs TypeScript beside it.
    "vocs": "vocs@1.0.13 react@19.2.0 react-dom@19.2.0 typescript@5.9.3",
    # Starlight, Astro's documentation theme: a multi-page site (no client router), the
    # sidebar's groups `<details>` shut until opened. 0.37: later versions need Astro 6, which
    # needs Node 22.
    "starlight": "@astrojs/starlight@0.37.7 astro@5.18.2",
    # Sphinx with the Furo theme, from PyPI, the pages Markdown read by MyST: a multi-page
    # site whose sidebar's sections open by a checkbox and are drawn shut on every other page.
    "sphinx": f"{SPHINX} furo==2025.12.19",
    # HonKit, GitBook's open-source successor: pages of HTML whose sidebar links its script
    # fetches and swaps into the page (pushState), the parts headed in the summary.
    "honkit": "honkit@6.1.7",
    # Two more of Sphinx's themes: Read the Docs' (the table of contents of the page's own
    # part unfolded in the sidebar, the others' shut) and the PyData theme (NumPy's, pandas':
    # the parts in a bar at the top, the sidebar the current part's pages alone).
    "sphinx-rtd": f"{SPHINX} sphinx-rtd-theme==3.1.0",
    "pydata-sphinx": f"{SPHINX} pydata-sphinx-theme==0.24.0",
    # Three more: Jupyter Book's (the PyData theme's layout, a sidebar of parts' captions and
    # their pages), Shibuya (parts in a top bar, a sidebar of the part's pages) and Awesome
    # (the sidebar's sections folded by buttons).
    "sphinx-book": f"{SPHINX} sphinx-book-theme==1.4.0",
    "shibuya": f"{SPHINX} shibuya==2026.7.12",
    "sphinxawesome": f"{SPHINX} sphinxawesome-theme==6.0.6",
    # And Sphinx's own default, Alabaster (installed with Sphinx): a sidebar of the whole
    # table of contents, no script.
    "sphinx-alabaster": SPHINX,
    # MkDocs' themes beyond the two it ships, each in its own virtual environment: Bootswatch's
    # (Bootstrap 3: the parts drop-down menus in a top bar, as MkDocs' own theme but an older
    # Bootstrap) and Terminal's (plain pages, the parts listed in a sidebar).
    "mkdocs-bootswatch": "mkdocs==1.6.1 mkdocs-bootswatch==1.1",
    "mkdocs-terminal": "mkdocs==1.6.1 mkdocs-terminal==4.8.0",
    # Zensical, Material for MkDocs' successor (a Rust build reading mkdocs.yml), with its
    # defaults. 0.0.40: later versions want zensical-ui, which the registry here lacks.
    "zensical": "zensical==0.0.40",
    # TypeDoc, the TypeScript API documenter, here for its Markdown documents: static pages
    # whose sidebar its script draws from compressed data (no links in the HTML it serves).
    "typedoc": "typedoc@0.28.20 typescript@5.9.3",
    # Starlight's OpenAPI plugin, built per spec: an overview page at /api/ and each operation
    # a page of HTML of its own (no client router), the sidebar's tag groups. 0.22: later
    # versions need Astro 6 (Node 22).
    # Retype (its .NET build shipped in an npm package): static pages that Turbo fetches and
    # swaps in, the sidebar drawn by its script from the site's configuration, the folders its
    # groups.
    "retype": "retypeapp@4.6.0",
    "starlight-openapi": "starlight-openapi@0.22.1 @astrojs/starlight@0.37.7 astro@5.18.2",
    # Fumadocs, a React documentation framework on Next.js (App Router, exported static: clean
    # URLs, the sidebar's folders Radix collapsibles shut until opened, pages the client router
    # swaps in). 16.14: later versions depend on zbsearch 4, which the registry here lacks.
    "fumadocs": "fumadocs-ui@16.14.5 fumadocs-core@16.14.5 fumadocs-mdx@15.3.1 next@16.3.4 "
    "react@19.2.9 react-dom@19.2.9 tailwindcss@4.3.5 @tailwindcss/postcss@4.3.5 postcss "
    "typescript@5.9.3 @types/mdx @types/react @types/node",
    # Fumadocs' OpenAPI pages: 11.2 is the last for Fumadocs 16.14 (see above).
    "fumadocs-openapi": "fumadocs-openapi@11.2.4 fumadocs-ui@16.14.5 fumadocs-core@16.14.5 "
    "fumadocs-mdx@15.3.1 next@16.3.4 react@19.2.9 react-dom@19.2.9 tailwindcss@4.3.5 "
    "@tailwindcss/postcss@4.3.5 postcss typescript@5.9.3 @types/mdx @types/react @types/node",
    # Slate's layout, as Shins (its Node port) draws the Markdown Widdershins writes from each
    # spec: one page of the operations, a table of contents that follows the scroll, the code
    # samples in a column of their own, one language shown at a time by tabs.
    "slate": "widdershins@4.0.1 shins@2.6.0",
    # JSDoc with Docdash, a common template for it: the README as the home page, the other pages
    # its tutorials (`tutorial-<name>.html`), listed in the sidebar beside the API's.
    "jsdoc": "jsdoc@4.0.5 docdash@2.0.2",
    # Docus, the Nuxt documentation theme (Nuxt Content, Nuxt UI), exported by `nuxt generate`.
    # h3 1 named: npm otherwise lifts the h3 2 of Docus' MCP module to the top, where Nitro's
    # routes take it and fail (the sitemap).
    "docus": "docus@5.12.3 nuxt@4.4.5 better-sqlite3@12.11.1 h3@1.15.11",
    # Storybook's documentation pages (MDX): the manager's sidebar beside a same-origin frame
    # (`iframe.html`) that draws the page chosen; the manager's address names it
    # (`?path=/docs/<id>`).
    "storybook": "storybook@10.6.9 @storybook/react-vite@10.6.9 @storybook/addon-docs@10.6.9 "
    "react@19.2.0 react-dom@19.2.0 vite@7.3.8",
    # TiddlyWiki 5, a wiki in one HTML file: each page a tiddler, opened into a "story river"
    # beside the ones already open by links to `#<title>` (no slash), the one an address's
    # fragment names opened alone when the file loads; its Markdown plugin reads the pages.
    "tiddlywiki": "tiddlywiki@5.4.1",
}
API_APPS = (
    "swagger-ui",
    "rapidoc",
    "elements",
    "scalar",
    "redoc",
    "openapi-explorer",
    "spec-renderer",
    "openapi-ui",
    "vitepress-openapi",
    "zudoku",
    "docusaurus-openapi",
    "starlight-openapi",
    "fumadocs-openapi",
    "slate",
)
DOC_APPS = (
    "docute",
    "vitepress",
    "docsify",
    "docusaurus",
    "rspress",
    "rspress2",
    "nextra",
    "mkdocs",
    "mkdocs-default",
    "mkdocs-rtd",
    "vuepress",
    "vuepress1",
    "vocs",
    "starlight",
    "starlight-redirects",
    "sphinx",
    "sphinx-rtd",
    "pydata-sphinx",
    "sphinx-book",
    "shibuya",
    "sphinxawesome",
    "sphinx-alabaster",
    "mkdocs-bootswatch",
    "mkdocs-terminal",
    "honkit",
    "dumi",
    "zensical",
    "typedoc",
    "retype",
    "fumadocs",
    "docus",
    "jsdoc",
    "storybook",
    "tiddlywiki",
    # Doxygen, from Debian (`doxygen`, and the `doxygen-awesome-css` theme with its scripts),
    # here for its Markdown pages: a multi-page site whose sidebar tree its script draws from
    # data files (`navtreedata.js`), a part's pages drawn only when the part is opened.
    "doxygen",
    # rustdoc, Debian's (`rustc`), the pages a crate's modules' documentation: a page of HTML
    # per module whose sidebar lists the module's siblings from a data file its script reads
    # (`sidebar-items.js`), each item's docs folded by a toggle, a settings and a help page.
    "rustdoc",
)
DEFAULT_APPS = ("swagger-ui", "rapidoc", "elements", "scalar", "docute", "vitepress")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
CACHE = Path.home() / ".cache" / "lore-bench" / "spa-apps"
# Site generators, built with their own modules (an API reference: one site a spec); the other
# documentation apps render Markdown in the browser, and VitePress's build has a path of its own.
BUILT = (
    "vitepress-openapi",
    "zudoku",
    "docusaurus-openapi",
    "starlight-openapi",
    "fumadocs-openapi",
    "slate",
    *(app for app in DOC_APPS if app not in ("docute", "vitepress", "docsify")),
)
HOLDOUT = ("redoc", "openapi-explorer", "docsify", "spec-renderer", "openapi-ui", *BUILT)
# Where a built API reference starts, below its folder: Zudoku's overview page.
START = {"zudoku": "api", "starlight-openapi": "api/"}

# Wrappers: ?spec=<file in /specs/> picks the spec, as Swagger UI's wrapper in the shared data.
WRAPPERS = {
    "rapidoc": """<!doctype html><html><head><meta charset="utf-8"><title>RapiDoc</title>
<script type="module" src="/node_modules/rapidoc/dist/rapidoc-min.js"></script></head><body>
<rapi-doc id="doc" render-style="read" show-header="false" allow-try="false"></rapi-doc>
<script>document.getElementById('doc').setAttribute('spec-url',
  '/specs/' + new URLSearchParams(location.search).get('spec'));</script></body></html>""",
    "elements": """<!doctype html><html><head><meta charset="utf-8"><title>Elements</title>
<script src="/node_modules/@stoplight/elements/web-components.min.js"></script>
<link rel="stylesheet" href="/node_modules/@stoplight/elements/styles.min.css"></head><body>
<div id="api"></div><script>const el = document.createElement('elements-api');
el.setAttribute('apiDescriptionUrl', '/specs/' + new URLSearchParams(location.search).get('spec'));
el.setAttribute('router', 'hash'); el.setAttribute('layout', 'sidebar');
el.setAttribute('hideTryIt', 'true');
document.getElementById('api').appendChild(el);</script></body></html>""",
    "scalar": """<!doctype html><html><head><meta charset="utf-8"><title>Scalar</title></head>
<body><div id="app"></div>
<script src="/node_modules/@scalar/api-reference/dist/browser/standalone.js"></script>
<script>Scalar.createApiReference('#app', {url: '/specs/' + new URLSearchParams(location.search)
  .get('spec'), hideClientButton: true, withDefaultFonts: false});</script></body></html>""",
    "redoc": """<!doctype html><html><head><meta charset="utf-8"><title>Redoc</title></head>
<body><div id="redoc"></div>
<script src="/holdout/redoc/redoc/bundles/redoc.standalone.js"></script>
<script>Redoc.init('/specs/' + new URLSearchParams(location.search).get('spec'), {},
  document.getElementById('redoc'));</script></body></html>""",
    "openapi-explorer": """<!doctype html><html><head><meta charset="utf-8">
<title>OpenAPI Explorer</title>
<script type="module"
  src="/holdout/openapi-explorer/openapi-explorer/dist/browser/openapi-explorer.min.js"></script></head>
<body><openapi-explorer id="doc" hide-console></openapi-explorer>
<script>document.getElementById('doc').setAttribute('spec-url',
  '/specs/' + new URLSearchParams(location.search).get('spec'));</script></body></html>""",
    # Kong's spec renderer (a Vue web component; routes #/operations/<id> as it scrolls).
    "spec-renderer": """<!doctype html><html><head><meta charset="utf-8">
<title>Spec Renderer</title><link rel="stylesheet" href="KONG/spec-renderer.css"></head><body>
<kong-spec-renderer id="doc" navigation-type="hash"></kong-spec-renderer>
<script src="KONG/kong-spec-renderer.web-component.umd.js"></script>
<script>document.getElementById('doc').setAttribute('spec-url',
  '/specs/' + new URLSearchParams(location.search).get('spec'));
KongSpecRenderer.registerKongSpecRenderer();</script></body></html>""".replace(
        "KONG", "/holdout/spec-renderer/@kong/spec-renderer/dist"
    ),
    # OpenAPI UI (a React app with a hash router; reads spec-url off its container at start).
    "openapi-ui": """<!doctype html><html><head><meta charset="utf-8"><title>OpenAPI UI</title>
</head><body><div id="openapi-ui-container" theme="light"></div>
<script>document.getElementById('openapi-ui-container').setAttribute('spec-url',
  '/specs/' + new URLSearchParams(location.search).get('spec'));</script>
<script src="/holdout/openapi-ui/openapi-ui-dist/lib/openapi-ui.umd.js"></script></body></html>""",
}


def npm(package: str, cache: Path) -> Path:
    """node_modules with `package` (installed from the npm registry once, then cached; several
    separated by spaces, known by the first)."""
    name = package.split(maxsplit=1)[0].rsplit("@", 1)[0]
    if not (cache / "node_modules" / name / "package.json").exists():
        cache.mkdir(parents=True, exist_ok=True)
        print(f"installing {package} from npm into {cache}")
        subprocess.run(
            [
                "npm",
                "install",
                "--silent",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(cache),
                *package.split(),
            ],
            check=True,
        )
    return cache / "node_modules"


def build(
    what: str,
    command: list[str],
    project: Path,
    env: dict[str, str] | None = None,
    program: str = "node",
) -> None:
    """Run a site generator's build (`program` with `command`, `env` added to the environment)
    in `project`; stop with its output when it fails."""
    built = subprocess.run(
        [program, *command],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if built.returncode:
        raise SystemExit(f"{what} build failed:\n{built.stdout[-3000:]}\n{built.stderr[-3000:]}")


def site_root(data: Path, work: Path, apps: list[str]) -> Path:
    """The served tree: /sites/<app>/index.html, /specs/, /node_modules/ (the shared data
    directory is read-only, so the wrapper and specs are copied)."""
    root = work / "spa"
    shutil.copytree(data / "sites", root / "sites")
    shutil.copytree(data / "specs", root / "specs")
    for app in apps:
        if app in WRAPPERS:
            (root / "sites" / app).mkdir(parents=True, exist_ok=True)
            (root / "sites" / app / "index.html").write_text(WRAPPERS[app])
    # All of them, whichever apps run: the documentation pages are their READMEs.
    for app in DEFAULT_APPS:
        if app != "vitepress":
            npm(PACKAGES[app], CACHE)
    shutil.copytree(CACHE / "node_modules", root / "node_modules", symlinks=True)
    for app in set(apps) & set(HOLDOUT) - set(BUILT):
        modules = npm(PACKAGES[app], CACHE.parent / f"spa-{app}")
        shutil.copytree(modules, root / "holdout" / app, symlinks=True)
    return root


def operations(spec_path: Path) -> list[dict[str, Any]]:
    """Each operation with what must become retrievable: description and parameter names."""
    spec = yaml.safe_load(spec_path.read_text())
    out = []
    for path, item in (spec.get("paths") or {}).items():
        shared = item.get("parameters") or []
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            params = [p.get("name") for p in shared + (op.get("parameters") or []) if "name" in p]
            responses = {
                str(code): str(r.get("description") or "")
                for code, r in (op.get("responses") or {}).items()
                if isinstance(r, dict) and r.get("description")
            }
            out.append(
                {
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary") or op.get("operationId") or "",
                    "description": op.get("description") or "",
                    "parameters": [str(p) for p in params],
                    "responses": responses,
                }
            )
    return out


# Typographic quotes and dashes some apps draw for the source's plain ones (Nextra's Markdown
# "we've" is shown as "we’ve").
_TYPOGRAPHIC = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"}
)


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[`*_>#|]", " ", text.translate(_TYPOGRAPHIC)).split()).lower()


def captured(lore: Lore, page: str) -> tuple[str, ...]:
    """The page and the client-side routes its captures stored (each spec is captured into a
    knowledge base of its own)."""
    models = lore.catalog.site_models(lore.tenant, "127.0.0.1", limit=100)
    return (page, *sorted({r for m in models for r in m.model.get("routes", [])} - {page}))


def _found(lore: Lore, pages: tuple[str, ...], query: str) -> str:
    """The top 8 for `query` among `pages`."""
    hits = lore.query(query, 8, ChunkFilter(urls=pages), include_public=False)
    return _norm(" ".join(" ".join(h.chunk.heading_path) + " " + h.chunk.text for h in hits))


def description_found(lore: Lore, pages: tuple[str, ...], op: dict[str, Any]) -> bool:
    about = f"{op['summary']} {op['method']} {op['path']}"
    return _norm(op["description"])[:80] in _found(lore, pages, about)


def retrievable(lore: Lore, pages: tuple[str, ...], op: dict[str, Any]) -> dict[str, bool]:
    """Each thing a reader needs, found in the top 8 for a query naming the operation (and the
    parameter, or the response code)."""
    about = f"{op['summary']} {op['method']} {op['path']}"
    return {
        "description": not op["description"] or description_found(lore, pages, op),
        "parameters": all(
            re.search(rf"\b{re.escape(p.lower())}\b", _found(lore, pages, f"{about} parameter {p}"))
            for p in op["parameters"]
        ),
        "responses": all(
            _norm(text)[:80] in _found(lore, pages, f"{about} response {code} {text}")
            for code, text in op["responses"].items()
        ),
    }


def run(lore: Lore, job_id: str, what: str) -> dict[str, Any]:
    started = time.perf_counter()
    done = asyncio.run(run_job(lore, job_id))
    if done.status != "completed":
        raise SystemExit(f"{what} {done.status}: {done.error}")
    return {"seconds": time.perf_counter() - started, "counts": done.counts}


def capture(lore: Lore, url: str, explore: bool, max_actions: int) -> dict[str, Any]:
    job = lore.submit_capture(url, explore=explore, max_actions=max_actions, run_recipe=False)
    return run(lore, job.id, f"capture of {url}")


def site_models(lore: Lore) -> list[Any]:
    """What the captures learned about the pages served here (their steps and breakers)."""
    return list(lore.catalog.site_models(lore.tenant, "127.0.0.1", limit=100))


def hiding_supersessions(models: list[Any]) -> int:
    """Chunks superseded by steps that collapse, hide, close or copy (so labelled or titled)."""
    return sum(
        step.get("superseded", 0)
        for m in models
        for step in m.model.get("steps", [])
        if HIDING.search(f"{step.get('label') or ''} {step.get('title') or ''}")
    )


def stopped_by(models: list[Any]) -> str:
    """What ended the explorations of the pages captured: their budget, nothing left to try or
    a circuit breaker, and the breakers that tripped on the way ("-": nothing explored)."""
    ends = {m.model.get("stoppedBy") or "" for m in models}
    # "name: why", or "in <route>: name: why" inside a route's view
    trips = {
        re.sub(r"^in \S+: ", "", b).split(":", 1)[0]
        for m in models
        for b in m.model.get("breakers", [])
    }
    return " ".join(sorted(ends - {""}) + [f"+{t}" for t in sorted(trips)]) or "-"


def lore_for(work: Path, name: str) -> Lore:
    settings = Settings(
        data_dir=work / f"lore-{name}",
        fetch={"allow_private_addresses": True},  # type: ignore[arg-type]
    )
    return Lore(settings)


def api_app(
    app: str, base: str, root: Path, work: Path, names: list[str], expected: dict[str, Any]
):
    rows = []
    for name in names:
        ops = operations(root / "specs" / name)
        assert len(ops) == expected[name]["n_operations"], name
        url = (
            f"{base}/sites/{app}/{Path(name).stem}/{START.get(app, '')}"
            if app in BUILT
            else f"{base}/sites/{app}/index.html?spec={name}"
        )
        lore = lore_for(work, f"{app}-{name}")
        try:
            page = canonicalize(url)
            first = capture(lore, url, explore=False, max_actions=1)
            shown = captured(lore, page)
            before = [retrievable(lore, shown, op) for op in ops]
            explored = capture(lore, url, explore=True, max_actions=len(ops) * 6 + 20)
            shown = captured(lore, page)
            after = [retrievable(lore, shown, op) for op in ops]
            models = site_models(lore)
            hidden = hiding_supersessions(models)
            stopped = stopped_by(models)
        finally:
            lore.close()
        row: dict[str, Any] = {
            "app": app,
            "spec": name,
            "operations": len(ops),
            "actions": explored["counts"].get("actions", 0),
            "seconds": round(explored["seconds"], 1),
            "phase1_seconds": round(first["seconds"], 1),
            "hiding_supersessions": hidden,
            "stopped_by": stopped,
        }
        for part in ("description", "parameters", "responses"):
            row[f"phase1_{part}"] = sum(r[part] for r in before)
            row[part] = sum(r[part] for r in after)
        # What was still missed after exploring, to look at (written with --json).
        row["missed"] = [
            f"{op['method']} {op['path']}: {part}"
            for op, r in zip(ops, after, strict=True)
            for part, ok in r.items()
            if not ok
        ]
        rows.append(row)
        print(
            f"{app:11} {name:28} {len(ops):>4} "
            + " ".join(
                f"{row[f'phase1_{p}']}->{row[p]:<3}"
                for p in ("description", "parameters", "responses")
            )
            + f" {row['actions']:>8} {row['seconds']:>6} {hidden:>6} {stopped}"
        )
    return rows


# documentation apps -------------------------------------------------------------------------


def doc_pages(modules: Path, limit: int) -> list[dict[str, str]]:
    """The READMEs of packages installed from npm (3-40 KB, by name): a slug, a title, the
    Markdown (raw HTML lines and template braces left out) and one distinctive sentence."""
    files = sorted(
        p
        for p in [*modules.glob("*/README.md"), *modules.glob("@*/*/README.md")]
        if 3_000 <= p.stat().st_size <= 40_000
    )
    pages: list[dict[str, str]] = []
    used: set[str] = set()
    for path in files:
        name = path.parent.relative_to(modules).as_posix()
        lines = _plain(path.read_text(errors="replace").splitlines())
        sentence = _sentence(lines, used)
        if not sentence:
            continue
        used.add(sentence)
        slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
        pages.append(
            {"slug": slug, "title": name, "markdown": "\n".join(lines), "sentence": sentence}
        )
        if len(pages) == limit:
            break
    return pages


def _plain(lines: list[str]) -> list[str]:
    """Markdown both apps render as text: raw HTML outside code blocks escaped, template
    braces (Vue's) broken up."""
    out, fenced = [], False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            out.append(line)
        elif not fenced:
            out.append(line.replace("<", "&lt;").replace("{{", "{ {").replace("}}", "} }"))
        else:
            out.append(line)
    return out


def _sentence(lines: list[str], used: set[str]) -> str:
    """The first prose sentence of 12-40 plain words outside code blocks."""
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if (
            fenced
            or line.startswith(("#", "|", ">", "-", "*", " "))
            or re.search(r"[`\[\]<>_*|]|http", line)
        ):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line.strip()):
            words = sentence.split()
            if 12 <= len(words) <= 40 and sentence.endswith(".") and sentence not in used:
                return sentence
    return ""


def docute_site(root: Path, pages: list[dict[str, str]]) -> str:
    site = root / "sites" / "docute"
    (site / "docs").mkdir(parents=True)
    sidebar = [{"title": p["title"], "link": f"/{p['slug']}"} for p in pages[1:]]
    (site / "docs" / "README.md").write_text(pages[0]["markdown"])
    for page in pages[1:]:
        (site / "docs" / f"{page['slug']}.md").write_text(page["markdown"])
    config = {
        "target": "#docute",
        "sourcePath": "./docs/",
        "router": {"mode": "hash"},
        "sidebar": [{"title": "Packages", "children": sidebar}],
    }
    (site / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>Docs</title>'
        '<link rel="stylesheet" href="/node_modules/docute/dist/docute.css"></head><body>'
        '<div id="docute"></div><script src="/node_modules/docute/dist/docute.js"></script>'
        f"<script>new Docute({json.dumps(config)});</script></body></html>"
    )
    return "/sites/docute/index.html"


def docsify_site(root: Path, pages: list[dict[str, str]]) -> str:
    site = root / "sites" / "docsify"
    (site / "docs").mkdir(parents=True)
    (site / "docs" / "README.md").write_text(pages[0]["markdown"])
    for page in pages[1:]:
        (site / "docs" / f"{page['slug']}.md").write_text(page["markdown"])
    (site / "docs" / "_sidebar.md").write_text(
        "".join(f"- [{p['title']}](/{p['slug']})\n" for p in pages[1:])
    )
    config = {"basePath": "docs/", "loadSidebar": True, "name": "Docs"}
    (site / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8"><title>Docs</title>'
        '<link rel="stylesheet" href="/holdout/docsify/docsify/lib/themes/vue.css"></head><body>'
        f'<div id="app"></div><script>window.$docsify = {json.dumps(config)};</script>'
        '<script src="/holdout/docsify/docsify/lib/docsify.min.js"></script></body></html>'
    )
    return "/sites/docsify/index.html"


def vitepress_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    cache = CACHE.parent / "vitepress"
    modules = npm(PACKAGES["vitepress"], cache)
    project = work / "vitepress"
    docs = project / "docs"
    (docs / ".vitepress").mkdir(parents=True)
    (project / "node_modules").symlink_to(modules)
    (docs / "index.md").write_text(pages[0]["markdown"])
    for page in pages[1:]:
        (docs / f"{page['slug']}.md").write_text(page["markdown"])
    config = {
        "base": "/sites/vitepress/",
        "ignoreDeadLinks": True,
        "title": "Docs",
        "themeConfig": {
            "sidebar": [
                {
                    "text": "Packages",
                    "items": [{"text": p["title"], "link": f"/{p['slug']}"} for p in pages[1:]],
                }
            ]
        },
    }
    (docs / ".vitepress" / "config.mjs").write_text(f"export default {json.dumps(config)}\n")
    build(
        "vitepress", [str(modules / "vitepress" / "bin" / "vitepress.js"), "build", "docs"], project
    )
    shutil.copytree(docs / ".vitepress" / "dist", root / "sites" / "vitepress")
    return "/sites/vitepress/index.html"


def _grouped_path(n: int, page: dict[str, str]) -> str:
    """Where the nth page lies: in categories of five, as sites group their docs."""
    return f"part-{(n - 1) // 5 + 1}/{page['slug']}"


def _write_grouped(
    docs: Path, pages: list[dict[str, str]], home: str = "index.md"
) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """The first page written as `docs/<home>`, the others as `docs/part-<n>/<slug>.md`: each
    part's pages, by part number, with their paths (no `.md`)."""
    (docs / home).write_text(pages[0]["markdown"])
    parts: dict[str, list[tuple[str, dict[str, str]]]] = {}
    for n, page in enumerate(pages[1:], 1):
        path = _grouped_path(n, page)
        (docs / path).parent.mkdir(exist_ok=True)
        (docs / f"{path}.md").write_text(page["markdown"])
        parts.setdefault(path.split("/")[0][5:], []).append((path, page))
    return parts


def docusaurus_site(root: Path, work: Path, base: str, pages: list[dict[str, str]]) -> str:
    """A Docusaurus 3 build of the pages, every page a folder
    (`/sites/docusaurus/part-<n>/<slug>/`) whose `<link rel=canonical>` names the address it is
    served at, `base`; the sidebar's categories are collapsed until clicked."""
    modules = npm(PACKAGES["docusaurus"], CACHE.parent / "spa-docusaurus")
    project = work / "docusaurus"
    docs = project / "docs"
    docs.mkdir(parents=True)
    (project / "node_modules").symlink_to(modules)

    def markdown(page: dict[str, str]) -> str:
        # Its Markdown parser takes `https://x">` in an escaped HTML line for a link, and
        # fails on it: those lines (badges, logos) are left out.
        fenced, out = False, []
        for line in page["markdown"].splitlines():
            fenced ^= line.lstrip().startswith(("```", "~~~"))
            if fenced or "&lt;" not in line:
                out.append(line)
        return "\n".join(out)

    (docs / "index.md").write_text("---\nslug: /\n---\n" + markdown(pages[0]))
    for n, page in enumerate(pages[1:], 1):
        path = docs / f"{_grouped_path(n, page)}.md"
        if not path.parent.exists():
            path.parent.mkdir()
            category = {"label": f"Part {path.parent.name[5:]}", "collapsed": True}
            (path.parent / "_category_.json").write_text(json.dumps(category))
        path.write_text(f"---\nsidebar_position: {n}\n---\n" + markdown(page))
    docs_options = {"routeBasePath": "/", "sidebarPath": "./sidebars.js"}
    config = {
        "title": "Docs",
        "url": base,
        "baseUrl": "/sites/docusaurus/",
        "trailingSlash": True,
        "onBrokenLinks": "ignore",
        "onBrokenAnchors": "ignore",
        "markdown": {"format": "detect"},
        "presets": [["classic", {"docs": docs_options, "blog": False}]],
    }
    (project / "docusaurus.config.js").write_text(f"module.exports = {json.dumps(config)};\n")
    (project / "sidebars.js").write_text(
        "module.exports = {docs: [{type: 'autogenerated', dirName: '.'}]};\n"
    )
    build(
        "docusaurus",
        [str(modules / "@docusaurus" / "core" / "bin" / "docusaurus.mjs"), "build"],
        project,
    )
    shutil.copytree(project / "build", root / "sites" / "docusaurus")
    return "/sites/docusaurus/"


def rspress_site(root: Path, work: Path, pages: list[dict[str, str]], app: str = "rspress") -> str:
    """An Rspress build of the pages (`/sites/<app>/part-<n>/<slug>.html`), the sidebar's
    groups of five collapsed until clicked; `app` rspress2 builds with Rspress 2."""
    modules = npm(PACKAGES[app], CACHE.parent / f"spa-{app}")
    project = work / app
    docs = project / "docs"
    docs.mkdir(parents=True)
    (project / "node_modules").symlink_to(modules)
    sidebar = [
        {
            "text": f"Part {part}",
            "collapsible": True,
            "collapsed": True,
            "items": [{"text": page["title"], "link": f"/{path}"} for path, page in entries],
        }
        for part, entries in _write_grouped(docs, pages).items()
    ]
    unchecked = {"link": {"checkDeadLinks": False}} if app == "rspress2" else {}
    config = {
        "root": "docs",
        "base": f"/sites/{app}/",
        "title": "Docs",
        "markdown": unchecked or {"checkDeadLinks": False},
        "themeConfig": {"sidebar": {"/": sidebar}},
    }
    (project / "rspress.config.mjs").write_text(f"export default {json.dumps(config)};\n")
    cli = modules / "@rspress" / "core" if app == "rspress2" else modules / "rspress"
    build(app, [str(cli / "bin" / "rspress.js"), "build"], project)
    shutil.copytree(project / "doc_build", root / "sites" / app)
    return f"/sites/{app}/"


def dumi_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A dumi build of the pages (`/sites/dumi/part-<n>/<slug>`, clean URLs: its links have
    no `.html`, its files do): the parts in the top bar, a part's pages in its sidebar, every
    page's HTML the same empty shell."""
    modules = npm(PACKAGES["dumi"], CACHE.parent / "spa-dumi")
    project = work / "dumi"
    docs = project / "docs"
    docs.mkdir(parents=True)
    (project / "node_modules").symlink_to(modules)
    (project / "package.json").write_text('{"name": "docs", "private": true}\n')
    _write_grouped(docs, pages)
    config = {
        "base": "/sites/dumi/",
        "publicPath": "/sites/dumi/",
        "exportStatic": {"htmlSuffix": True},
        "themeConfig": {"name": "Docs"},
        # Code blocks are code, not live demos it compiles (a README's JSX sample imports
        # packages the site does not have, and the build fails).
        "resolve": {"codeBlockMode": "passive"},
    }
    (project / ".dumirc.ts").write_text(f"export default {json.dumps(config)};\n")
    build("dumi", [str(modules / "dumi" / "bin" / "dumi.js"), "build"], project)
    shutil.copytree(project / "dist", root / "sites" / "dumi")
    return "/sites/dumi/"


# Nextra's set-up for the App Router, as its documentation gives it: the theme's layout, one
# catch-all page rendering the Markdown under content/.
NEXTRA = {
    "next.config.mjs": """import nextra from 'nextra'
export default nextra({})({ output: 'export', images: { unoptimized: true }, basePath: 'BASE' })
""",
    "app/layout.jsx": """import { Footer, Layout, Navbar } from 'nextra-theme-docs'
import { Head } from 'nextra/components'
import { getPageMap } from 'nextra/page-map'
import 'nextra-theme-docs/style.css'
export const metadata = { title: 'Docs' }
export default async function RootLayout({ children }) {
  return (
    <html lang="en" dir="ltr" suppressHydrationWarning>
      <Head />
      <body>
        <Layout navbar={<Navbar logo={<b>Docs</b>} />} footer={<Footer>Docs</Footer>}
          pageMap={await getPageMap()} sidebar={{ defaultMenuCollapseLevel: 1 }}>
          {children}
        </Layout>
      </body>
    </html>
  )
}
""",
    "app/[[...mdxPath]]/page.jsx": """\
import { generateStaticParamsFor, importPage } from 'nextra/pages'
import { useMDXComponents } from '../../mdx-components'
export const generateStaticParams = generateStaticParamsFor('mdxPath')
export async function generateMetadata(props) {
  const params = await props.params
  return (await importPage(params.mdxPath)).metadata
}
const Wrapper = useMDXComponents().wrapper
export default async function Page(props) {
  const params = await props.params
  const { default: MDXContent, toc, metadata } = await importPage(params.mdxPath)
  return (
    <Wrapper toc={toc} metadata={metadata}>
      <MDXContent {...props} params={params} />
    </Wrapper>
  )
}
""",
    "mdx-components.js": """import { useMDXComponents as theme } from 'nextra-theme-docs'
const components = theme()
export function useMDXComponents(more) {
  return { ...components, ...more }
}
""",
}


def next_project(
    work: Path, app: str, files: dict[str, str], modules: Path, module: bool = False
) -> Path:
    """A Next.js site's project folder: `files` written with BASE its base path
    (`/sites/<app>`), its package.json (ES modules when `module`), the cached modules linked."""
    project = work / app
    for path, text in files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_text(text.replace("BASE", f"/sites/{app}"))
    kind = ', "type": "module"' if module else ""
    (project / "package.json").write_text(f'{{"name": "docs", "private": true{kind}}}')
    (project / "node_modules").symlink_to(modules)
    return project


def next_build(root: Path, project: Path, app: str, webpack: bool = False) -> None:
    """Build a `next_project` and serve its export at `/sites/<app>` (with `webpack`: Next
    16's Turbopack refuses a node_modules linked from outside the project)."""
    command = [str(project / "node_modules" / "next" / "dist" / "bin" / "next"), "build"]
    build(app, command + ["--webpack"] * webpack, project, {"NEXT_TELEMETRY_DISABLED": "1"})
    shutil.copytree(project / "out", root / "sites" / app)


def nextra_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Nextra build of the pages (`/sites/nextra/part-<n>/<slug>`, clean URLs), the
    sidebar's folders of five collapsed until clicked."""
    modules = npm(PACKAGES["nextra"], CACHE.parent / "spa-nextra")
    project = next_project(work, "nextra", NEXTRA, modules)
    content = project / "content"
    content.mkdir()
    _write_grouped(content, pages)
    next_build(root, project, "nextra")
    return "/sites/nextra/"


FUMADOCS = {
    "next.config.mjs": """import { createMDX } from 'fumadocs-mdx/next'
export default createMDX()({ output: 'export', images: { unoptimized: true }, basePath: 'BASE',
  typescript: { ignoreBuildErrors: true } })
""",
    "source.config.ts": """import { defineConfig, defineDocs } from 'fumadocs-mdx/config'
export const docs = defineDocs({ dir: 'content/docs' })
// The READMEs' badges are images elsewhere, out of reach here: drawn without their size.
export default defineConfig({ mdxOptions: { remarkImageOptions: { onError: 'ignore' } } })
""",
    "postcss.config.mjs": "export default { plugins: { '@tailwindcss/postcss': {} } }\n",
    "tsconfig.json": """{"compilerOptions": {"target": "ESNext", "lib": ["dom", "esnext"],
  "jsx": "react-jsx", "module": "esnext", "moduleResolution": "bundler", "allowJs": true,
  "skipLibCheck": true, "noEmit": true, "isolatedModules": true, "paths": {"@/*": ["./*"]}}}
""",
    "lib/source.ts": """import { docs } from '@/.source/server'
import { loader } from 'fumadocs-core/source'
export const source = loader({ baseUrl: '/', source: docs.toFumadocsSource() })
""",
    "app/global.css": """@import 'tailwindcss';
@import 'fumadocs-ui/css/neutral.css';
@import 'fumadocs-ui/css/preset.css';
""",
    "app/layout.tsx": """import { RootProvider } from 'fumadocs-ui/provider/next'
import { DocsLayout } from 'fumadocs-ui/layouts/docs'
import { source } from '@/lib/source'
import './global.css'
export default function Layout({ children }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body className="flex flex-col min-h-screen">
        <RootProvider search={{ enabled: false }}>
          <DocsLayout tree={source.getPageTree()} nav={{ title: 'Docs' }}>{children}</DocsLayout>
        </RootProvider>
      </body>
    </html>
  )
}
""",
    "app/[[...slug]]/page.tsx": """import { source } from '@/lib/source'
import { DocsBody, DocsPage, DocsTitle } from 'fumadocs-ui/layouts/docs/page'
import defaultMdxComponents from 'fumadocs-ui/mdx'
import { notFound } from 'next/navigation'
export default async function Page(props) {
  const page = source.getPage((await props.params).slug)
  if (!page) notFound()
  const MDX = page.data.body
  return (
    <DocsPage toc={page.data.toc}>
      <DocsTitle>{page.data.title}</DocsTitle>
      <DocsBody><MDX components={defaultMdxComponents} /></DocsBody>
    </DocsPage>
  )
}
export async function generateStaticParams() {
  return source.generateParams()
}
export async function generateMetadata(props) {
  return { title: source.getPage((await props.params).slug)?.data.title }
}
""",
}


def fumadocs_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Fumadocs build of the pages (`/sites/fumadocs/part-<n>/<slug>`, clean URLs), each page
    titled in its front matter, the sidebar's folders shut until opened."""
    modules = npm(PACKAGES["fumadocs"], CACHE.parent / "spa-fumadocs")
    project = next_project(work, "fumadocs", FUMADOCS, modules, module=True)
    docs = project / "content" / "docs"
    docs.mkdir(parents=True)
    parts = _write_grouped(docs, pages)
    written = [("index", pages[0]), *(item for part in parts.values() for item in part)]
    for path, page in written:  # Fumadocs' pages are titled in their front matter
        file = docs / f"{path}.md"
        file.write_text(f"---\ntitle: {json.dumps(page['title'])}\n---\n\n{file.read_text()}")
    next_build(root, project, "fumadocs", webpack=True)
    return "/sites/fumadocs/"


def jsdoc_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A JSDoc build with Docdash: the first page as the README (`/sites/jsdoc/index.html`),
    the others as tutorials titled in `tutorials.json`, beside one documented function."""
    modules = npm(PACKAGES["jsdoc"], CACHE.parent / "spa-jsdoc")
    project = work / "jsdoc"
    tutorials = project / "tutorials"
    tutorials.mkdir(parents=True)
    (project / "README.md").write_text(pages[0]["markdown"])
    for page in pages[1:]:
        (tutorials / f"{page['slug']}.md").write_text(page["markdown"])
    titles = {page["slug"]: {"title": page["title"]} for page in pages[1:]}
    (tutorials / "tutorials.json").write_text(json.dumps(titles))
    (project / "index.js").write_text(
        "/**\n * Adds two numbers.\n * @param {number} a The first.\n * @param {number} b The "
        "second.\n * @returns {number} Their sum.\n */\nfunction add(a, b) { return a + b; }\n"
    )
    command = [str(modules / "jsdoc" / "jsdoc.js"), "-t", str(modules / "docdash")]
    command += ["-R", "README.md", "-u", "tutorials", "-d", str(root / "sites" / "jsdoc")]
    build("jsdoc", [*command, "index.js"], project)
    return "/sites/jsdoc/index.html"


def storybook_id(title: str) -> str:
    """Storybook's id of a title's documentation page (as its `sanitize`: runs of other
    characters one dash)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") + "--docs"


def storybook_titles(pages: list[dict[str, str]]) -> list[str]:
    """Each page's title in Storybook's sidebar: the first under "Introduction", the others in
    parts of five, as the other apps group them."""
    return [
        f"Introduction/{page['slug']}" if n == 0 else f"Part {(n - 1) // 5 + 1}/{page['slug']}"
        for n, page in enumerate(pages)
    ]


def storybook_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Storybook build of the pages as MDX documentation pages (`/sites/storybook/`, each
    page at `?path=/docs/<id>`), with no stories: the manager shows the first page."""
    modules = npm(PACKAGES["storybook"], CACHE.parent / "spa-storybook")
    project = work / "storybook"
    (project / ".storybook").mkdir(parents=True)
    (project / "docs").mkdir()
    (project / "node_modules").symlink_to(modules)
    (project / "package.json").write_text('{"name": "docs", "private": true, "type": "module"}')
    (project / ".storybook" / "main.js").write_text(
        "export default { stories: ['../docs/*.mdx'], addons: ['@storybook/addon-docs'],\n"
        "  framework: { name: '@storybook/react-vite', options: {} },\n"
        "  core: { disableTelemetry: true, disableWhatsNewNotifications: true } };\n"
    )
    for page, title in zip(pages, storybook_titles(pages), strict=True):
        # MDX reads braces as expressions; its parser takes lines of escaped HTML (badges) for
        # broken links, as Docusaurus' does: left out.
        fenced, lines = False, []
        for line in page["markdown"].splitlines():
            fence = line.lstrip().startswith(("```", "~~~"))
            fenced ^= fence
            if fenced or fence:
                lines.append(line)
            elif "&lt;" not in line:
                lines.append(line.replace("{", "\\{").replace("}", "\\}"))
        (project / "docs" / f"{page['slug']}.mdx").write_text(
            "import { Meta } from '@storybook/addon-docs/blocks';\n\n"
            f"<Meta title={json.dumps(title)} />\n\n" + "\n".join(lines) + "\n"
        )
    command = [str(modules / "storybook" / "dist" / "bin" / "dispatcher.js"), "build"]
    command += ["-o", str(root / "sites" / "storybook"), "--quiet"]
    build("storybook", command, project, {"STORYBOOK_DISABLE_TELEMETRY": "1"})
    return f"/sites/storybook/?path=/docs/{storybook_id(storybook_titles(pages)[0])}"


def tiddlywiki_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A TiddlyWiki of the pages as Markdown tiddlers, saved as one file
    (`/sites/tiddlywiki/index.html`, each page at `#<title>`): the first page opened at the
    start, the others tagged "Packages" and listed in a sidebar tab of their own, "Contents",
    shown first, as wikis that are sites of documentation list their pages."""
    modules = npm(PACKAGES["tiddlywiki"], CACHE.parent / "spa-tiddlywiki")
    program = str(modules / "tiddlywiki" / "tiddlywiki.js")
    project = work / "tiddlywiki"
    build("tiddlywiki", [program, str(project), "--init", "empty"], work)
    info = json.loads((project / "tiddlywiki.info").read_text())
    info["plugins"] = [*info.get("plugins", []), "tiddlywiki/markdown"]
    (project / "tiddlywiki.info").write_text(json.dumps(info))
    tiddlers = project / "tiddlers"
    tiddlers.mkdir(exist_ok=True)

    def tiddler(name: str, fields: dict[str, str], text: str) -> None:
        head = "".join(f"{key}: {value}\n" for key, value in fields.items())
        # no newline after the text: TiddlyWiki keeps it (a configuration's value with it
        # names no tiddler)
        (tiddlers / f"{name}.tid").write_text(f"{head}\n{text}")

    for n, page in enumerate(pages):
        fields = {"title": page["title"], "type": "text/markdown"}
        tiddler(f"page-{n}", fields | ({"tags": "Packages"} if n else {}), page["markdown"])
    tiddler("default", {"title": "$:/DefaultTiddlers"}, f"[[{pages[0]['title']}]]")
    tiddler("site-title", {"title": "$:/SiteTitle"}, "Docs")
    tiddler(
        "contents",
        {
            "title": "$:/lore/Contents",
            "caption": "Contents",
            "tags": "$:/tags/SideBar",
            "list-before": "$:/core/ui/SideBar/Open",
        },
        '<<list-links filter:"[tag[Packages]]">>',
    )
    tiddler("sidebar-tab", {"title": "$:/config/DefaultSidebarTab"}, "$:/lore/Contents")
    output = root / "sites" / "tiddlywiki"
    command = [program, str(project), "--output", str(output), "--render", "$:/core/save/all"]
    build("tiddlywiki", [*command, "index.html", "text/plain"], work)
    return "/sites/tiddlywiki/index.html"


# Docus extends the project; payloads are not extracted, as Nuxt 4.4 fails to prerender the home
# page with them (its payload cache refuses the key "/"); no robots.txt under a base URL.
DOCUS = """export default defineNuxtConfig({ extends: ['docus'], robots: { robotsTxt: false },
  app: { baseURL: '/sites/docus/' }, experimental: { payloadExtraction: false } })
"""


def docus_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Docus build of the pages (`/sites/docus/part-<n>/<slug>`, clean URLs): the home page
    is a landing page with no sidebar, whose "Get started" link opens the first part's first
    page (the pages are generated by following links from it)."""
    modules = npm(PACKAGES["docus"], CACHE.parent / "spa-docus")
    project = work / "docus"
    content = project / "content"
    content.mkdir(parents=True)
    (project / "package.json").write_text('{"name": "docs", "private": true}')
    (project / "node_modules").symlink_to(modules)
    (project / "nuxt.config.ts").write_text(DOCUS)
    parts = _write_grouped(content, pages)
    written = [("index", pages[0]), *(item for part in parts.values() for item in part)]
    for path, page in written:
        file = content / f"{path}.md"
        file.write_text(f"---\ntitle: {json.dumps(page['title'])}\n---\n\n{file.read_text()}")
    with (content / "index.md").open("a") as home:
        home.write(f"\n\n[Get started](/{parts['1'][0][0]})\n")
    command = [str(modules / "nuxt" / "bin" / "nuxt.mjs"), "generate"]
    build("docus", command, project, {"NUXT_TELEMETRY_DISABLED": "1"})
    shutil.copytree(project / ".output" / "public", root / "sites" / "docus")
    return "/sites/docus/"


# Fumadocs' OpenAPI integration as its documentation sets it up: a page an operation, made by
# `staticSource()` beside the Markdown pages, drawn by its client component.
FUMADOCS_OPENAPI = {
    **FUMADOCS,
    "app/global.css": FUMADOCS["app/global.css"] + "@import 'fumadocs-openapi/css/preset.css';\n",
    "lib/openapi.ts": """import { createOpenAPI } from 'fumadocs-openapi/server'
export const openapi = createOpenAPI({ input: ['./openapi.yaml'] })
""",
    "lib/source.ts": """import { docs } from '@/.source/server'
import { loader } from 'fumadocs-core/source'
import { openapi } from '@/lib/openapi'
export const source = loader(
  { docs: docs.toFumadocsSource(), openapi: await openapi.staticSource() },
  { baseUrl: '/', plugins: [openapi.loaderPlugin()] },
)
""",
    "components/api-page.tsx": """'use client'
import { createOpenAPIPage } from 'fumadocs-openapi/ui'
export const OpenAPIPage = createOpenAPIPage()
""",
    "app/[[...slug]]/page.tsx": FUMADOCS["app/[[...slug]]/page.tsx"]
    .replace("DocsPage, DocsTitle", "DocsDescription, DocsPage, DocsTitle")
    .replace(
        "import { notFound } from 'next/navigation'\n",
        "import { notFound } from 'next/navigation'\n"
        "import { OpenAPIPage } from '@/components/api-page'\n",
    )
    .replace(
        "  const MDX = page.data.body\n",
        """  if (page.type === 'openapi') {
    return (
      <DocsPage full toc={page.data.toc}>
        <DocsTitle>{page.data.title}</DocsTitle>
        <DocsDescription>{page.data.description}</DocsDescription>
        <DocsBody><OpenAPIPage {...page.data.getOpenAPIPageProps()} /></DocsBody>
      </DocsPage>
    )
  }
  const MDX = page.data.body
""",
    ),
}


def fumadocs_openapi_sites(root: Path, work: Path, data: Path, names: list[str]) -> None:
    """A Fumadocs build of each spec by fumadocs-openapi, at `/sites/fumadocs-openapi/<spec
    stem>/`: the spec's title and description on the home page, a page for each operation
    (`/<operationId>`, clean URLs), the sidebar listing them."""
    modules = npm(PACKAGES["fumadocs-openapi"], CACHE.parent / "spa-fumadocs-openapi")
    for name in names:
        app = f"fumadocs-openapi/{Path(name).stem}"
        project = next_project(work, app, FUMADOCS_OPENAPI, modules, module=True)
        shutil.copy(data / "specs" / name, project / "openapi.yaml")
        info = yaml.safe_load((data / "specs" / name).read_text()).get("info") or {}
        home = project / "content" / "docs" / "index.md"
        home.parent.mkdir(parents=True)
        title = json.dumps(str(info.get("title") or "API"))
        home.write_text(f"---\ntitle: {title}\n---\n\n{info.get('description') or ''}\n")
        next_build(root, project, app, webpack=True)


def pypi(app: str) -> Path:
    """A virtual environment with the app's packages (installed from PyPI once, then cached):
    its `bin` folder."""
    venv = CACHE.parent / f"spa-{app}"
    if not (venv / "bin" / ".installed").exists():
        print(f"installing {PACKAGES[app]} from PyPI into {venv}")
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", *PACKAGES[app].split()]
        subprocess.run(pip, check=True)
        (venv / "bin" / ".installed").touch()
    return venv / "bin"


# MkDocs' themes: Material's with its instant navigation and no web fonts (they would come
# from Google), the two MkDocs ships: its own (the sections drop-down menus in a top bar) and
# its Read the Docs theme, Bootswatch's Cerulean and Terminal (see PACKAGES).
MKDOCS_THEMES: dict[str, dict[str, Any]] = {
    "mkdocs": {"name": "material", "font": False, "features": ["navigation.instant"]},
    "mkdocs-default": {"name": "mkdocs"},
    "mkdocs-rtd": {"name": "readthedocs"},
    "mkdocs-bootswatch": {"name": "cerulean"},
    "mkdocs-terminal": {"name": "terminal"},
    "zensical": {},  # its own defaults
}


def mkdocs_site(root: Path, base: str, pages: list[dict[str, str]], app: str = "mkdocs") -> str:
    """An MkDocs build of the pages (`/sites/<app>/part-<n>/<slug>/`) with the app's theme;
    Material's: instant navigation, the sidebar's sections of five collapsed until clicked."""
    program = "zensical" if app == "zensical" else "mkdocs"
    mkdocs = pypi(app if app in PACKAGES else "mkdocs") / program
    project = root.parent / app
    docs = project / "docs"
    docs.mkdir(parents=True)
    sections = {
        f"Part {part}": [f"{path}.md" for path, _ in entries]
        for part, entries in _write_grouped(docs, pages).items()
    }
    config = {
        "site_name": "Docs",
        "site_url": f"{base}/sites/{app}/",
        **({"theme": MKDOCS_THEMES[app]} if MKDOCS_THEMES[app] else {}),
        "nav": [{"Home": "index.md"}, *({name: paths} for name, paths in sections.items())],
    }
    (project / "mkdocs.yml").write_text(json.dumps(config))  # YAML reads JSON
    command = ["build"] if app == "zensical" else ["build", "--quiet", "--site-dir", "site"]
    build(app, command, project, program=str(mkdocs))
    shutil.copytree(project / "site", root / "sites" / app)
    return f"/sites/{app}/"


# vitepress-openapi's set-up, as its documentation gives it: the theme, a sidebar of operations,
# the spec's introduction as the home page and a page for each operation.
VITEPRESS_OPENAPI = {
    ".vitepress/config.mjs": """import { useSidebar } from 'vitepress-openapi'
import spec from '../public/openapi.json' with { type: 'json' }
export default {
  base: 'BASE', title: 'API', ignoreDeadLinks: true,
  themeConfig: {
    sidebar: useSidebar({ spec, linkPrefix: '/operations/' }).generateSidebarGroups(),
  },
}
""",
    ".vitepress/theme/index.mjs": """import DefaultTheme from 'vitepress/theme'
import { theme, useOpenapi } from 'vitepress-openapi/client'
import 'vitepress-openapi/dist/style.css'
import spec from '../../public/openapi.json' with { type: 'json' }
export default {
  extends: DefaultTheme,
  async enhanceApp({ app }) { theme.enhanceApp({ app, openapi: useOpenapi({ spec }) }) },
}
""",
    "index.md": "---\naside: false\n---\n\n<OAIntroduction />\n",
    "operations/[operationId].md": """---
aside: false
outline: false
---

<script setup>
import { useRoute } from 'vitepress'
const operationId = useRoute().data.params.operationId
</script>

<OAOperation :operationId="operationId" />
""",
    "operations/[operationId].paths.mjs": """import { usePaths } from 'vitepress-openapi'
import spec from '../public/openapi.json' with { type: 'json' }
export default {
  paths() {
    return usePaths({ spec })
      .getPathsByVerbs()
      .map(({ operationId }) => ({ params: { operationId } }))
  },
}
""",
}


# VuePress's configuration: the default theme, bundled by Vite, its sidebar given in JSON.
VUEPRESS = """import { viteBundler } from '@vuepress/bundler-vite'
import { defaultTheme } from '@vuepress/theme-default'
import { defineUserConfig } from 'vuepress'
export default defineUserConfig({
  base: '/sites/vuepress/', title: 'Docs', bundler: viteBundler(),
  theme: defaultTheme({ sidebar: SIDEBAR }),
})
"""


def vuepress_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A VuePress 2 build of the pages (`/sites/vuepress/part-<n>/<slug>.html`), the sidebar's
    groups of five collapsible, shut but for the current page's."""
    modules = npm(PACKAGES["vuepress"], CACHE.parent / "spa-vuepress")
    project = work / "vuepress"
    docs = project / "docs"
    (docs / ".vuepress").mkdir(parents=True)
    (project / "package.json").write_text('{"name": "docs", "private": true, "type": "module"}')
    (project / "node_modules").symlink_to(modules)
    sidebar = [
        {
            "text": f"Part {part}",
            "collapsible": True,
            "children": [f"/{path}.md" for path, _ in entries],
        }
        for part, entries in _write_grouped(docs, pages, "README.md").items()
    ]
    config = VUEPRESS.replace("SIDEBAR", json.dumps(sidebar))
    (docs / ".vuepress" / "config.js").write_text(config)
    command = [str(modules / "vuepress" / "bin" / "vuepress.js"), "build", "docs"]
    build("vuepress", command, project)
    shutil.copytree(docs / ".vuepress" / "dist", root / "sites" / "vuepress")
    return "/sites/vuepress/"


def vuepress1_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A VuePress 1 build of the pages (`/sites/vuepress1/part-<n>/<slug>.html`), the
    sidebar's groups of five collapsible, shut but for the current page's."""
    modules = npm(PACKAGES["vuepress1"], CACHE.parent / "spa-vuepress1")
    project = work / "vuepress1"
    docs = project / "docs"
    (docs / ".vuepress").mkdir(parents=True)
    (project / "node_modules").symlink_to(modules)
    sidebar = [
        {"title": f"Part {part}", "collapsable": True, "children": [f"/{p}" for p, _ in entries]}
        for part, entries in _write_grouped(docs, pages, "README.md").items()
    ]
    config = {"base": "/sites/vuepress1/", "title": "Docs", "themeConfig": {"sidebar": sidebar}}
    (docs / ".vuepress" / "config.js").write_text(f"module.exports = {json.dumps(config)};\n")
    build("vuepress1", [str(modules / "vuepress" / "cli.js"), "build", "docs"], project)
    shutil.copytree(docs / ".vuepress" / "dist", root / "sites" / "vuepress1")
    return "/sites/vuepress1/"


# Vocs's configuration, its sidebar given in JSON.
VOCS = """import { defineConfig } from 'vocs'
export default defineConfig({ basePath: '/sites/vocs', title: 'Docs', sidebar: SIDEBAR })
"""


# A Markdown link to a path (`./x`, `../x`, `/x`, `//host/x`): Vocs fails its build on any
# that names no page of the site, as a README's links into its repository do.
_PATH_LINK = re.compile(r"(\]\(\s*|^\s*\[[^\]]+\]:\s*)\.*/[^)\s]*", re.MULTILINE)


def vocs_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Vocs build of the pages (`/sites/vocs/part-<n>/<slug>`, clean URLs), the sidebar's
    groups of five collapsed until clicked; links to paths that are no page of it (a README's
    into its repository) point to `#TODO`, as Vocs asks. Vocs writes each page as
    `<slug>/index.html`, which the static server would redirect to `<slug>/`; its links name
    `<slug>`, and hosts that serve clean URLs answer it from `<slug>.html`, as the page is
    moved here."""
    modules = npm(PACKAGES["vocs"], CACHE.parent / "spa-vocs")
    project = work / "vocs"
    docs = project / "docs" / "pages"
    docs.mkdir(parents=True)
    (project / "package.json").write_text('{"name": "docs", "private": true, "type": "module"}')
    (project / "node_modules").symlink_to(modules)
    sidebar = [
        {
            "text": f"Part {part}",
            "collapsed": True,
            "items": [{"text": page["title"], "link": f"/{path}"} for path, page in entries],
        }
        for part, entries in _write_grouped(docs, pages).items()
    ]
    for page in docs.rglob("*.md"):  # links into the READMEs' repositories go nowhere here
        page.write_text(_PATH_LINK.sub(r"\1#TODO", page.read_text()))
    (project / "vocs.config.js").write_text(VOCS.replace("SIDEBAR", json.dumps(sidebar)))
    build("vocs", [str(modules / "vocs" / "_lib" / "cli" / "index.js"), "build"], project)
    built = project / "docs" / "dist"
    for page in built.glob("part-*/*/index.html"):
        page.rename(page.parent.with_suffix(".html"))
        page.parent.rmdir()
    shutil.copytree(built, root / "sites" / "vocs")
    return "/sites/vocs/"


# Starlight's site: Astro's configuration (its sidebar's groups made from the part folders)
# and the content collection Starlight reads the pages from.
STARLIGHT = """import { defineConfig } from 'astro/config'
import starlight from '@astrojs/starlight'
export default defineConfig({ base: '/sites/NAME', trailingSlash: 'SLASH',
  integrations: [starlight({ title: 'Docs', pagefind: false, sidebar: SIDEBAR })] })
"""
STARLIGHT_CONTENT = """import { defineCollection } from 'astro:content'
import { docsLoader } from '@astrojs/starlight/loaders'
import { docsSchema } from '@astrojs/starlight/schema'
export const collections = {
  docs: defineCollection({ loader: docsLoader(), schema: docsSchema() }) }
"""


# Starlight's `trailingSlash`: as its links name pages. `starlight-redirects`: without their
# slash, each page still `<slug>/index.html`, so the static server redirects every link to the
# folder, as GitHub Pages does.
STARLIGHT_SLASH = {"starlight": "ignore", "starlight-redirects": "never"}


def starlight_site(root: Path, pages: list[dict[str, str]], app: str = "starlight") -> str:
    """A Starlight build of the pages (`/sites/<app>/part-<n>/<slug>/`), a page of HTML
    each; the sidebar's groups of five shut until opened. Built in a folder beside its
    modules: Astro fails on modules reached through a link from outside the project."""
    modules = npm(PACKAGES["starlight"], CACHE.parent / "spa-starlight")
    project = modules.parent / "site"
    shutil.rmtree(project, ignore_errors=True)
    docs = project / "src" / "content" / "docs"
    docs.mkdir(parents=True)
    (project / "package.json").write_text('{"name": "docs", "private": true, "type": "module"}')
    titled = [
        {**page, "markdown": f"---\ntitle: {json.dumps(page['title'])}\n---\n{page['markdown']}"}
        for page in pages
    ]
    sidebar = [
        {"label": f"Part {part}", "collapsed": True, "autogenerate": {"directory": f"part-{part}"}}
        for part in _write_grouped(docs, titled)
    ]
    (project / "src" / "content.config.ts").write_text(STARLIGHT_CONTENT)
    config = STARLIGHT.replace("NAME", app).replace("SLASH", STARLIGHT_SLASH[app])
    (project / "astro.config.mjs").write_text(config.replace("SIDEBAR", json.dumps(sidebar)))
    env = {"ASTRO_TELEMETRY_DISABLED": "1"}
    build(app, [str(modules / "astro" / "astro.js"), "build"], project, env)
    shutil.copytree(project / "dist", root / "sites" / app)
    return f"/sites/{app}/"


def honkit_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A HonKit build of the pages (`/sites/honkit/part-<n>/<slug>.html`), its summary the
    parts as headed lists."""
    modules = npm(PACKAGES["honkit"], CACHE.parent / "spa-honkit")
    project = work / "honkit"
    project.mkdir()
    parts = _write_grouped(project, pages, home="README.md")
    summary = f"# Summary\n\n* [{pages[0]['title']}](README.md)\n"
    for part, entries in parts.items():
        summary += f"\n## Part {part}\n\n"
        summary += "".join(f"* [{page['title']}]({path}.md)\n" for path, page in entries)
    (project / "SUMMARY.md").write_text(summary)
    (project / "node_modules").symlink_to(modules)
    build("honkit", [str(modules / "honkit" / "bin" / "honkit.js"), "build", ".", "_book"], project)
    shutil.copytree(project / "_book", root / "sites" / "honkit")
    return "/sites/honkit/"


def retype_site(root: Path, work: Path, base: str, pages: list[dict[str, str]]) -> str:
    """A Retype build of the pages (`/sites/retype/part-<n>/<slug>/`), the first page its
    home; its `url` (which it requires) the address it is served at, `base`, as its
    `<link rel=canonical>` names it."""
    modules = npm(PACKAGES["retype"], CACHE.parent / "spa-retype")
    project = work / "retype"
    (project / "docs").mkdir(parents=True)
    _write_grouped(project / "docs", pages, home="README.md")
    (project / "retype.yml").write_text(
        json.dumps({"input": "docs", "output": "site", "url": f"{base}/sites/retype"})
    )  # YAML reads JSON
    build("retype", ["build"], project, program=str(modules / ".bin" / "retype"))
    shutil.copytree(project / "site", root / "sites" / "retype")
    return "/sites/retype/"


def typedoc_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A TypeDoc build of the pages as its project documents
    (`/sites/typedoc/documents/<slug>.html`, each titled by its slug, grouped by part), the first
    page its readme (`index.html`), beside the API page of a one-function module."""
    modules = npm(PACKAGES["typedoc"], CACHE.parent / "spa-typedoc")
    project = work / "typedoc"
    (project / "src").mkdir(parents=True)
    (project / "src" / "index.ts").write_text(
        "/** Adds two numbers. */\nexport function add(a: number, b: number): number {\n"
        "  return a + b\n}\n"
    )
    (project / "README.md").write_text(pages[0]["markdown"])
    for n, page in enumerate(pages[1:], 1):
        part = _grouped_path(n, page).split("/")[0].replace("part-", "Part ")
        (project / f"{page['slug']}.md").write_text(
            f"---\ntitle: {page['slug']}\ngroup: {part}\n---\n\n{page['markdown']}"
        )
    config = {
        "entryPoints": ["src/index.ts"],
        "readme": "README.md",
        "projectDocuments": [f"{page['slug']}.md" for page in pages[1:]],
        "out": "site",
        "name": "Docs",
        "skipErrorChecking": True,
    }
    (project / "typedoc.json").write_text(json.dumps(config))
    (project / "node_modules").symlink_to(modules)
    build("typedoc", [str(modules / "typedoc" / "bin" / "typedoc")], project)
    shutil.copytree(project / "site", root / "sites" / "typedoc")
    return "/sites/typedoc/"


SPHINX_THEMES = {
    "sphinx": "furo",
    "sphinx-rtd": "sphinx_rtd_theme",
    "pydata-sphinx": "pydata_sphinx_theme",
    "sphinx-book": "sphinx_book_theme",
    "shibuya": "shibuya",
    "sphinxawesome": "sphinxawesome_theme",
    "sphinx-alabaster": "alabaster",
}


AWESOME = Path("/usr/share/doxygen-awesome-css")
# The theme's extensions, each a class with an init() its documentation puts in the header.
AWESOME_SCRIPTS = {
    "darkmode-toggle": "DoxygenAwesomeDarkModeToggle",
    "fragment-copy-button": "DoxygenAwesomeFragmentCopyButton",
    "paragraph-link": "DoxygenAwesomeParagraphLink",
    "interactive-toc": "DoxygenAwesomeInteractiveToc",
}


def doxygen_label(slug: str) -> str:
    """A page's file's stem, letters and digits only (Doxygen escapes others in file names);
    Doxygen labels a Markdown file's page `md_<folder>_<stem>` and names its HTML after it."""
    return "p" + re.sub(r"[^a-z0-9]", "", slug)


def doxygen_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A Doxygen build of the pages (`/sites/doxygen/md_docs_<label>.html`), the first the
    main page, the others subpages of a page a part (`md_docs_part<n>.html`) in the sidebar's
    tree, themed by doxygen-awesome-css with its scripts (dark-mode toggle, copy buttons on
    code, links on headings, the page's headings beside it)."""
    if not shutil.which("doxygen") or not AWESOME.is_dir():
        raise SystemExit(
            "doxygen needs Debian's doxygen and doxygen-awesome-css: "
            "apt-get install -y doxygen doxygen-awesome-css"
        )
    project = work / "doxygen"
    docs = project / "docs"
    docs.mkdir(parents=True)
    parts: dict[str, list[str]] = {}
    for n, page in enumerate(pages[1:], 1):
        label = doxygen_label(page["slug"])
        part = _grouped_path(n, page).split("/")[0].replace("-", "")
        parts.setdefault(part, []).append(label)
        (docs / f"{label}.md").write_text(f"@page {label} {page['title']}\n\n{page['markdown']}")
    for part, labels in parts.items():
        (docs / f"{part}.md").write_text(
            f"@page {part} Part {part[4:]}\n\n"
            + "".join(f"- @subpage md_docs_{x}\n" for x in labels)
        )
    subpages = "".join(f"- @subpage md_docs_{part}\n" for part in parts)
    (docs / "index.md").write_text(f"{pages[0]['markdown']}\n\n{subpages}")
    build(
        "doxygen",
        ["-w", "html", "header.html", "footer.html", "style.css"],
        project,
        program="doxygen",
    )
    scripts = "".join(
        f'<script type="text/javascript" src="$relpath^doxygen-awesome-{name}.js"></script>'
        f"<script>{cls}.init()</script>"
        for name, cls in AWESOME_SCRIPTS.items()
    )
    header = (project / "header.html").read_text()
    (project / "header.html").write_text(header.replace("</head>", f"{scripts}</head>", 1))
    config = {
        "PROJECT_NAME": "Docs",
        "INPUT": "docs",
        "FILE_PATTERNS": "*.md",
        "USE_MDFILE_AS_MAINPAGE": "docs/index.md",
        "OUTPUT_DIRECTORY": "out",
        "GENERATE_LATEX": "NO",
        "GENERATE_TREEVIEW": "YES",
        "DISABLE_INDEX": "NO",
        "FULL_SIDEBAR": "NO",
        "QUIET": "YES",
        "WARNINGS": "NO",
        "HTML_HEADER": "header.html",
        "HTML_EXTRA_STYLESHEET": f"{AWESOME}/doxygen-awesome.css "
        f"{AWESOME}/doxygen-awesome-sidebar-only.css "
        f"{AWESOME}/doxygen-awesome-sidebar-only-darkmode-toggle.css",
        "HTML_EXTRA_FILES": " ".join(
            f"{AWESOME}/doxygen-awesome-{name}.js" for name in AWESOME_SCRIPTS
        ),
        "HTML_COLORSTYLE_HUE": "209",
        "HTML_COLORSTYLE_SAT": "255",
        "HTML_COLORSTYLE_GAMMA": "113",
    }
    (project / "Doxyfile").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    build("doxygen", ["Doxyfile"], project, program="doxygen")
    shutil.copytree(project / "out" / "html", root / "sites" / "doxygen")
    return "/sites/doxygen/index.html"


def rustdoc_module(n: int, page: dict[str, str]) -> tuple[str, str]:
    """The nth page's part's module and its own (`part_1`, `m_<slug>`): identifiers (a module's
    name starts with a letter)."""
    part, slug = _grouped_path(n, page).replace("-", "_").split("/")
    return part, f"m_{slug}"


def rustdoc_site(root: Path, work: Path, pages: list[dict[str, str]]) -> str:
    """A rustdoc build of a crate `docs` whose documentation is the pages
    (`/sites/rustdoc/docs/part_<n>/<module>/index.html`), the first the crate's own, each part a
    module holding its pages' modules."""
    rustdoc = Path("/usr/bin/rustdoc")
    if not rustdoc.is_file():
        raise SystemExit("rustdoc needs Debian's rustc: apt-get install -y rustc")
    project = work / "rustdoc"
    pages_dir = project / "src" / "pages"
    pages_dir.mkdir(parents=True)
    parts: dict[str, list[str]] = {}
    for n, page in enumerate(pages[1:], 1):
        part, module = rustdoc_module(n, page)
        (pages_dir / f"{page['slug']}.md").write_text(page["markdown"])
        parts.setdefault(part, []).append(
            f'    #[doc = include_str!("pages/{page["slug"]}.md")]\n    pub mod {module} {{}}\n'
        )
    (pages_dir / "index.md").write_text(pages[0]["markdown"])
    (project / "src" / "lib.rs").write_text(
        '#![doc = include_str!("pages/index.md")]\n'
        + "".join(
            f"/// Part {part[5:]}.\npub mod {part} {{\n{''.join(mods)}}}\n"
            for part, mods in parts.items()
        )
    )
    build(
        "rustdoc",
        ["--crate-name", "docs", "--edition", "2021", "-o", "out", "src/lib.rs"],
        project,
        program=str(rustdoc),
    )
    shutil.copytree(project / "out", root / "sites" / "rustdoc")
    return "/sites/rustdoc/docs/index.html"


def sphinx_site(root: Path, pages: list[dict[str, str]], app: str = "sphinx") -> str:
    """A Sphinx build of the pages with the app's theme (`/sites/<app>/part-<n>/<slug>.html`),
    each part a page of its own whose table of contents lists its five pages: Furo's sidebar
    sections, shut but on their own pages."""
    sphinx = pypi(app) / "sphinx-build"
    project = root.parent / app
    project.mkdir()
    parts = _write_grouped(project, pages)
    for part, entries in parts.items():
        (project / f"part-{part}" / "index.md").write_text(
            f"# Part {part}\n\n```{{toctree}}\n"
            + "".join(f"{path.split('/', 1)[1]}\n" for path, _ in entries)
            + "```\n"
        )
    with (project / "index.md").open("a") as home:
        home.write("\n\n```{toctree}\n" + "".join(f"part-{p}/index\n" for p in parts) + "```\n")
    theme = SPHINX_THEMES[app]
    (project / "conf.py").write_text(
        f"project = 'Docs'\nextensions = ['myst_parser']\nhtml_theme = '{theme}'\n"
    )
    build(app, ["-q", "-b", "html", ".", "_build"], project, program=str(sphinx))
    shutil.copytree(project / "_build", root / "sites" / app)
    return f"/sites/{app}/"


def vitepress_openapi_sites(root: Path, work: Path, data: Path, names: list[str]) -> None:
    """A vitepress-openapi build of each spec, at `/sites/vitepress-openapi/<spec stem>/`."""
    modules = npm(PACKAGES["vitepress-openapi"], CACHE.parent / "spa-vitepress-openapi")
    for name in names:
        stem = Path(name).stem
        docs = work / "vitepress-openapi" / stem / "docs"
        for path, text in VITEPRESS_OPENAPI.items():
            (docs / path).parent.mkdir(parents=True, exist_ok=True)
            (docs / path).write_text(text.replace("BASE", f"/sites/vitepress-openapi/{stem}/"))
        (docs / "public").mkdir()
        spec = yaml.safe_load((data / "specs" / name).read_text())
        (docs / "public" / "openapi.json").write_text(json.dumps(spec, default=str))
        (docs.parent / "node_modules").symlink_to(modules)
        command = [str(modules / "vitepress" / "bin" / "vitepress.js"), "build", "docs"]
        build(f"vitepress-openapi of {name}", command, docs.parent)
        shutil.copytree(docs / ".vitepress" / "dist", root / "sites" / "vitepress-openapi" / stem)


ZUDOKU_CONFIG = """import type { ZudokuConfig } from "zudoku";
const config: ZudokuConfig = {
  basePath: "BASE",
  navigation: [{ type: "link", to: "/api", label: "API Reference" }],
  redirects: [{ from: "/", to: "/api" }],
  apis: { type: "file", input: "./openapi.yaml", path: "/api" },
};
export default config;
"""


def zudoku_sites(root: Path, data: Path, names: list[str]) -> None:
    """A Zudoku build of each spec, at `/sites/zudoku/<spec stem>/`. Built in the folder its
    modules were installed in (with them linked from elsewhere its build finds no config), as
    an ES module package, its update check off (it asks GitHub; this machine reaches only the
    package registries)."""
    project = npm(PACKAGES["zudoku"], CACHE.parent / "spa-zudoku").parent
    manifest = project / "package.json"  # its build reads the config as an ES module
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "type": "module"}))
    for name in names:
        stem = Path(name).stem
        (project / "zudoku.config.ts").write_text(
            ZUDOKU_CONFIG.replace("BASE", f"/sites/zudoku/{stem}")
        )
        shutil.copy(data / "specs" / name, project / "openapi.yaml")
        shutil.rmtree(project / "dist", ignore_errors=True)
        env = {"ZUDOKU_DISABLE_UPDATE_CHECK": "1", "DO_NOT_TRACK": "1"}
        cli = str(project / "node_modules" / "zudoku" / "cli.js")
        build(f"zudoku of {name}", [cli, "build"], project, env)
        shutil.copytree(
            project / "dist" / "sites" / "zudoku" / stem, root / "sites" / "zudoku" / stem
        )


def slate_sites(root: Path, work: Path, data: Path, names: list[str]) -> None:
    """Each spec as Widdershins writes it in Markdown with its defaults, rendered by Shins with
    its assets inlined, at `/sites/slate/<spec stem>/`."""
    modules = npm(PACKAGES["slate"], CACHE.parent / "spa-slate")
    shins = work / "shins"  # its layouts and scripts, which it reads from a root folder
    shutil.copytree(modules / "shins", shins, symlinks=True)
    for name in names:
        site = root / "sites" / "slate" / Path(name).stem
        site.mkdir(parents=True)
        markdown = work / f"{Path(name).stem}.html.md"
        widdershins = [str(modules / "widdershins" / "widdershins.js"), str(data / "specs" / name)]
        build(f"widdershins of {name}", [*widdershins, "-o", str(markdown)], work)
        render = [str(modules / "shins" / "shins.js"), "--root", str(shins), "--inline"]
        build(f"shins of {name}", [*render, "-o", str(site / "index.html"), str(markdown)], work)


STARLIGHT_OPENAPI = """import { defineConfig } from 'astro/config'
import starlight from '@astrojs/starlight'
import starlightOpenAPI, { openAPISidebarGroups } from 'starlight-openapi'
export default defineConfig({ base: 'BASE',
  integrations: [starlight({ title: 'API', pagefind: false,
    plugins: [starlightOpenAPI([{ base: 'api', schema: './openapi.yaml' }])],
    sidebar: openAPISidebarGroups })] })
"""


def starlight_openapi_sites(root: Path, data: Path, names: list[str]) -> None:
    """A Starlight build of each spec by its OpenAPI plugin, at
    `/sites/starlight-openapi/<spec stem>/` (the operations under `api/`), as the plugin's
    documentation sets it up; built beside its modules, as Starlight is."""
    modules = npm(PACKAGES["starlight-openapi"], CACHE.parent / "spa-starlight-openapi")
    project = modules.parent / "site"
    for name in names:
        stem = Path(name).stem
        shutil.rmtree(project, ignore_errors=True)
        (project / "src" / "content" / "docs").mkdir(parents=True)
        (project / "package.json").write_text('{"name": "api", "private": true, "type": "module"}')
        (project / "src" / "content.config.ts").write_text(STARLIGHT_CONTENT)
        (project / "src" / "content" / "docs" / "index.md").write_text("---\ntitle: API\n---\n")
        (project / "astro.config.mjs").write_text(
            STARLIGHT_OPENAPI.replace("BASE", f"/sites/starlight-openapi/{stem}")
        )
        shutil.copy(data / "specs" / name, project / "openapi.yaml")
        env = {"ASTRO_TELEMETRY_DISABLED": "1"}
        build(
            f"starlight-openapi of {name}",
            [str(modules / "astro" / "astro.js"), "build"],
            project,
            env,
        )
        shutil.copytree(project / "dist", root / "sites" / "starlight-openapi" / stem)


DOCUSAURUS_OPENAPI_CONFIG = {
    "title": "API",
    "url": "http://127.0.0.1",
    "baseUrl": "BASE",
    "trailingSlash": True,
    "onBrokenLinks": "ignore",
    "onBrokenAnchors": "ignore",
    "presets": [
        [
            "classic",
            {
                "docs": {
                    "routeBasePath": "/",
                    "sidebarPath": "./sidebars.ts",
                    "docItemComponent": "@theme/ApiItem",
                },
                "blog": False,
            },
        ]
    ],
    "plugins": [
        [
            "docusaurus-plugin-openapi-docs",
            {
                "id": "api",
                "docsPluginId": "classic",
                "config": {
                    "api": {
                        "specPath": "openapi.yaml",
                        "outputDir": "docs",
                        "sidebarOptions": {"groupPathsBy": "tag"},  # writes docs/sidebar.ts
                    }
                },
            },
        ]
    ],
    "themes": ["docusaurus-theme-openapi-docs"],
}


def docusaurus_openapi_sites(root: Path, data: Path, names: list[str]) -> list[str]:
    """A Docusaurus build of each spec by the OpenAPI plugin, at
    `/sites/docusaurus-openapi/<spec stem>/`, the spec's info page at its root; built in the
    folder its modules were installed in. Returns the specs it could build: the plugin writes
    no page for an operation without a summary or an operationId (the callback example), and
    a spec it leaves without its operations is not scored."""
    project = npm(PACKAGES["docusaurus-openapi"], CACHE.parent / "spa-docusaurus-openapi").parent
    (project / "sidebars.ts").write_text(
        'import api from "./docs/sidebar";\nexport default { api };\n'
    )
    # Without it the pages throw "exports is not defined" in the browser and stay as built:
    # the theme's CommonJS files get ES imports of Babel's helpers.
    (project / "babel.config.js").write_text(
        "module.exports = {presets: [require.resolve('@docusaurus/core/lib/babel/preset')], "
        "sourceType: 'unambiguous'};\n"
    )
    cli = str(project / "node_modules" / "@docusaurus" / "core" / "bin" / "docusaurus.mjs")
    built = []
    for name in names:
        stem = Path(name).stem
        config = json.dumps(DOCUSAURUS_OPENAPI_CONFIG).replace(
            "BASE", f"/sites/docusaurus-openapi/{stem}/"
        )
        (project / "docusaurus.config.js").write_text(f"module.exports = {config};\n")
        shutil.copy(data / "specs" / name, project / "openapi.yaml")
        for made in ("docs", "build", ".docusaurus"):
            shutil.rmtree(project / made, ignore_errors=True)
        (project / "docs").mkdir()
        build(f"docusaurus-openapi pages of {name}", [cli, "gen-api-docs", "all"], project)
        if len(list((project / "docs").glob("*.api.mdx"))) < len(operations(data / "specs" / name)):
            print(f"docusaurus-openapi: {name} not scored, the plugin left out operations")
            continue
        info = next((project / "docs").glob("*.info.mdx"))
        info.write_text(info.read_text().replace("---\n", "---\nslug: /\n", 1))
        build(f"docusaurus-openapi of {name}", [cli, "build"], project)
        shutil.copytree(project / "build", root / "sites" / "docusaurus-openapi" / stem)
        built.append(name)
    return built


def page_urls(app: str, base: str, home: str, pages: list[dict[str, str]]) -> list[str]:
    if app == "tiddlywiki":
        # Each page at `#<title>`, a fragment that routes nothing: every page is the file's.
        return [canonicalize(base + home)] * len(pages)
    if app in ("docute", "docsify"):
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}{home}#/{p['slug']}") for p in pages[1:]
        ]
    if app == "typedoc":
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}{home}documents/{p['slug']}.html") for p in pages[1:]
        ]
    if app == "storybook":
        return [
            canonicalize(f"{base}/sites/storybook/?path=/docs/{storybook_id(title)}")
            for title in storybook_titles(pages)
        ]
    if app == "jsdoc":
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}/sites/jsdoc/tutorial-{p['slug']}.html") for p in pages[1:]
        ]
    if app == "doxygen":
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}/sites/doxygen/md_docs_{doxygen_label(p['slug'])}.html")
            for p in pages[1:]
        ]
    if app == "rustdoc":
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}/sites/rustdoc/docs/{'/'.join(rustdoc_module(n, p))}/index.html")
            for n, p in enumerate(pages[1:], 1)
        ]
    if app in BUILT:
        suffix = {"docusaurus": "/", "retype": "/", "nextra": "", "vocs": "", "dumi": ""}
        suffix |= {"fumadocs": "", "docus": ""}
        suffix |= dict.fromkeys(MKDOCS_THEMES, "/")
        suffix |= {"starlight": "/", "starlight-redirects": ""}
        return [canonicalize(base + home)] + [
            canonicalize(f"{base}{home}{_grouped_path(n, p)}{suffix.get(app, '.html')}")
            for n, p in enumerate(pages[1:], 1)
        ]
    return [canonicalize(base + home)] + [
        canonicalize(f"{base}/sites/vitepress/{p['slug']}.html") for p in pages[1:]
    ]


def score_docs(lore: Lore, urls: list[str], pages: list[dict[str, str]]) -> tuple[int, int]:
    """(pages reached: their sentence stored under their URL, sentences at rank <= 3 there)."""
    reached = ranked = 0
    for url, page in zip(urls, pages, strict=True):
        own = lore.store.scroll(ChunkFilter(tenant_ids=(lore.tenant,), urls=(url,)), 10_000)
        text = _norm(" ".join(c.text for c in own))
        reached += _norm(page["sentence"])[:60] in text
        hits = lore.query(page["sentence"], 3, include_public=False)
        ranked += any(h.chunk.url == url for h in hits)
    return reached, ranked


def doc_app(
    app: str, base: str, home: str, work: Path, pages: list[dict[str, str]]
) -> list[dict[str, Any]]:
    urls = page_urls(app, base, home, pages)
    rows = []
    for method in ("capture", "spider"):
        lore = lore_for(work, f"{app}-{method}")
        try:
            if method == "capture":
                job = lore.submit_capture(
                    base + home, explore=True, max_actions=len(pages) * 3 + 20, run_recipe=False
                )
            else:
                # Kept to the app's folder, as an operator keeps a crawl to the docs beside
                # others on a host: every app here is served from one server, whose listing of
                # /sites/ led a Vocs crawl into the other apps' copies of the same pages.
                folder = home.split("?", maxsplit=1)[0].rsplit("/", 1)[0]
                job = lore.submit_link(
                    base + home,
                    "spider",
                    render="browser",
                    max_pages=len(pages) * 3,
                    # the folder, asked with or without "/" (Storybook's pages are queries)
                    include=[folder, f"{folder}/*", f"{folder}?*"],
                )
            done = run(lore, job.id, f"{method} of {app}")
            reached, ranked = score_docs(lore, urls, pages)
            models = site_models(lore)
            hidden = hiding_supersessions(models)
            stopped = stopped_by(models)
        finally:
            lore.close()
        row = {
            "app": app,
            "method": method,
            "pages": len(pages),
            "reached": reached,
            "ranked": ranked,
            "seconds": round(done["seconds"], 1),
            "actions": done["counts"].get("actions", 0),
            "hiding_supersessions": hidden,
            "stopped_by": stopped,
        }
        rows.append(row)
        print(
            f"{app:11} {method:8} {reached:>3}/{len(pages)} reached, "
            f"{ranked:>3}/{len(pages)} at rank <= 3, "
            f"{row['seconds']:>6} s, {row['actions']} actions, {hidden} hiding supersessions, "
            f"stopped by {stopped}"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA / "spa")
    parser.add_argument(
        "--apps",
        default=",".join(DEFAULT_APPS),
        help=f"also {', '.join(a for a in (*API_APPS, *DOC_APPS) if a not in DEFAULT_APPS)}: "
        "apps lore was not tuned on, to check that it generalises (spec-renderer is Kong's; "
        "starlight-redirects is Starlight with its links redirected)",
    )
    parser.add_argument("--specs", default="", help="comma-separated spec files; default: all")
    parser.add_argument("--pages", type=int, default=16, help="documentation pages per app")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--keep",
        type=Path,
        help="work in this new folder and leave the captures' knowledge bases there "
        "(lore-<app>-<spec>: open one with api.Lore to see what a missed query finds)",
    )
    args = parser.parse_args()
    apps = [a for a in args.apps.split(",") if a]
    unknown = set(apps) - {*API_APPS, *DOC_APPS}
    if unknown:
        raise SystemExit(
            f"unknown apps {sorted(unknown)}; choose from {sorted({*API_APPS, *DOC_APPS})}"
        )
    expected = json.loads((args.data / "specs" / "expected-operations.json").read_text())
    names = [s for s in args.specs.split(",") if s] or sorted(expected)
    results: list[dict[str, Any]] = []
    if args.keep:
        args.keep.mkdir(parents=True)
    with contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        root = site_root(args.data, work, apps)
        pages = doc_pages(root / "node_modules", args.pages)
        server, base = serve_directory(root)  # it reads the files as they are asked for
        homes = {}
        if "docute" in apps:
            homes["docute"] = docute_site(root, pages)
        if "docsify" in apps:
            homes["docsify"] = docsify_site(root, pages)
        if "vitepress" in apps:
            homes["vitepress"] = vitepress_site(root, work, pages)
        if "docusaurus" in apps:
            homes["docusaurus"] = docusaurus_site(root, work, base, pages)
        for app in ("rspress", "rspress2"):
            if app in apps:
                homes[app] = rspress_site(root, work, pages, app)
        if "nextra" in apps:
            homes["nextra"] = nextra_site(root, work, pages)
        for app in MKDOCS_THEMES:
            if app in apps:
                homes[app] = mkdocs_site(root, base, pages, app)
        if "vuepress" in apps:
            homes["vuepress"] = vuepress_site(root, work, pages)
        if "vuepress1" in apps:
            homes["vuepress1"] = vuepress1_site(root, work, pages)
        if "vocs" in apps:
            homes["vocs"] = vocs_site(root, work, pages)
        for app in STARLIGHT_SLASH:
            if app in apps:
                homes[app] = starlight_site(root, pages, app)
        if "honkit" in apps:
            homes["honkit"] = honkit_site(root, work, pages)
        if "dumi" in apps:
            homes["dumi"] = dumi_site(root, work, pages)
        if "typedoc" in apps:
            homes["typedoc"] = typedoc_site(root, work, pages)
        if "retype" in apps:
            homes["retype"] = retype_site(root, work, base, pages)
        if "fumadocs" in apps:
            homes["fumadocs"] = fumadocs_site(root, work, pages)
        if "docus" in apps:
            homes["docus"] = docus_site(root, work, pages)
        if "jsdoc" in apps:
            homes["jsdoc"] = jsdoc_site(root, work, pages)
        if "storybook" in apps:
            homes["storybook"] = storybook_site(root, work, pages)
        if "tiddlywiki" in apps:
            homes["tiddlywiki"] = tiddlywiki_site(root, work, pages)
        for app in SPHINX_THEMES:
            if app in apps:
                homes[app] = sphinx_site(root, pages, app)
        if "doxygen" in apps:
            homes["doxygen"] = doxygen_site(root, work, pages)
        if "rustdoc" in apps:
            homes["rustdoc"] = rustdoc_site(root, work, pages)
        if "vitepress-openapi" in apps:
            vitepress_openapi_sites(root, work, args.data, names)
        if "zudoku" in apps:
            zudoku_sites(root, args.data, names)
        if "starlight-openapi" in apps:
            starlight_openapi_sites(root, args.data, names)
        if "fumadocs-openapi" in apps:
            fumadocs_openapi_sites(root, work, args.data, names)
        if "slate" in apps:
            slate_sites(root, work, args.data, names)
        scored = {app: names for app in apps}
        if "docusaurus-openapi" in apps:
            scored["docusaurus-openapi"] = docusaurus_openapi_sites(root, args.data, names)
        print(
            f"apps served at {base}/sites/; description, parameters, responses: phase 1 -> explored"
        )
        for app in apps:
            if app in API_APPS:
                results += api_app(app, base, root, work, scored[app], expected)
            else:
                results += doc_app(app, base, homes[app], work, pages)
        server.shutdown()
    for app in apps:
        rows = [r for r in results if r["app"] == app]
        if app in API_APPS:
            total = sum(r["operations"] for r in rows)
            parts = ", ".join(
                f"{p} {sum(r[p] for r in rows) / total:.0%} "
                f"(phase 1 {sum(r[f'phase1_{p}'] for r in rows) / total:.0%})"
                for p in ("description", "parameters", "responses")
            )
            print(
                f"{app}: {total} operations: {parts}; "
                f"{sum(r['hiding_supersessions'] for r in rows)} hiding supersessions"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
