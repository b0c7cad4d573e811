// The explorer's pages: /ui (open a memory), /ui/tenants/{t} (search),
// /ui/tenants/{t}/entities/{id} (timelines, neighbourhood, search).
//
// The address carries ?as_of=&known_at= in the API's own RFC 3339 form, so a view can
// be shared and opened at a date; the API key never goes into it.

import { Api, ApiError, forgetKey, storedKey, storeKey } from "./api.js";
import { EntityMemory, STATUS_WORDS, describeValue, fateOf, statusAt } from "./memory.js";
import { drawNeighbourhood, typeColours } from "./graph.js";
import { contentText, renderResults } from "./search.js";
import { drawLegend, drawTimelines, patternDefs } from "./timeline.js";
import { formatInstant, fromMs, humanInstant, nowUs, parseInstant, toMs } from "./time.js";

const root = document.body.dataset.root || "";
const $ = (id) => document.getElementById(id);
const DAY_MS = 86400e3;
const SLIDER_MAX = 1000;

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function route() {
  const rest = location.pathname.slice(root.length);
  const m = /^\/ui\/tenants\/([^/]+)(?:\/entities\/([^/]+))?\/?$/.exec(rest);
  if (!m) return { tenant: null, entity: null };
  try {
    return { tenant: decodeURIComponent(m[1]), entity: m[2] ? decodeURIComponent(m[2]) : null };
  } catch {
    return { tenant: null, entity: null };
  }
}

const pageUrl = (tenant, entity) =>
  `${root}/ui/tenants/${encodeURIComponent(tenant)}` +
  (entity ? `/entities/${encodeURIComponent(entity)}` : "");

// -- state: the two times, canonical RFC 3339 text or null (= now) ----------------------
const state = { asOf: null, knownAt: null, depth: 2, pinned: null };

function readTimesFromUrl() {
  const params = new URLSearchParams(location.search);
  const problems = [];
  for (const [name, field] of [["as_of", "asOf"], ["known_at", "knownAt"]]) {
    const raw = params.get(name);
    if (raw === null || raw === "") continue;
    const us = parseInstant(raw);
    if (us === null) problems.push(`${name} in the address is not an RFC 3339 timestamp: ${raw}`);
    else state[field] = formatInstant(us);
  }
  showTimeError(problems.join(" "));
}

function writeTimesToUrl() {
  const params = new URLSearchParams();
  if (state.asOf) params.set("as_of", state.asOf);
  if (state.knownAt) params.set("known_at", state.knownAt);
  const query = params.toString();
  history.replaceState(null, "", location.pathname + (query ? `?${query}` : ""));
}

function linkTo(entity) {
  const url = new URL(pageUrl(ctx.tenant, entity), location.origin);
  if (state.asOf) url.searchParams.set("as_of", state.asOf);
  if (state.knownAt) url.searchParams.set("known_at", state.knownAt);
  return url.pathname + url.search;
}

function showTimeError(text) {
  $("time-error").textContent = text;
  $("time-error").hidden = !text;
}

// -- errors: key prompt and problems ----------------------------------------------------
let rerun = () => {};

function showProblem(err) {
  const p = err.problem || {};
  $("workspace").hidden = true;
  $("problem").hidden = false;
  $("problem-title").textContent = p.title || "Error";
  $("problem-status").textContent = err.status ? `${err.status}:` : "";
  $("problem-detail").textContent = p.detail || "";
  document.title = `${p.title || "Error"} · sgam`;
}

function askForKey(err) {
  $("workspace").hidden = true;
  $("home").hidden = true;
  const hadKey = Boolean(storedKey());
  if (hadKey) forgetKey();
  updateKeyStatus();
  $("key-prompt").hidden = false;
  const reason = err.problem?.detail || "an API key is required";
  $("key-reason").textContent = hadKey
    ? `The key was refused (${reason}). Enter another; it is kept in this tab only and never put in the address.`
    : `This server asks for an API key (${reason}). It is kept in this browser tab only (session storage), sent as a bearer header and never put in the address.`;
  $("key-input").focus();
}

/** Route an API failure: 401 asks for a key, anything else is shown as the API said it. */
function fail(err) {
  if (!(err instanceof ApiError)) throw err;
  if (err.status === 401) askForKey(err);
  else showProblem(err);
}

function updateKeyStatus() {
  $("key-status").hidden = !storedKey();
}

