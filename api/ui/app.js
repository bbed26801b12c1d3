// lore's console: one page, no build step, no dependency. Every view reads lore's HTTP API
// with the API key the user signed in with (kept in this tab's sessionStorage only). Text from
// documents and pages is always set as text, never as HTML.

const KEY = "lore.apiKey";
const main = document.getElementById("main");
const statusBox = document.getElementById("status");
let timer = null; // a view's polling, stopped when the view changes
let view = 0; // which route() call drew the page: an older view's polling stops itself

// --- helpers ------------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = value;
    else el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function say(message) {
  statusBox.textContent = message;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { statusBox.textContent = ""; }, 4000);
}

class ApiError extends Error {
  constructor(status, body) {
    super(`${status} ${body.error || "error"}: ${body.message || ""}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({ message: response.statusText }));
  if (!response.ok) {
    if (response.status === 401 && location.hash !== "#/signin") {
      sessionStorage.removeItem(KEY);
      location.hash = "#/signin";
    }
    throw new ApiError(response.status, data);
  }
  return data;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    for (const v of [].concat(value)) if (v !== "" && v !== null && v !== undefined) q.append(name, v);
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

function field(label, input) {
  return h("label", {}, label, input);
}

function when(iso) {
  return iso ? new Date(iso).toLocaleString() : "";
}

function page(title, ...content) {
  document.title = `${title} · lore console`;
  main.replaceChildren(h("h1", { text: title }), ...content);
  main.focus({ preventScroll: true });
}

function failure(error) {
  return h("p", { class: "error", role: "alert", text: error.message || String(error) });
}

function table(columns, rows, caption) {
  return h("table", {},
    caption ? h("caption", { class: "muted", text: caption }) : null,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : null, text: c.title })))),
    h("tbody", {}, rows.map((row) => h("tr", {}, columns.map((c) => h("td", { class: c.num ? "num" : null }, c.cell(row)))))),
  );
}

function pager(offset, limit, total, go) {
  return h("div", { class: "pager" },
    h("button", { type: "button", class: "secondary", disabled: offset <= 0, onclick: () => go(Math.max(0, offset - limit)) }, "Previous"),
    h("span", { class: "muted", text: total ? `${offset + 1}–${Math.min(offset + limit, total)} of ${total}` : "none" }),
    h("button", { type: "button", class: "secondary", disabled: offset + limit >= total, onclick: () => go(offset + limit) }, "Next"),
  );
}

// --- sign in ------------------------------------------------------------------------------

function signin() {
  const input = h("input", { type: "password", name: "key", autocomplete: "off", required: true, size: 50 });
  const result = h("div");
  const form = h("form", { class: "stack", onsubmit: async (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, input.value.trim());
    try {
      await api("GET", "/knowledge/documents?limit=1");
      location.hash = "#/documents";
    } catch (error) {
      sessionStorage.removeItem(KEY);
      result.replaceChildren(failure(error));
    }
  } }, field("API key", input), h("button", { type: "submit" }, "Sign in"), result);
  page("Sign in", h("p", { class: "muted", text: "An API key of this lore server (lore_…): `lore serve` prints the first one; `lore keys create` makes more. It stays in this tab only." }), form);
}

// --- documents ----------------------------------------------------------------------------

async function documents(params) {
  const limit = 25;
  const offset = Number(params.get("offset") || 0);
  const filters = { title: params.get("title") || "", domain: params.get("domain") || "", type: params.get("type") || "", source: params.get("source") || "" };
  const inputs = {
    title: h("input", { name: "title", value: filters.title }),
    domain: h("input", { name: "domain", value: filters.domain, placeholder: "docs.example.com" }),
    type: h("input", { name: "type", value: filters.type, placeholder: "html, pdf, …", size: 8 }),
    source: h("select", { name: "source" }, ["", "link", "upload", "spa"].map((s) => h("option", { value: s, selected: s === filters.source }, s || "any"))),
  };
  const form = h("form", { class: "bar", role: "search", onsubmit: (event) => {
    event.preventDefault();
    location.hash = `#/documents${query(Object.fromEntries(Object.entries(inputs).map(([n, i]) => [n, i.value.trim()])))}`;
  } }, field("Title contains", inputs.title), field("Domain", inputs.domain), field("Type", inputs.type), field("Source", inputs.source), h("button", { type: "submit" }, "Filter"));
  page("Documents", form, h("p", { class: "muted", text: "Loading…" }));
  try {
    const data = await api("GET", `/knowledge/documents${query({ ...filters, limit, offset })}`);
    const go = (next) => { location.hash = `#/documents${query({ ...filters, offset: next })}`; };
    main.lastChild.replaceWith(h("div", {},
      table([
        { title: "Title", cell: (d) => h("a", { href: `#/documents/${d.id}`, text: d.title || d.url }) },
        { title: "URL", cell: (d) => h("span", { class: "muted", text: d.url }) },
        { title: "Type", cell: (d) => d.docType },
        { title: "Source", cell: (d) => d.source },
        { title: "Chunks", num: true, cell: (d) => String(d.chunkCount) },
        { title: "Updated", cell: (d) => when(d.updatedAt) },
      ], data.documents, `${data.total} documents`),
      pager(offset, limit, data.total, go),
    ));
  } catch (error) {
    main.lastChild.replaceWith(failure(error));
  }
}

