// Timelines as horizontal bars on one valid-time axis (SVG).
//
// Status is carried three ways so colour is never needed: a fill pattern per status
// (solid, hatched, cross-hatched, dotted, outline), a border style, and the status
// word written beside the value.

import { humanInstant, toMs } from "./time.js";
import { STATUSES, STATUS_WORDS, describeValue, statusAt } from "./memory.js";

const SVG = "http://www.w3.org/2000/svg";
const ROW = 60; // label line + bar + gap
const BAR_Y = 20;
const BAR_H = 28;
const AXIS_H = 42;
const LINE = 16; // one line of labels below a row's bars
const PAD_X = 12;

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

/** Pattern definitions shared by the legend and every chart (ids are page-wide). */
export function patternDefs(parent) {
  const svg = el("svg", { width: 0, height: 0, class: "defs", "aria-hidden": "true", focusable: "false" }, parent);
  const defs = el("defs", {}, svg);
  const hatch = el("pattern", { id: "pat-superseded", width: 8, height: 8, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" }, defs);
  el("rect", { width: 8, height: 8, class: "pat-bg-superseded" }, hatch);
  el("line", { x1: 0, y1: 0, x2: 0, y2: 8, class: "pat-line-superseded" }, hatch);
  const cross = el("pattern", { id: "pat-retracted", width: 8, height: 8, patternUnits: "userSpaceOnUse" }, defs);
  el("rect", { width: 8, height: 8, class: "pat-bg-retracted" }, cross);
  el("path", { d: "M0,0 L8,8 M8,0 L0,8", class: "pat-line-retracted" }, cross);
  const dots = el("pattern", { id: "pat-ended", width: 6, height: 6, patternUnits: "userSpaceOnUse" }, defs);
  el("rect", { width: 6, height: 6, class: "pat-bg-ended" }, dots);
  el("circle", { cx: 3, cy: 3, r: 1.2, class: "pat-dot-ended" }, dots);
  return svg;
}

/** The legend: one swatch per status, drawn with the same patterns, and its word. */
export function drawLegend(container) {
  container.replaceChildren();
  const list = document.createElement("ul");
  for (const status of STATUSES) {
    const item = document.createElement("li");
    const svg = el("svg", { width: 36, height: 16, "aria-hidden": "true", focusable: "false" }, item);
    el("rect", { x: 1, y: 1, width: 34, height: 14, class: `bar-rect s-${status}` }, svg);
    item.append(` ${STATUS_WORDS[status]}`);
    list.appendChild(item);
  }
  container.appendChild(list);
}

/** Ticks for [d0, d1] ms on `width` pixels: calendar-aligned, about one per 110 px. */
function ticks(d0, d1, width) {
  const HOUR = 3600e3;
  const DAY = 24 * HOUR;
  const steps = [
    [HOUR, "h"], [3 * HOUR, "h"], [6 * HOUR, "h"], [12 * HOUR, "h"],
    [DAY, "d"], [2 * DAY, "d"], [7 * DAY, "d"],
    [1, "M"], [3, "M"], [6, "M"], [1, "Y"], [2, "Y"], [5, "Y"], [10, "Y"], [50, "Y"], [100, "Y"],
  ];
  const want = Math.max(2, Math.floor(width / 110));
  const approx = { h: 1, d: 1, M: 30 * DAY, Y: 365 * DAY };
  const [size, unit] =
    steps.find(([s, u]) => (d1 - d0) / (u === "M" || u === "Y" ? s * approx[u] : s) <= want) ??
    steps[steps.length - 1];
  const out = [];
  if (unit === "h" || unit === "d") {
    let t = Math.ceil(d0 / size) * size;
    for (; t <= d1; t += size) out.push(t);
  } else {
    // Calendar months as one index (year * 12 + month), aligned to the step.
    const start = new Date(d0);
    const every = unit === "M" ? size : size * 12;
    let k = Math.ceil((start.getUTCFullYear() * 12 + start.getUTCMonth()) / every) * every;
    for (;;) {
      const d = new Date(0);
      d.setUTCFullYear(Math.floor(k / 12), k % 12, 1);
      d.setUTCHours(0, 0, 0, 0);
      const ms = d.getTime();
      if (ms > d1) break;
      if (ms >= d0) out.push(ms);
      k += every;
    }
  }
  const label = (ms) => {
    const iso = new Date(ms).toISOString();
    if (unit === "h") return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    if (unit === "d") return iso.slice(0, 10);
    if (unit === "M") return iso.slice(0, 7);
    return iso.slice(0, 4);
  };
  return out.map((ms) => ({ ms, text: label(ms) }));
}

function versionLabel(v, status) {
  const to = v.to === null ? "open" : humanInstant(v.to);
  return (
    `${v.predicate} = ${describeValue(v)}, ${STATUS_WORDS[status]}; ` +
    `valid from ${humanInstant(v.from)} to ${to}; source ${v.source_episode_id ?? "none"}`
  );
}

/**
 * Where each version's words (value and status) go: inside its bar, beside it (right of
 * its end, before the next bar), or on a line below the bar; lines below are shared by
 * labels that do not overlap.
 */
function layoutRow(versions, geometry, measure, width) {
  const lanes = []; // right end of the last label on each line below
  return versions.map((v, i) => {
    const { left, right, status } = geometry[i];
    const value = describeValue(v);
    const full = `${value} · ${STATUS_WORDS[status]}`;
    const room = right - left - 16;
    const w = measure(full);
    if (w <= room) return { text: full, x: left + 6, where: "inside" };
    const next = geometry[i + 1];
    const besideRoom = (next ? next.left : width - PAD_X) - right - 8;
    if (w <= besideRoom) return { text: full, x: right + 4, where: "beside" };
    const x = Math.max(PAD_X, Math.min(left, width - PAD_X - w));
    let lane = lanes.findIndex((end) => end + 10 <= x);
    if (lane < 0) {
      lane = lanes.length;
      lanes.push(0);
    }
    lanes[lane] = x + w;
    return { text: full, x, where: "below", lane };
  });
}

/**
 * Draw `timelines` into `container`.
 * opts: domain [d0, d1] in ms; asOf (µs); asOfText (marker caption); onSelect(version, status, pin).
 */
export function drawTimelines(container, timelines, opts) {
  const { domain, asOf, asOfText, onSelect } = opts;
  container.replaceChildren();
  const width = container.clientWidth || 600;
  const [d0, d1] = domain;
  const span = Math.max(1, d1 - d0);
  const inner = width - 2 * PAD_X;
  const x = (ms) => PAD_X + ((ms - d0) / span) * inner;
  const clampX = (px) => Math.min(width - PAD_X, Math.max(PAD_X, px));

  // Drawn for `width` pixels but scaled to the box, so a late scrollbar never clips it.
  const svg = el("svg", { width: "100%", "data-width": width, class: "chart", role: "group", "aria-label": "Timelines on one valid-time axis" });
  container.appendChild(svg);
  const probe = el("text", { class: "bar-text", visibility: "hidden" }, svg);
  const measure = (text) => {
    probe.textContent = text;
    return probe.getComputedTextLength();
  };

  // Layout pass: geometry and label places per row, then each row's height.
  const rows = timelines.map((t) => {
    const versions = [...t.versions].sort((a, b) => (a.from < b.from ? -1 : a.from > b.from ? 1 : 0));
    const geometry = versions.map((v) => {
      const left = clampX(x(toMs(v.from)));
      const right = v.to === null ? width - PAD_X : clampX(x(toMs(v.to)));
      return { left, right: Math.max(right, left + 3), status: statusAt(v, asOf) };
    });
    const labels = layoutRow(versions, geometry, measure, width);
    const below = labels.reduce((n, l) => (l.where === "below" ? Math.max(n, l.lane + 1) : n), 0);
    return { t, versions, geometry, labels, height: ROW + below * LINE };
  });
  probe.remove();
  let height = AXIS_H + 8;
  for (const r of rows) {
    r.y0 = height;
    height += r.height;
  }
  if (!rows.length) height += ROW;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);

  // Axis and grid.
  const axis = el("g", { class: "axis", "aria-hidden": "true" }, svg);
  el("line", { x1: PAD_X, x2: width - PAD_X, y1: AXIS_H - 8, y2: AXIS_H - 8, class: "axis-line" }, axis);
  for (const t of ticks(d0, d1, inner)) {
    const px = x(t.ms);
    el("line", { x1: px, x2: px, y1: AXIS_H - 12, y2: height, class: "grid" }, axis);
    const label = el("text", { x: px, y: AXIS_H - 16, class: "tick", "text-anchor": "middle" }, axis);
    label.textContent = t.text;
    const half = label.getComputedTextLength() / 2;
    if (px - half < 0 || px + half > width) label.remove(); // no clipped labels at the edges
  }

  if (!rows.length) {
    const empty = el("text", { x: PAD_X, y: AXIS_H + 30, class: "empty" }, svg);
    empty.textContent = "No facts about this entity as known at this time.";
  }

  for (const { t, versions, geometry, labels, y0 } of rows) {
    const g = el("g", { class: "row", "data-key": t.key }, svg);
    const name = el("text", { x: PAD_X, y: y0 + 13, class: "row-label" }, g);
    name.textContent = t.label;
    const leaders = el("g", { class: "leaders", "aria-hidden": "true" }, g); // under all text
    versions.forEach((v, i) => {
      const { left, right, status } = geometry[i];
      const bar = el(
        "g",
        {
          class: `bar status-${status}`,
          tabindex: 0,
          role: "button",
          "aria-label": versionLabel(v, status),
          "data-version": v.version_id,
          "data-timeline": t.label,
          "data-status": status,
          "data-value": describeValue(v),
          "data-valid-from": v.valid_from,
          "data-valid-to": v.valid_to ?? "",
        },
        g,
      );
      el("title", {}, bar).textContent = versionLabel(v, status);
      el("rect", { x: left, y: y0 + BAR_Y, width: right - left, height: BAR_H, rx: 3, class: `bar-rect s-${status}` }, bar);
      if (v.to === null) {
        // Open-ended: an arrow at the right edge says "and on".
        const ax = width - PAD_X;
        el("path", { d: `M${ax - 7},${y0 + BAR_Y + 6} L${ax - 1},${y0 + BAR_Y + BAR_H / 2} L${ax - 7},${y0 + BAR_Y + BAR_H - 6}`, class: `open-arrow s-${status}` }, bar);
      }
      const label = labels[i];
      const ty = label.where === "below" ? y0 + BAR_Y + BAR_H + 13 + label.lane * LINE : y0 + BAR_Y + BAR_H / 2 + 5;
      const cls = label.where === "inside" ? `bar-text s-${status}` : "bar-text outside";
      if (label.where === "below") {
        const lx = Math.min(Math.max(label.x + 1, left + 1), right - 1);
        el("line", { x1: lx, x2: lx, y1: y0 + BAR_Y + BAR_H, y2: ty - 10, class: "leader" }, leaders);
      }
      el("text", { x: label.x, y: ty, class: cls, "data-label": label.where }, bar).textContent = label.text;
      const select = (pin) => onSelect(v, status, pin);
      bar.addEventListener("mouseenter", () => select(false));
      bar.addEventListener("focus", () => select(false));
      bar.addEventListener("click", () => select(true));
      bar.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          select(true);
        }
      });
    });
  }

  // The as-of marker, over everything; pinned to an edge (with an arrow) when outside.
  const raw = x(toMs(asOf));
  const mx = clampX(raw);
  const marker = el("g", { class: "marker", "aria-hidden": "true" }, svg);
  el("line", { x1: mx, x2: mx, y1: AXIS_H - 8, y2: height, class: "marker-line" }, marker);
  const caption = el("text", { x: mx, y: 12, class: "marker-text" }, marker);
  caption.textContent = raw < PAD_X ? `◂ ${asOfText}` : raw > width - PAD_X ? `${asOfText} ▸` : asOfText;
  const anchor = mx > width * 0.66 ? "end" : mx < width * 0.33 ? "start" : "middle";
  caption.setAttribute("text-anchor", anchor);
  return svg;
}
