// Search results (POST /search): facts, entities and episodes, each with its validity or
// times and its sources. Everything is written as text nodes, never parsed as HTML.

import { describeValue } from "./memory.js";
import { humanInstant, parseInstant } from "./time.js";

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

const when = (text) => (text ? humanInstant(parseInstant(text)) : "open");

export function contentText(content) {
  return typeof content === "string" ? content : JSON.stringify(content, null, 2);
}

/** Render `results` into the list `ol`; link(entityId) gives an href; onSource(episodeId). */
export function renderResults(ol, results, { link, onSource }) {
  ol.replaceChildren();
  for (const r of results) {
    const li = h("li", { class: `result kind-${r.kind}`, "data-kind": r.kind });
    const head = h("p", { class: "result-head" }, h("span", { class: "badge" }, r.kind), ` score ${r.score.toFixed(2)}`);
    li.append(head);
    const it = r.item;
    if (r.kind === "fact") {
      const line = h("p", { class: "result-main" });
      line.append(h("a", { href: link(it.subject) }, it.subject), ` ${it.predicate} `);
      line.append(it.object ? h("a", { href: link(it.object) }, it.object) : h("strong", {}, describeValue(it)));
      li.append(line);
      li.append(h("p", { class: "meta" }, `valid ${when(it.valid_from)} → ${when(it.valid_to)} · recorded ${when(it.recorded_at)}`));
    } else if (r.kind === "entity") {
      li.append(h("p", { class: "result-main" }, h("a", { href: link(it.entity_id) }, it.name), ` (${it.entity_type}) `, h("code", {}, it.entity_id)));
    } else {
      li.append(h("p", { class: "result-main" }, h("code", {}, it.episode_id), ` ${it.kind}`));
      const text = contentText(it.content);
      li.append(h("blockquote", {}, text.length > 300 ? `${text.slice(0, 300)}…` : text));
      li.append(h("p", { class: "meta" }, `occurred ${when(it.occurred_at)} · recorded ${when(it.recorded_at)}`));
    }
    if (r.source_episode_ids.length) {
      const src = h("p", { class: "sources" }, "sources: ");
      r.source_episode_ids.forEach((id, i) => {
        if (i) src.append(", ");
        const b = h("button", { type: "button", class: "link" }, id);
        b.addEventListener("click", () => onSource(id));
        src.append(b);
      });
      li.append(src);
    }
    ol.append(li);
  }
}