async function documentView(id) {
  page("Document", h("p", { class: "muted", text: "Loading…" }));
  let data;
  try {
    data = await api("GET", `/knowledge/documents/${encodeURIComponent(id)}`);
  } catch (error) {
    main.lastChild.replaceWith(failure(error));
    return;
  }
  const d = data.document;
  const remove = h("button", { type: "button", class: "danger", onclick: async () => {
    if (!confirm(`Delete "${d.title || d.url}" and its ${d.chunkCount} chunks?`)) return;
    try {
      await api("DELETE", `/knowledge/documents/${encodeURIComponent(id)}`);
      say("Document deleted");
      location.hash = "#/documents";
    } catch (error) { say(error.message); }
  } }, "Delete document");
  page(d.title || d.url,
    h("dl", { class: "facts" },
      h("dt", { text: "URL" }), h("dd", { text: d.url }),
      h("dt", { text: "Type" }), h("dd", { text: `${d.docType} (${d.extractor || "extracted"})` }),
      h("dt", { text: "Source" }), h("dd", { text: d.source }),
      h("dt", { text: "Updated" }), h("dd", { text: when(d.updatedAt) }),
      h("dt", { text: "Metadata" }), h("dd", { text: Object.entries(d.metadata || {}).map(([k, v]) => `${k}=${v}`).join(", ") || "none" }),
      d.warnings.length ? [h("dt", { text: "Warnings" }), h("dd", { text: d.warnings.join("; ") })] : null,
    ),
    h("p", {}, remove),
    h("h2", { text: "Markdown" }),
    data.markdown === null ? h("p", { class: "muted", text: "No Markdown kept for this document (an app page's phases, or indexed before lore kept texts): read its chunks." }) : h("pre", { text: data.markdown }),
    h("h2", { text: `Chunks (${data.chunksTotal})` }),
    data.chunks.map((c) => h("section", { class: "chunk", "aria-label": `Chunk ${c.position}` },
      h("p", { class: "path", text: [`#${c.position}`, c.phase, ...(c.headingPath.length ? [c.headingPath.join(" › ")] : [])].join(" · ") }),
      h("pre", { text: c.text }),
    )),
  );
}

// --- jobs ---------------------------------------------------------------------------------

