// The REST API as the page uses it: one tenant, the user's key, problem+json errors.
//
// The key lives in sessionStorage (this tab only) and travels as a bearer header; it is
// never put into an address, so it cannot leak through history, logs or referrers.

const KEY_ITEM = "sgam.apiKey";

export class ApiError extends Error {
  /** status: HTTP status; problem: the RFC 9457 body (or a stand-in for a network error). */
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export function storedKey() {
  try {
    return sessionStorage.getItem(KEY_ITEM);
  } catch {
    return null; // storage disabled: ask again
  }
}

export function storeKey(key) {
  sessionStorage.setItem(KEY_ITEM, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_ITEM);
}

export class Api {
  constructor(root, tenant) {
    this.base = `${root}/v1/tenants/${encodeURIComponent(tenant)}`;
  }

  async request(path, { params = {}, body } = {}) {
    const url = new URL(this.base + path, window.location.origin);
    for (const [name, value] of Object.entries(params)) {
      if (value === null || value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, v);
    }
    const headers = { Accept: "application/json" };
    const key = storedKey();
    if (key) headers.Authorization = `Bearer ${key}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(url, {
        method: body === undefined ? "GET" : "POST",
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: "omit",
        cache: "no-store",
      });
    } catch (e) {
      throw new ApiError(0, { title: "The server did not answer", detail: String(e.message || e) });
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      const problem =
        data && typeof data === "object" && data.title
          ? data
          : { title: response.statusText || "Error", status: response.status, detail: text.slice(0, 500) };
      throw new ApiError(response.status, problem);
    }
    return data;
  }

  schema() {
    return this.request("/schema");
  }

  entity(id, { asOf, knownAt }) {
    return this.request(`/entities/${encodeURIComponent(id)}`, {
      params: { as_of: asOf, known_at: knownAt },
    });
  }

  /** Every predicate the entity has had (all pages, at most `cap`); {predicates, complete}. */
  async predicates(id, { knownAt, cap = 500 }) {
    const out = [];
    let cursor = null;
    do {
      const page = await this.request(`/entities/${encodeURIComponent(id)}/predicates`, {
        params: { known_at: knownAt, limit: 100, cursor },
      });
      out.push(...page.predicates);
      cursor = page.next_cursor;
    } while (cursor && out.length < cap);
    return { predicates: out, complete: !cursor };
  }

  history(subject, predicate, knownAt) {
    return this.request("/facts/history", { params: { subject, predicate, known_at: knownAt } });
  }

  neighbors(id, { depth, asOf, knownAt }) {
    return this.request(`/entities/${encodeURIComponent(id)}/neighbors`, {
      params: { depth, as_of: asOf, known_at: knownAt },
    });
  }

  episode(id) {
    return this.request(`/episodes/${encodeURIComponent(id)}`);
  }

  search(body) {
    return this.request("/search", { body });
  }
}
