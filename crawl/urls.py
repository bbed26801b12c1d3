"""URL canonicalisation and crawl scope: which URL a page is stored under, and whether a link is
one the crawl should follow (with the reason when it is not)."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass
from functools import cached_property
from urllib.parse import (
    parse_qsl,
    quote,
    unquote,
    urldefrag,
    urlencode,
    urljoin,
    urlsplit,
    urlunsplit,
)

DEFAULT_PORTS = {"http": 80, "https": 443}

# Query parameters that only say where a visitor came from; the page is the same without them.
TRACKING_PARAMS = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "yclid",
        "_ga",
        "_gl",
        "ref_src",
    }
)
TRACKING_PREFIXES = ("utm_",)

# Characters a path or query may keep literally (RFC 3986 unreserved and sub-delims, plus the
# separators); everything else is percent-encoded, so `%7E` and `~` end up the same.
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_ROUTE = re.compile(r"^(?P<bang>!?)(?P<path>/.*)$", re.DOTALL)
_SKIP_SCHEMES = re.compile(r"^(mailto|javascript|tel|data|ftp|file|about|blob):", re.IGNORECASE)


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMS or lowered.startswith(TRACKING_PREFIXES)


def route_fragment(fragment: str) -> str:
    """A fragment that routes a single-page app (`#/plugins`, `#!/users/7`), normalised
    (`/plugins`, `!/users/7`); "" for an in-page anchor (`#install`) or the root route (`#/`).
    A second `#` starts the route's own in-page anchor, as hash routers (Vue Router, docute)
    write a link to a heading: `#/plugins#usage` is `/plugins`, `#/#contributors` the root."""
    match = _ROUTE.match(fragment)
    if not match:
        return ""
    route = match["path"].split("#", 1)[0]
    path = posixpath.normpath(quote(unquote(route), safe=_PATH_SAFE + "?"))
    path = "/" + path.lstrip("/")
    return "" if path == "/" else f"{match['bang']}{path}"


def is_route(url: str) -> bool:
    """Whether `url` names a client-side route by its fragment."""
    return bool(route_fragment(urlsplit(url).fragment))


def canonicalize(url: str) -> str:
    """The form lore stores a page URL in: lower-case scheme and host, no default port, no
    tracking parameters, `.`/`..` segments resolved, one trailing slash removed (except the
    root), and no fragment unless it routes a single-page app (`#/plugins`: a page of its own).
    Idempotent. Raises `ValueError` for anything but an absolute http(s) URL."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ValueError(f"{url!r} is not an absolute http(s) URL")
    host = parts.hostname.lower().rstrip(".")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{url!r} has an invalid port") from exc
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    # normpath resolves `.` and `..` and drops the trailing slash; it keeps a leading `//`.
    path = posixpath.normpath(quote(unquote(parts.path), safe=_PATH_SAFE) or "/")
    path = "/" + path.lstrip("/")
    params = parse_qsl(parts.query, keep_blank_values=True)
    query = urlencode([(k, v) for k, v in params if not _is_tracking(k)], quote_via=quote)
    return urlunsplit((scheme, netloc, path, query, route_fragment(parts.fragment)))


def fetch_address(url: str, linked: str) -> str:
    """Where to fetch the page stored under the canonical `url`, found as `linked` (a link
    resolved against its page, a start URL, a sitemap entry): `url` with the trailing slash
    `linked` had. `/kb/` and `/kb` are one page to lore, but a server may answer only one of
    them, and a page's relative links resolve against the address it was fetched at."""
    parts = urlsplit(url)
    if parts.path.endswith("/") or not urlsplit(linked).path.endswith("/"):
        return url
    return urlunsplit(parts._replace(path=parts.path + "/"))