async function jobs(params) {
  const limit = 25;
  const offset = Number(params.get("offset") || 0);
  const state = params.get("status") || "";
  const url = h("input", { name: "url", type: "url", required: true, size: 40, placeholder: "https://docs.example.com/" });
  const strategy = h("select", { name: "strategy" }, ["single", "sitemap", "spider"].map((s) => h("option", { value: s }, s)));
  const maxPages = h("input", { name: "maxPages", type: "number", min: 1, value: 50, size: 6 });
  const result = h("div");
  const start = h("form", { class: "bar", onsubmit: async (event) => {
    event.preventDefault();
    try {
      const body = { url: url.value.trim(), strategy: strategy.value };
      if (strategy.value !== "single") body.maxPages = Number(maxPages.value);
      const job = await api("POST", "/knowledge/index-link", body);
      location.hash = `#/jobs/${job.jobId}`;
    } catch (error) { result.replaceChildren(failure(error)); }
  } }, field("URL", url), field("Strategy", strategy), field("Max pages", maxPages), h("button", { type: "submit" }, "Start crawl"));
  const filter = h("select", { name: "status", onchange: (event) => { location.hash = `#/jobs${query({ status: event.target.value })}`; } },
    ["", "queued", "running", "completed", "failed", "cancelled"].map((s) => h("option", { value: s, selected: s === state }, s || "any")));
  page("Jobs", h("h2", { text: "New crawl" }), start, result, h("h2", { text: "All jobs" }), field("Status", filter), h("p", { class: "muted", text: "Loading…" }));
  try {
    const data = await api("GET", `/knowledge/jobs${query({ status: state, limit, offset })}`);
    main.lastChild.replaceWith(h("div", {},
      table([
        { title: "Job", cell: (j) => h("a", { href: `#/jobs/${j.id}`, text: j.request.url || j.id }) },
        { title: "Kind", cell: (j) => j.kind },
        { title: "Status", cell: (j) => j.status },
        { title: "Progress", num: true, cell: (j) => `${Math.round(j.progress * 100)} %` },
        { title: "Message", cell: (j) => j.message },
        { title: "Created", cell: (j) => when(j.createdAt) },
      ], data.jobs, `${data.total} jobs`),
      pager(offset, limit, data.total, (next) => { location.hash = `#/jobs${query({ status: state, offset: next })}`; }),
    ));
  } catch (error) {
    main.lastChild.replaceWith(failure(error));
  }
}

async function jobView(id, params) {
  const limit = 50;
  const offset = Number(params.get("offset") || 0);
  const urlState = params.get("state") || "";
  const progress = h("progress", { max: 1, value: 0, "aria-label": "Progress" });
  const summary = h("p", { "aria-live": "polite" });
  const counts = h("p", { class: "muted" });
  const cancel = h("button", { type: "button", class: "danger", onclick: async () => {
    try { await api("POST", `/knowledge/jobs/${id}/cancel`); say("Cancel requested"); refresh(); } catch (error) { say(error.message); }
  } }, "Cancel");
  let request = null;
  const rerun = h("button", { type: "button", class: "secondary", onclick: async () => {
    if (request.login) {
      say("This crawl had a login, which lore does not keep: start it again with its headers and cookies (API or CLI).");
      return;
    }
    const { url, strategy, maxPages, maxDepth, include, exclude, allowSubdomains, render, metadata, map } = request;
    const body = { strategy, maxPages, maxDepth, include, exclude, allowSubdomains, render, metadata, map };
    if (request.urls) body.urls = request.urls; else body.url = url;
    if (strategy === "single") { delete body.maxPages; delete body.maxDepth; }
    try {
      const job = await api("POST", "/knowledge/index-link", body);
      location.hash = `#/jobs/${job.jobId}`;
    } catch (error) { say(error.message); }
  } }, "Run again");
  const filter = h("select", { name: "state", onchange: (event) => { location.hash = `#/jobs/${id}${query({ state: event.target.value })}`; } },
    ["", "pending", "queued", "ingested", "unchanged", "skipped", "failed", "listed", "removed"].map((s) => h("option", { value: s, selected: s === urlState }, s || "any")));
  const urls = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  page("Job", summary, progress, counts, h("p", {}, cancel, " ", rerun), h("h2", { text: "URLs" }), field("State", filter), urls);

  const mine = view;
  let poll = null;
  async function refresh() {
    if (mine !== view) { clearInterval(poll); return; } // the user went elsewhere
    let job;
    try {
      job = await api("GET", `/knowledge/jobs/${encodeURIComponent(id)}`);
    } catch (error) {
      summary.replaceChildren(failure(error));
      clearInterval(poll);
      return;
    }
    request = job.request;
    main.querySelector("h1").textContent = `Job: ${job.request.url || job.id}`;
    const done = ["completed", "failed", "cancelled"].includes(job.status);
    summary.textContent = `${job.status}: ${job.message}${job.error ? ` (${job.error})` : ""}`;
    summary.className = job.status === "failed" ? "error" : job.status === "completed" ? "ok" : "";
    summary.dataset.status = job.status;
    progress.value = job.progress;
    counts.textContent = Object.entries(job.counts).filter(([, n]) => n).map(([name, n]) => `${n} ${name}`).join(", ");
    cancel.hidden = done;
    rerun.hidden = !done || job.kind !== "index-link";
    const page = await api("GET", `/knowledge/jobs/${encodeURIComponent(id)}/urls${query({ state: urlState, limit, offset })}`);
    urls.replaceChildren(
      table([
        { title: "URL", cell: (u) => u.documentId ? h("a", { href: `#/documents/${u.documentId}`, text: u.url }) : u.url },
        { title: "State", cell: (u) => u.state },
        { title: "Reason", cell: (u) => u.reason },
        { title: "HTTP", num: true, cell: (u) => u.statusCode ?? "" },
        { title: "Chunks", num: true, cell: (u) => String(u.chunks) },
      ], page.urls, `${page.total} URLs`),
      pager(offset, limit, page.total, (next) => { location.hash = `#/jobs/${id}${query({ state: urlState, offset: next })}`; }),
    );
    if (done) clearInterval(poll);
  }
  await refresh();
  if (mine === view && !["completed", "failed", "cancelled"].includes(summary.dataset.status)) {
    poll = timer = setInterval(refresh, 1000);
  }
}

