// Instants as BigInt microseconds since the epoch (UTC).
//
// The API answers with microsecond resolution and system time moves in steps of one
// microsecond, so a JavaScript Date (milliseconds) cannot name "just before this version
// was recorded". Text is RFC 3339 as the API writes it: UTC, "Z", fraction only if any.

const US_PER_MS = 1000n;
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/** Parse RFC 3339 (or a bare date = its midnight UTC); null when it is not one. */
export function parseInstant(text) {
  const m = RFC3339.exec(String(text).trim());
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00", s = "00", frac = "", zone] = m;
  if (m[4] !== undefined && zone === undefined) return null; // a time needs an offset
  const check = new Date(Date.UTC(2000, +mo - 1, +d, +h, +mi, +s));
  check.setUTCFullYear(+y); // Date.UTC maps years 0-99 to 1900-1999
  const ms = check.getTime();
  if (
    Number.isNaN(ms) ||
    check.getUTCFullYear() !== +y ||
    check.getUTCMonth() !== +mo - 1 ||
    check.getUTCDate() !== +d ||
    +h > 23 || +mi > 59 || +s > 59
  ) {
    return null;
  }
  let us = BigInt(ms) * US_PER_MS + BigInt((frac + "000000").slice(0, 6));
  if (zone && zone !== "Z" && zone !== "z") {
    const sign = zone[0] === "-" ? -1n : 1n;
    const offsetMin = BigInt(+zone.slice(1, 3) * 60 + +zone.slice(4, 6));
    us -= sign * offsetMin * 60n * 1_000_000n;
  }
  return us;
}

/** RFC 3339 in UTC as the API writes it: microseconds only when present. */
export function formatInstant(us) {
  let secs = us / 1_000_000n;
  if (us % 1_000_000n < 0n) secs -= 1n; // floor, also before 1970
  const micro = Number(us - secs * 1_000_000n);
  const base = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  const frac = micro ? "." + String(micro).padStart(6, "0") : "";
  return `${base}${frac}Z`;
}

/** Short human form: "2026-06-01 09:00 UTC", seconds and fraction only when present. */
export function humanInstant(us) {
  const full = formatInstant(us);
  const date = full.slice(0, 10);
  const hm = full.slice(11, 16);
  const rest = full.slice(16, -1); // ":SS" and fraction
  const secs = rest === ":00" ? "" : rest;
  return `${date} ${hm}${secs} UTC`;
}

export function nowUs() {
  return BigInt(Date.now()) * US_PER_MS;
}

export const toMs = (us) => Number(us / US_PER_MS);
export const fromMs = (ms) => BigInt(Math.round(ms)) * US_PER_MS;
export const minUs = (a, b) => (a < b ? a : b);
export const maxUs = (a, b) => (a > b ? a : b);
export const ONE_US = 1n;
