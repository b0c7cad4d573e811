// What the entity view draws, read through the public API only.
//
// - Timelines: GET /entities/{id}/predicates lists every predicate the entity has had
//   (valid now or not); GET /facts/history gives each one's versions as known at known_at.
// - Belief changes: history at known_at = (a version's recorded_at - 1 µs) shows what was
//   believed just before that version arrived; walking back from "now" this way finds
//   every version ever believed, hence every moment belief changed (the known-at stops).
// - Retracted or just bounded? A version that ends with nothing after it was retracted
//   when the belief just before it had the same fact open or longer; otherwise it was
//   written with that end.

import { formatInstant, parseInstant, ONE_US } from "./time.js";

const MAX_PROBES = 200; // history reads spent on belief changes per page load
const PARALLEL = 4;

export const STATUSES = ["current", "superseded", "retracted", "ended", "upcoming"];
export const STATUS_WORDS = {
  current: "current",
  superseded: "superseded",
  retracted: "retracted",
  ended: "ended",
  upcoming: "not yet valid",
};

function parsed(f) {
  return {
    ...f,
    from: parseInstant(f.valid_from),
    to: f.valid_to ? parseInstant(f.valid_to) : null,
    rec: parseInstant(f.recorded_at),
  };
}

export function describeValue(f) {
  if (f.object !== null && f.object !== undefined) return f.object;
  return typeof f.value === "string" ? f.value : JSON.stringify(f.value);
}

/** Run `jobs` (functions returning promises) with at most `n` at a time. */
async function pool(jobs, n) {
  const results = new Array(jobs.length);
  let next = 0;
  async function worker() {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
  return results;
}

export class EntityMemory {
  constructor(api, entityId) {
    this.api = api;
    this.id = entityId;
    this.reads = new Map(); // "predicate@known_at" -> Promise<parsed facts>
    this.discovery = null; // Promise of the walk back from now (done once)
  }

  history(predicate, knownAt) {
    const key = `${predicate}@${knownAt ?? "now"}`;
    if (!this.reads.has(key)) {
      const p = this.api.history(this.id, predicate, knownAt).then((r) => r.facts.map(parsed));
      p.catch(() => this.reads.delete(key)); // a failed read is tried again next time
      this.reads.set(key, p);
    }
    return this.reads.get(key);
  }

  /** What was believed about `predicate` just before `version` was recorded. */
  before(predicate, version) {
    return this.history(predicate, formatInstant(version.rec - ONE_US));
  }

  /** Every version ever believed (from "now" backwards) and the moments belief changed. */
  discover() {
    if (!this.discovery) this.discovery = this._discover();
    return this.discovery;
  }

  async _discover() {
    const { predicates, complete } = await this.api.predicates(this.id, {});
    const versions = new Map(); // version_id -> parsed fact
    const probed = new Set(); // "predicate@µs"
    let frontier = [];
    const see = (predicate, facts) => {
      for (const f of facts) {
        if (versions.has(f.version_id)) continue;
        versions.set(f.version_id, f);
        frontier.push([predicate, f]);
      }
    };
    const now = await pool(predicates.map((p) => () => this.history(p, null)), PARALLEL);
    predicates.forEach((p, i) => see(p, now[i]));
    let probes = 0;
    let capped = false;
    while (frontier.length) {
      const batch = [];
      for (const [predicate, f] of frontier) {
        const key = `${predicate}@${f.rec}`;
        if (probed.has(key)) continue;
        probed.add(key);
        if (probes >= MAX_PROBES) {
          capped = true;
          continue;
        }
        probes += 1;
        batch.push([predicate, f]);
      }
      frontier = [];
      const seen = await pool(batch.map(([p, f]) => () => this.before(p, f)), PARALLEL);
      batch.forEach(([p], i) => see(p, seen[i]));
    }
    const moments = new Map(); // µs -> descriptions of what was recorded then
    for (const f of versions.values()) {
      const what = `${f.predicate} = ${describeValue(f)}${f.source_episode_id ? ` (${f.source_episode_id})` : ""}`;
      const list = moments.get(f.rec) ?? [];
      if (!list.includes(what)) list.push(what);
      moments.set(f.rec, list);
    }
    const ordered = [...moments.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([us, what]) => ({ us, what }));
    return {
      versions: [...versions.values()],
      moments: ordered,
      complete: complete && !capped,
    };
  }

  /** The timelines as known at `knownAt` (RFC 3339 or null = now), unclassified. */
  async timelines(knownAt) {
    const { predicates, complete } = await this.api.predicates(this.id, { knownAt });
    const all = await pool(predicates.map((p) => () => this.history(p, knownAt)), PARALLEL);
    const rows = new Map();
    predicates.forEach((predicate, i) => {
      for (const f of all[i]) {
        // Many-valued predicates keep one timeline per object (or value).
        const many = f.cardinality === "many";
        const key = many ? `${predicate}\u0000${describeValue(f)}` : predicate;
        if (!rows.has(key)) {
          rows.set(key, {
            key,
            predicate,
            label: many ? `${predicate} → ${describeValue(f)}` : predicate,
            versions: [],
          });
        }
        rows.get(key).versions.push(f);
      }
    });
    const timelines = [...rows.values()].sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    // A version that ends with no successor: retracted, or written with that end?
    const checks = [];
    for (const t of timelines) {
      for (const v of t.versions) {
        v.replacedBy = t.versions.find((o) => o !== v && v.to !== null && o.from === v.to) ?? null;
        v.cutBy = t.versions.find((o) => o.supersedes?.includes(v.fact_id)) ?? null;
        v.retracted = false;
        if (v.to !== null && !v.replacedBy && !v.cutBy) {
          checks.push(async () => {
            const prior = await this.before(t.predicate, v);
            v.retracted = prior.some(
              (p) => p.fact_id === v.fact_id && (p.to === null || p.to > v.to),
            );
          });
        }
      }
    }
    await pool(checks, PARALLEL);
    return { timelines, complete };
  }
}

/**
 * The status of a version at valid time `asOf` (µs), as seen from that instant: valid
 * then (current), not begun yet, or over by then and how it ended.
 */
export function statusAt(v, asOf) {
  if (v.from > asOf) return "upcoming";
  if (v.to === null || asOf < v.to) return "current";
  if (v.replacedBy || v.cutBy) return "superseded";
  if (v.retracted) return "retracted";
  return "ended";
}

/** How a version ends, whatever the as-of: for the details panel. */
export function fateOf(v) {
  if (v.to === null) return "open: no end recorded";
  const next = v.replacedBy ?? v.cutBy;
  if (next) return `superseded by ${describeValue(next)}${next.source_episode_id ? ` (${next.source_episode_id})` : ""}`;
  if (v.retracted) return `retracted (recorded ${formatInstant(v.rec)})`;
  return "ended as written (a bounded fact)";
}