// --- search -------------------------------------------------------------------------------

function search() {
  const text = h("input", { name: "query", type: "search", required: true, size: 40 });
  const domains = h("input", { name: "domains", placeholder: "docs.example.com", size: 18 });
  const meta = h("input", { name: "metadata", placeholder: "team=billing", size: 14 });
  const k = h("input", { name: "k", type: "number", min: 1, max: 50, value: 10, size: 4 });
  const mode = h("select", { name: "mode" }, ["hybrid", "dense", "sparse"].map((m) => h("option", { value: m }, m)));
  const sources = h("select", { name: "sources" }, ["", "link", "upload", "spa"].map((s) => h("option", { value: s }, s || "any")));
  const history = h("input", { type: "checkbox", name: "includeSuperseded" });
  const flagged = h("input", { type: "checkbox", name: "includeFlagged" });
  const results = h("div", { "aria-live": "polite" });
  const form = h("form", { class: "bar", role: "search", onsubmit: async (event) => {
    event.preventDefault();
    const body = { query: text.value, k: Number(k.value), mode: mode.value, explain: true,
      includeSuperseded: history.checked, includeFlagged: flagged.checked };
    if (domains.value.trim()) body.domains = domains.value.split(",").map((d) => d.trim()).filter(Boolean);
    if (sources.value) body.sources = [sources.value];
    if (meta.value.trim()) body.metadata = Object.fromEntries(meta.value.split(",").map((p) => p.split("=").map((s) => s.trim())).filter((p) => p.length === 2 && p[0]));
    results.replaceChildren(h("p", { class: "muted", text: "Searching…" }));
    try {
      const data = await api("POST", "/knowledge/query", body);
      results.replaceChildren(
        h("p", { class: "muted", text: `${data.chunks.length} chunks` }),
        ...data.chunks.map((c, n) => h("article", { class: "chunk" },
          h("h3", {}, `${n + 1}. `, h("a", { href: `#/documents/${c.documentId}`, text: c.title || c.url })),
          h("p", { class: "path" }, h("span", { text: c.url }), c.headingPath.length ? ` · ${c.headingPath.join(" › ")}` : ""),
          h("p", {},
            h("span", { class: "tag", text: c.phase }), h("span", { class: "tag", text: c.source || c.docType }),
            c.supersededBy ? h("span", { class: "tag", text: "superseded" }) : null,
            c.flag ? h("span", { class: "tag", text: `flagged: ${c.flag}` }) : null,
            h("span", { class: "muted", text: ` fetched ${when(c.fetchedAt)}` }),
          ),
          h("p", { class: "scores", text: c.explain ? `score ${c.score.toFixed(4)} = fused ${c.explain.fused.toFixed(4)} × freshness ${c.explain.freshness.toFixed(3)} × phrase ${c.explain.phrase.toFixed(3)} × section ${c.explain.section.toFixed(3)} · dense ${c.explain.dense === null ? "–" : c.explain.dense.toFixed(4)} · lexical ${c.explain.lexical.toFixed(3)}` : `score ${c.score.toFixed(4)}` }),
          h("pre", { text: c.text }),
        )),
      );
    } catch (error) { results.replaceChildren(failure(error)); }
  } },
  field("Query", text), field("Domains", domains), field("Metadata", meta), field("Source", sources), field("Mode", mode), field("k", k),
  h("label", { class: "check" }, history, "Superseded too"), h("label", { class: "check" }, flagged, "Flagged too"),
  h("button", { type: "submit" }, "Search"));
  page("Search", form, results);
}