def absolute_link(base: str, href: str, routes: bool = False) -> str | None:
    """`href` resolved against `base` and canonicalised; None for non-http links, and for
    in-page anchors (`#install`). A client-side route (`#/plugins`) is a link only with
    `routes` (a page rendered in a browser): fetched over HTTP it is the page it is on."""
    href = href.strip()
    if not href or _SKIP_SCHEMES.match(href):
        return None
    if href.startswith("#") and not (routes and route_fragment(href[1:])):
        return None
    try:
        target = canonicalize(urljoin(base, href))
    except ValueError:
        return None
    return target if routes or not is_route(target) else urldefrag(target)[0]


@dataclass(frozen=True)
class Scope:
    """Which URLs a crawl may follow from its start URL."""

    start_url: str
    allow_subdomains: bool = False
    include: tuple[str, ...] = ()  # glob patterns on the full URL or on its path
    exclude: tuple[str, ...] = ()
    # The hosts the job's tenant may use (host names, "*.example.com", "*"): others are out.
    allowed_hosts: tuple[str, ...] = ("*",)
    more_starts: tuple[str, ...] = ()  # a batch's other start URLs: their hosts are in too

    @property
    def host(self) -> str:
        return urlsplit(self.start_url).hostname or ""

    @cached_property
    def hosts(self) -> frozenset[str]:
        """The start URLs' hosts."""
        return frozenset(urlsplit(u).hostname or "" for u in (self.start_url, *self.more_starts))

    @property
    def root(self) -> str:
        """`scheme://host[:port]/` of the start URL: where robots.txt and sitemap.xml live."""
        return "{0.scheme}://{0.netloc}/".format(urlsplit(self.start_url))

    @cached_property
    def _roots(self) -> frozenset[str]:
        """The start hosts without `www.`: their subdomains are in with `allow_subdomains`."""
        return frozenset(host.removeprefix("www.") for host in self.hosts)

    @cached_property
    def origins(self) -> frozenset[tuple[str, str, int]]:
        """The start URLs' (scheme, host, port)."""
        return frozenset(origin(u) for u in (self.start_url, *self.more_starts))

    def login_allowed(self, url: str) -> bool:
        """Whether a crawl's login (headers, cookies) may go to `url`: one of the start URLs'
        origins (scheme, host and port: never over http when the start was https, never to
        another port), or with `allow_subdomains` a subdomain of one on the same scheme and
        port."""
        scheme, host, port = origin(url)
        if (scheme, host, port) in self.origins:
            return True
        if not self.allow_subdomains:
            return False
        return any(
            scheme == s and port == p and host.endswith("." + h.removeprefix("www."))
            for s, h, p in self.origins
        )

    def host_allowed(self, host: str) -> bool:
        host = host.lower()
        if host in self.hosts:
            return True
        if not self.allow_subdomains:
            return False
        return any(host == root or host.endswith("." + root) for root in self._roots)

    def reason_out(self, url: str) -> str | None:
        """None when `url` is in scope, else why not (`out_of_scope:<what>`)."""
        parts = urlsplit(url)
        if not self.host_allowed(parts.hostname or ""):
            return "out_of_scope:host"
        if not host_matches(parts.hostname or "", self.allowed_hosts):
            return "out_of_scope:domain_not_allowed"
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if self.include and not any(_match(url, path, p) for p in self.include):
            return "out_of_scope:include"
        if any(_match(url, path, p) for p in self.exclude):
            return "out_of_scope:exclude"
        return None


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or DEFAULT_PORTS.get(scheme, 0)


def host_matches(host: str, patterns: tuple[str, ...]) -> bool:
    """`host` is one of `patterns`: a host name, `*.example.com` (the domain and its
    subdomains) or `*` (any)."""
    host = host.lower()
    return any(
        fnmatch.fnmatchcase(host, p) or (p.startswith("*.") and host == p[2:]) for p in patterns
    )


def _match(url: str, path: str, pattern: str) -> bool:
    target = url if "://" in pattern else path
    return fnmatch.fnmatchcase(target, pattern)