// -- the page --------------------------------------------------------------------------
const ctx = { tenant: null, entity: null, api: null, memory: null };
let view = null; // what the entity view last loaded
let generation = 0;

function times() {
  return { asOf: state.asOf, knownAt: state.knownAt };
}

function asOfUs() {
  return state.asOf ? parseInstant(state.asOf) : nowUs();
}

function crumbs() {
  const nav = $("crumbs");
  nav.replaceChildren();
  if (!ctx.tenant) return;
  const ol = h("ol");
  ol.append(h("li", {}, h("a", { href: linkTo(null) }, `tenant ${ctx.tenant}`)));
  if (ctx.entity) ol.append(h("li", {}, h("span", { "aria-current": "page" }, `entity ${ctx.entity}`)));
  nav.append(ol);
}

function summary() {
  const asOf = state.asOf ? `at ${humanInstant(parseInstant(state.asOf))}` : "now";
  const known = state.knownAt ? `at ${humanInstant(parseInstant(state.knownAt))}` : "now";
  $("time-summary").textContent = `Showing what was valid ${asOf}, as sgam knew it ${known}.`;
  $("search-scope").textContent =
    `Searches facts valid ${asOf}${state.asOf ? "" : " (current only)"}, as known ${known}.`;
  $("as-of-text").value = state.asOf ?? "";
  $("known-at-text").value = state.knownAt ?? "";
}

// -- as of ----------------------------------------------------------------------------
function domain() {
  let [lo, hi] = view.baseDomain;
  if (state.asOf) {
    const a = toMs(parseInstant(state.asOf));
    if (a < lo || a > hi) {
      const pad = (Math.max(hi, a) - Math.min(lo, a)) * 0.04;
      lo = Math.min(lo, a - pad);
      hi = Math.max(hi, a + pad);
    }
  }
  return [lo, hi];
}

function syncAsOfSlider() {
  const slider = $("as-of-range");
  if (!view) return;
  const [d0, d1] = domain();
  const a = toMs(asOfUs());
  const v = Math.round(((a - d0) / (d1 - d0)) * SLIDER_MAX);
  slider.value = String(Math.min(SLIDER_MAX, Math.max(0, v)));
  slider.setAttribute("aria-valuetext", state.asOf ? `as of ${humanInstant(parseInstant(state.asOf))}` : "as of now");
}

function setAsOf(text, { reload = true } = {}) {
  state.asOf = text;
  writeTimesToUrl();
  summary();
  syncAsOfSlider();
  renderTimelines();
  if (reload) reloadAtAsOf();
}

let asOfTimer = null;
function reloadAtAsOf() {
  clearTimeout(asOfTimer);
  asOfTimer = setTimeout(() => {
    loadIncoming();
    loadNeighbourhood();
  }, 250);
}

// -- known at ---------------------------------------------------------------------------
function syncKnownAtSlider() {
  const slider = $("known-at-range");
  const moments = view?.moments ?? [];
  slider.max = String(moments.length);
  let i = moments.length;
  if (state.knownAt) {
    const k = parseInstant(state.knownAt);
    i = 0;
    while (i < moments.length && moments[i].us <= k) i += 1;
    i = Math.max(0, i - 1);
  }
  slider.value = String(i);
  slider.setAttribute("aria-valuetext", knownAtText(i, moments));
  const changes = `${moments.length} belief change${moments.length === 1 ? "" : "s"} recorded about this entity`;
  $("known-at-what").textContent = state.knownAt
    ? `${changes}; the last one by this known at: ${knownAtText(i, moments)}.`
    : `${changes}; move the known-at slider to replay them.`;
}

function knownAtText(i, moments) {
  if (i >= moments.length) return "known now";
  const m = moments[i];
  return `belief after ${humanInstant(m.us)}: recorded ${m.what.join("; ")}`;
}

async function setKnownAt(text) {
  state.knownAt = text;
  writeTimesToUrl();
  summary();
  await loadEntity();
}

// -- entity view -------------------------------------------------------------------------
function baseDomain(versions) {
  if (!versions.length) {
    const now = Date.now();
    return [now - 30 * DAY_MS, now + DAY_MS];
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of versions) {
    lo = Math.min(lo, toMs(v.from));
    hi = Math.max(hi, toMs(v.to ?? v.from), toMs(v.from));
  }
  const span = Math.max(hi - lo, DAY_MS);
  return [lo - span * 0.08, hi + span * 0.3]; // room on the right for open bars
}