// --- skills -------------------------------------------------------------------------------

function chart(days, key, label, target) {
  const width = 480, height = 90, pad = 4;
  const points = days.map((d, i) => [pad + (days.length < 2 ? 0 : (i * (width - 2 * pad)) / (days.length - 1)), height - pad - d[key] * (height - 2 * pad)]);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `${label} by day, target ${Math.round(target * 100)} %`);
  const line = (x1, y1, x2, y2, color, dash) => {
    const l = document.createElementNS(svg.namespaceURI, "line");
    Object.entries({ x1, y1, x2, y2, stroke: color, "stroke-dasharray": dash || "" }).forEach(([n, v]) => l.setAttribute(n, v));
    svg.append(l);
  };
  const y = height - pad - target * (height - 2 * pad);
  line(pad, y, width - pad, y, "#a4161a", "4 3");
  if (points.length) {
    const path = document.createElementNS(svg.namespaceURI, "polyline");
    path.setAttribute("points", points.map((p) => p.join(",")).join(" "));
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "#0b5cad");
    path.setAttribute("stroke-width", "2");
    svg.append(path);
    for (const [x, y] of points) {
      const dot = document.createElementNS(svg.namespaceURI, "circle");
      Object.entries({ cx: x, cy: y, r: 3, fill: "#0b5cad" }).forEach(([n, v]) => dot.setAttribute(n, v));
      svg.append(dot);
    }
  }
  return svg;
}

async function skills(params) {
  const domain = params.get("domain") || "";
  const input = h("input", { name: "domain", value: domain, placeholder: "shop.example.com" });
  const form = h("form", { class: "bar", onsubmit: (event) => { event.preventDefault(); location.hash = `#/skills${query({ domain: input.value.trim() })}`; } },
    field("Domain", input), h("button", { type: "submit" }, "Filter"));
  page("Skills", h("h2", { text: "KPIs, last 30 days" }), h("div", { id: "kpis" }, "Loading…"), h("h2", { text: "Skills" }), form, h("div", { id: "skill-list" }, "Loading…"));
  const [kpiBox, listBox] = [main.querySelector("#kpis"), main.querySelector("#skill-list")];
  try {
    const k = await api("GET", "/skills/kpis?days=30");
    const pct = (x) => `${(x * 100).toFixed(1)} %`;
    kpiBox.replaceChildren(
      h("p", {}, `Hit rate ${pct(k.total.hitRate)} of ${k.total.lookups} lookups (target 10 %) · effectiveness ${pct(k.total.effectiveness)} of ${k.total.successes + k.total.failures} reported uses (target 60 %)`),
      h("h3", { text: "Hit rate by day" }), chart(k.days, "hitRate", "Hit rate", 0.1),
      h("h3", { text: "Effectiveness by day" }), chart(k.days, "effectiveness", "Effectiveness", 0.6),
      table([
        { title: "Day", cell: (d) => d.day },
        { title: "Lookups", num: true, cell: (d) => String(d.lookups) },
        { title: "Hit rate", num: true, cell: (d) => pct(d.hitRate) },
        { title: "Successes", num: true, cell: (d) => String(d.successes) },
        { title: "Failures", num: true, cell: (d) => String(d.failures) },
        { title: "Effectiveness", num: true, cell: (d) => pct(d.effectiveness) },
      ], k.days, "KPIs by day"),
    );
  } catch (error) { kpiBox.replaceChildren(failure(error)); }
  try {
    const data = await api("GET", `/skills${query({ domain, limit: 200 })}`);
    listBox.replaceChildren(table([
      { title: "Domain", cell: (s) => s.domain },
      { title: "Goal", cell: (s) => s.goal },
      { title: "Hint", cell: (s) => s.hint },
      { title: "Successes", num: true, cell: (s) => String(s.successCount) },
      { title: "Failures", num: true, cell: (s) => String(s.failureCount) },
      { title: "Last used", cell: (s) => when(s.lastUsed) },
      { title: "", cell: (s) => h("button", { type: "button", class: "secondary", "aria-label": `Forget the skill for ${s.goal}`, onclick: async () => {
        if (!confirm(`Forget the skill "${s.goal}"?`)) return;
        try { await api("DELETE", `/skills/${s.id}`); say("Skill forgotten"); skills(params); } catch (error) { say(error.message); }
      } }, "Forget") },
    ], data.skills, `${data.total} skills`));
  } catch (error) { listBox.replaceChildren(failure(error)); }
}

// --- site models --------------------------------------------------------------------------

async function models(params) {
  const domain = params.get("domain") || "";
  const input = h("input", { name: "domain", value: domain, required: true, placeholder: "app.example.com" });
  const form = h("form", { class: "bar", onsubmit: (event) => { event.preventDefault(); location.hash = `#/models${query({ domain: input.value.trim() })}`; } },
    field("Domain", input), h("button", { type: "submit" }, "Show"));
  page("Site models", h("p", { class: "muted", text: "What SPA captures learned about an app's pages: page type, key elements, behaviours, recipes." }), form, h("div"));
  if (!domain) return;
  try {
    const data = await api("GET", `/knowledge/spa/models${query({ domain })}`);
    main.lastChild.replaceWith(h("div", {},
      data.models.length ? null : h("p", { class: "muted", text: "No captures of this domain yet." }),
      data.models.map((m) => h("section", { class: "chunk", "aria-label": m.url },
        h("h2", { text: m.url }),
        h("p", { class: "muted", text: `updated ${when(m.updatedAt)}` }),
        h("dl", { class: "facts" }, Object.entries(m.model).map(([name, value]) => [
          h("dt", { text: name }),
          h("dd", {}, typeof value === "object" && value !== null ? h("pre", { text: JSON.stringify(value, null, 2) }) : String(value)),
        ])),
      )),
    ));
  } catch (error) { main.lastChild.replaceWith(failure(error)); }
}

// --- keys and tenants ---------------------------------------------------------------------