function renderTimelines() {
  if (!view) return;
  const asOf = asOfUs();
  drawTimelines($("timelines"), view.timelines, {
    domain: domain(),
    asOf,
    asOfText: state.asOf ? `as of ${humanInstant(asOf)}` : "as of now",
    onSelect: showVersion,
  });
  renderTable(asOf);
}

function renderTable(asOf) {
  const body = $("versions").tBodies[0];
  body.replaceChildren();
  for (const t of view.timelines) {
    for (const v of t.versions) {
      const status = statusWord(v, asOf);
      body.append(
        h(
          "tr",
          { "data-status": status },
          h("td", {}, t.label),
          h("td", {}, describeValue(v)),
          h("td", {}, humanInstant(v.from)),
          h("td", {}, v.to === null ? "open" : humanInstant(v.to)),
          h("td", {}, status),
          h("td", {}, (v.sources.length ? v.sources : [v.source_episode_id]).filter(Boolean).join(", ")),
          h("td", {}, humanInstant(v.rec)),
        ),
      );
    }
  }
}

const statusWord = (v, asOf) => STATUS_WORDS[statusAt(v, asOf)];

const episodes = new Map();
function episode(id) {
  if (!episodes.has(id)) {
    const p = ctx.api.episode(id);
    p.catch(() => episodes.delete(id));
    episodes.set(id, p);
  }
  return episodes.get(id);
}

function dl(pairs) {
  const list = h("dl");
  for (const [k, v] of pairs) list.append(h("dt", {}, k), h("dd", {}, v));
  return list;
}

async function renderEpisodes(container, ids) {
  for (const id of ids) {
    const box = h("div", { class: "episode", "data-episode": id }, h("h4", {}, `Episode ${id}`));
    container.append(box);
    try {
      const ep = await episode(id);
      box.append(
        h("blockquote", { class: "episode-text" }, contentText(ep.content)),
        dl([
          ["kind", ep.kind],
          ["occurred at", humanInstant(parseInstant(ep.occurred_at))],
          ["recorded at", humanInstant(parseInstant(ep.recorded_at))],
          ["status", ep.status],
        ]),
      );
    } catch (e) {
      box.append(h("p", { class: "error" }, e instanceof ApiError ? `${e.status}: ${e.problem.detail || e.problem.title}` : String(e)));
    }
  }
}

let detailToken = 0;
async function showVersion(v, status, pin) {
  if (state.pinned && !pin && state.pinned !== v.version_id && document.activeElement?.dataset?.version !== v.version_id) {
    return; // a clicked version stays until another is clicked or focused
  }
  state.pinned = pin ? v.version_id : null;
  const token = ++detailToken;
  const body = $("details-body");
  $("details").hidden = false;
  body.replaceChildren(
    h("h3", {}, `${v.predicate} = ${describeValue(v)}`),
    dl([
      ["status at as of", STATUS_WORDS[status]],
      ["how it ends", fateOf(v)],
      ["valid from", humanInstant(v.from)],
      ["valid to", v.to === null ? "open" : humanInstant(v.to)],
      ["this version recorded", humanInstant(v.rec)],
      ["fact", v.fact_id],
      ["confidence", String(v.confidence)],
    ]),
  );
  const ids = (v.sources.length ? v.sources : [v.source_episode_id]).filter(Boolean);
  if (!ids.length) body.append(h("p", { class: "hint" }, "No source episode."));
  const holder = h("div");
  body.append(holder);
  if (pin) $("details").scrollIntoView({ block: "nearest" }); // below the chart on narrow screens
  if (token === detailToken) await renderEpisodes(holder, ids);
}

async function showEpisodeOnly(id) {
  $("details").hidden = false;
  const body = $("details-body");
  body.replaceChildren();
  await renderEpisodes(body, [id]);
  $("details").scrollIntoView({ block: "nearest" });
}

async function loadIncoming() {
  const gen = generation;
  try {
    const ent = await ctx.api.entity(ctx.entity, times());
    if (gen !== generation) return;
    renderIncoming(ent);
  } catch (e) {
    fail(e);
  }
}