async function admin() {
  page("Keys and tenants", h("p", { class: "muted", text: "Loading…" }));
  let tenants, keys;
  try {
    [tenants, keys] = await Promise.all([api("GET", "/admin/tenants"), api("GET", "/admin/keys")]);
  } catch (error) {
    main.lastChild.replaceWith(error.status === 403 ? h("p", { class: "error", role: "alert", text: "This page needs an admin key (lore keys create --admin)." }) : failure(error));
    return;
  }
  const tenant = h("input", { name: "tenant", required: true, pattern: "[A-Za-z0-9_.\\-]+" });
  const name = h("input", { name: "name" });
  const domains = h("input", { name: "allowedDomains", placeholder: "*.example.com, docs.other.com" });
  const isAdmin = h("input", { type: "checkbox", name: "admin" });
  const made = h("div", { "aria-live": "polite" });
  const form = h("form", { class: "bar", onsubmit: async (event) => {
    event.preventDefault();
    const body = { tenant: tenant.value.trim(), name: name.value.trim(), admin: isAdmin.checked };
    if (domains.value.trim()) body.allowedDomains = domains.value.split(",").map((d) => d.trim()).filter(Boolean);
    try {
      const result = await api("POST", "/admin/keys", body);
      await admin();
      main.querySelector("#made").replaceChildren(h("p", {}, `Key for ${result.record.tenant} (shown once): `, h("span", { class: "key", text: result.key })));
    } catch (error) { made.replaceChildren(failure(error)); }
  } }, field("Tenant", tenant), field("Name", name), field("Allowed domains (new tenant)", domains), h("label", { class: "check" }, isAdmin, "Admin"), h("button", { type: "submit" }, "Create key"));
  page("Keys and tenants",
    h("h2", { text: "Tenants" }),
    table([
      { title: "Tenant", cell: (t) => t.id },
      { title: "Allowed domains", cell: (t) => t.allowedDomains.join(", ") },
      { title: "Active keys", num: true, cell: (t) => String(t.activeKeys) },
    ], tenants.tenants),
    h("h2", { text: "New key" }), form, h("div", { id: "made" }), made,
    h("h2", { text: "Keys" }),
    table([
      { title: "Key", cell: (k) => `${k.prefix}…` },
      { title: "Tenant", cell: (k) => k.tenant },
      { title: "Name", cell: (k) => k.name },
      { title: "Admin", cell: (k) => (k.admin ? "yes" : "") },
      { title: "Created", cell: (k) => when(k.createdAt) },
      { title: "State", cell: (k) => (k.revokedAt ? `revoked ${when(k.revokedAt)}` : "active") },
      { title: "", cell: (k) => (k.revokedAt ? "" : h("button", { type: "button", class: "secondary", "aria-label": `Revoke key ${k.prefix}`, onclick: async () => {
        if (!confirm(`Revoke ${k.prefix}…? Agents using it are refused within seconds.`)) return;
        try { await api("DELETE", `/admin/keys/${k.id}`); say("Key revoked"); admin(); } catch (error) { say(error.message); }
      } }, "Revoke")) },
    ], keys.keys),
  );
}

// --- routing ------------------------------------------------------------------------------

const ROUTES = [
  [/^#\/signin$/, signin],
  [/^#\/documents\/([^/?]+)$/, (m) => documentView(decodeURIComponent(m[1]))],
  [/^#\/documents$/, (m, p) => documents(p)],
  [/^#\/jobs\/([^/?]+)$/, (m, p) => jobView(decodeURIComponent(m[1]), p)],
  [/^#\/jobs$/, (m, p) => jobs(p)],
  [/^#\/search$/, search],
  [/^#\/skills$/, (m, p) => skills(p)],
  [/^#\/models$/, (m, p) => models(p)],
  [/^#\/admin$/, admin],
];

async function route() {
  clearInterval(timer);
  view += 1;
  const [path, search] = (location.hash || "#/documents").split("?");
  const params = new URLSearchParams(search || "");
  if (!sessionStorage.getItem(KEY) && path !== "#/signin") {
    try { await api("GET", "/knowledge/documents?limit=1"); } catch { location.hash = "#/signin"; return; }
  }
  const signedIn = Boolean(sessionStorage.getItem(KEY));
  document.getElementById("who").textContent = signedIn ? "signed in" : "";
  document.getElementById("signout").hidden = !signedIn;
  for (const a of document.querySelectorAll("header nav a")) {
    if (path.startsWith(a.getAttribute("href"))) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const [pattern, view] of ROUTES) {
    const match = path.match(pattern);
    if (match) { await view(match, params); return; }
  }
  location.hash = "#/documents";
}

document.getElementById("signout").addEventListener("click", () => {
  sessionStorage.removeItem(KEY);
  location.hash = "#/signin";
});
window.addEventListener("hashchange", route);
route();