function renderIncoming(ent) {
  const list = $("incoming");
  list.replaceChildren();
  const incoming = ent.facts.filter((f) => f.object === ctx.entity && f.subject !== ctx.entity);
  if (!incoming.length) list.append(h("li", { class: "hint" }, "Nothing refers to this entity at this time."));
  for (const f of incoming) {
    list.append(h("li", {}, h("a", { href: linkTo(f.subject) }, f.subject), ` ${f.predicate} → ${ctx.entity}`));
  }
}

async function loadEntity() {
  const gen = ++generation;
  $("timelines").setAttribute("aria-busy", "true");
  try {
    const [ent, found, known] = await Promise.all([
      ctx.api.entity(ctx.entity, times()),
      ctx.memory.discover(),
      ctx.memory.timelines(state.knownAt),
    ]);
    if (gen !== generation) return;
    const all = [...found.versions, ...known.timelines.flatMap((t) => t.versions)];
    view = {
      entity: ent,
      timelines: known.timelines,
      moments: found.moments,
      baseDomain: baseDomain(all),
    };
    $("entity").hidden = false;
    $("entity-title").textContent = ent.name;
    $("entity-meta").textContent =
      `${ent.entity_type} · id ${ent.entity_id}` + (ent.aliases.length ? ` · also ${ent.aliases.join(", ")}` : "");
    document.title = `${ent.name} · sgam`;
    const notes = [];
    if (!known.complete) notes.push("Only the first 500 predicates are drawn.");
    if (!found.complete) notes.push("Older belief changes exist than the known-at control lists; type a known at to see them.");
    $("timeline-note").textContent = notes.join(" ");
    $("timeline-note").hidden = !notes.length;
    syncAsOfSlider();
    syncKnownAtSlider();
    renderTimelines();
    renderIncoming(ent);
    $("timelines").setAttribute("aria-busy", "false");
    await loadNeighbourhood();
  } catch (e) {
    if (gen === generation) fail(e);
  }
}

let cy = null;
async function loadNeighbourhood() {
  const gen = generation;
  const section = $("neighbourhood");
  try {
    const nb = await ctx.api.neighbors(ctx.entity, { depth: state.depth, ...times() });
    if (gen !== generation) return;
    section.hidden = false;
    const colours = typeColours(nb.entities.map((e) => e.entity_type));
    if (cy) cy.destroy();
    cy = drawNeighbourhood($("graph"), nb, {
      seed: ctx.entity,
      colours,
      onOpen: (id) => {
        location.href = linkTo(id);
      },
      onFocus: (text) => {
        $("graph-status").textContent = text;
      },
    });
    const legend = $("type-legend");
    legend.replaceChildren();
    const ul = h("ul");
    for (const [type, colour] of colours) {
      const swatch = h("span", { class: "swatch", "aria-hidden": "true" });
      swatch.style.backgroundColor = colour;
      ul.append(h("li", {}, swatch, ` ${type}`));
    }
    legend.append(ul);
    const list = $("nb-list");
    list.replaceChildren();
    for (const e of nb.entities) {
      const item = h("li", { "data-entity": e.entity_id, "data-type": e.entity_type });
      item.append(
        e.entity_id === ctx.entity ? h("strong", {}, e.name) : h("a", { href: linkTo(e.entity_id) }, e.name),
        ` (${e.entity_type})`,
      );
      list.append(item);
    }
  } catch (e) {
    fail(e);
  }
}

// -- search ------------------------------------------------------------------------------
async function runSearch(event) {
  event.preventDefault();
  const form = $("search-form");
  const query = $("search-input").value.trim();
  if (!query) return;
  const scopes = [...form.querySelectorAll("input[name=scope]:checked")].map((i) => i.value);
  const status = $("search-status");
  if (!scopes.length) {
    status.textContent = "Choose at least one of facts, entities, episodes.";
    return;
  }
  status.textContent = "Searching…";
  $("search-results").replaceChildren();
  try {
    const body = { query, scopes, limit: 20, as_of: state.asOf, known_at: state.knownAt };
    const r = await ctx.api.search(body);
    status.textContent = `${r.results.length} result${r.results.length === 1 ? "" : "s"} for “${query}”.`;
    renderResults($("search-results"), r.results, { link: linkTo, onSource: showEpisodeOnly });
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return fail(e);
    status.textContent = e instanceof ApiError ? `${e.status} ${e.problem.title}: ${e.problem.detail || ""}` : String(e);
  }
}

// -- wiring ------------------------------------------------------------------------------
function applyTypedTimes(event) {
  event?.preventDefault();
  const out = {};
  const problems = [];
  for (const [id, name, field] of [["as-of-text", "as of", "asOf"], ["known-at-text", "known at", "knownAt"]]) {
    const raw = $(id).value.trim();
    if (!raw || raw.toLowerCase() === "now") {
      out[field] = null;
      continue;
    }
    const us = parseInstant(raw);
    if (us === null) problems.push(`${name}: not an RFC 3339 timestamp with an offset: ${raw}`);
    else out[field] = formatInstant(us);
  }
  showTimeError(problems.join(" "));
  if (problems.length) return;
  const knownChanged = out.knownAt !== state.knownAt;
  const asOfChanged = out.asOf !== state.asOf;
  if (!ctx.entity) {
    state.asOf = out.asOf;
    state.knownAt = out.knownAt;
    writeTimesToUrl();
    summary();
    return;
  }
  if (knownChanged) {
    state.asOf = out.asOf;
    setKnownAt(out.knownAt);
  } else if (asOfChanged) {
    setAsOf(out.asOf);
  }
}

function wire() {
  $("time-form").addEventListener("submit", applyTypedTimes);
  $("as-of-text").addEventListener("change", applyTypedTimes);
  $("known-at-text").addEventListener("change", applyTypedTimes);
  $("as-of-range").addEventListener("input", () => {
    if (!view) return;
    const [d0, d1] = domain();
    const ms = d0 + (Number($("as-of-range").value) / SLIDER_MAX) * (d1 - d0);
    const minute = Math.round(ms / 60000) * 60000;
    setAsOf(formatInstant(fromMs(minute)));
  });
  $("as-of-now").addEventListener("click", () => setAsOf(null));
  $("known-at-range").addEventListener("input", () => {
    const moments = view?.moments ?? [];
    const i = Number($("known-at-range").value);
    $("known-at-range").setAttribute("aria-valuetext", knownAtText(i, moments));
    setKnownAt(i >= moments.length ? null : formatInstant(moments[i].us));
  });
  $("known-at-now").addEventListener("click", () => setKnownAt(null));
  document.querySelectorAll("#nb-form input[name=depth]").forEach((input) => {
    input.addEventListener("change", () => {
      state.depth = Number(input.value);
      loadNeighbourhood();
    });
  });
  $("search-form").addEventListener("submit", runSearch);
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key-input").value.trim();
    if (!key) return;
    storeKey(key);
    $("key-input").value = "";
    $("key-prompt").hidden = true;
    updateKeyStatus();
    rerun();
  });
  $("forget-key").addEventListener("click", () => {
    forgetKey();
    location.reload();
  });
  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const tenant = $("open-tenant").value.trim();
    const entity = $("open-entity").value.trim();
    if (tenant) location.href = pageUrl(tenant, entity || null);
  });
  // Redraw when the chart's box no longer matches what was drawn (window, scrollbar).
  new ResizeObserver(() => {
    const box = $("timelines");
    const drawn = box.querySelector("svg.chart");
    if (view && drawn && box.clientWidth && Number(drawn.dataset.width) !== box.clientWidth) {
      renderTimelines();
    }
  }).observe($("timelines"));
}

async function start() {
  const { tenant, entity } = route();
  ctx.tenant = tenant;
  ctx.entity = entity;
  updateKeyStatus();
  readTimesFromUrl();
  crumbs();
  if (!tenant) {
    $("home").hidden = false;
    return;
  }
  ctx.api = new Api(root, tenant);
  $("open-tenant").value = tenant;
  summary();
  if (!entity) {
    rerun = start;
    try {
      await ctx.api.schema(); // 401 / 404 exactly as the API answers them
    } catch (e) {
      return fail(e);
    }
    $("home").hidden = false;
    $("home-title").textContent = `Tenant ${tenant}`;
    $("workspace").hidden = false;
    $("as-of-range").hidden = true;
    $("known-at-range").hidden = true;
    return;
  }
  ctx.memory = new EntityMemory(ctx.api, entity);
  rerun = () => {
    ctx.memory = new EntityMemory(ctx.api, entity);
    episodes.clear();
    $("workspace").hidden = false;
    loadEntity();
  };
  $("details").hidden = false;
  patternDefs($("timelines").parentElement);
  drawLegend($("legend"));
  $("workspace").hidden = false;
  await loadEntity();
}

wire();
start();
