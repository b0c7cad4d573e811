"""Replay a scenario file against any :class:`~api.client.SyncClient`: in-process
(:class:`~api.local.LocalClient`, ``--store URL``) or over HTTP (:class:`~api.client.SgamClient`,
``--api URL``). The format is described in examples/scenarios/README.md.

A scenario is a JSON object: a ``tenant`` and a list of ``steps``, each one of ``episode``,
``facts``, ``retract``, ``delete_episode`` (writes) or ``expect``, ``expect_history``,
``expect_neighbors`` (reads checked against what the step expects). The runner speaks the
REST shapes (JSON in, status + JSON out) through one client interface, so an in-process
replay means exactly what the same replay over HTTP means, and a step may post an invalid
write on purpose to check the 422.
Exit codes: 0 every expectation held, 1 one failed, 2 the file is malformed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TextIO

from pydantic import BaseModel

from api.client import SgamAPIError, SyncClient
from api.problems import problem_for
from graph.errors import SgamError
from graph.model import ConflictPolicy, valid_tenant
from graph.service import MAX_LIMIT
from graph.timeutil import EPSILON, format_instant, parse_instant, utcnow

Response = tuple[int, Any]


class Backend(Protocol):
    def post_episode(self, tenant: str, body: dict[str, Any]) -> Response: ...
    def post_facts(self, tenant: str, body: dict[str, Any]) -> Response: ...
    def retract(self, tenant: str, fact_id: str, body: dict[str, Any]) -> Response: ...
    def delete_episode(self, tenant: str, episode_id: str) -> Response: ...
    def get(self, tenant: str, path: str, params: dict[str, str]) -> Response:
        """GET ``/v1/tenants/{tenant}{path}``."""


class MalformedScenario(Exception):
    pass


# -- the runner's calls, through a client --------------------------------------------------


class ClientBackend:
    """The runner's calls through a client, answered as status and JSON body. Bodies go as
    the scenario has them: the client sends mappings unchecked, the service validates."""

    def __init__(self, client: SyncClient) -> None:
        self.client = client

    def _call(self, ok: int, fn: Callable[[], BaseModel]) -> Response:
        try:
            answer = fn()
        except SgamAPIError as e:
            return e.status, e.problem.model_dump(mode="json", exclude_none=True)
        except SgamError as e:  # a timestamp in the scenario that is not one
            status, _, title = problem_for(e)
            return status, {"title": title, "detail": str(e)}
        return ok, answer.model_dump(mode="json")

    def post_episode(self, tenant: str, body: dict[str, Any]) -> Response:
        status, answer = self._call(201, lambda: self.client.create_episode(tenant, body))
        if status == 201 and answer.get("created") is False:
            status = 200  # the same episode again: the API answers 200
        return status, answer

    def post_facts(self, tenant: str, body: dict[str, Any]) -> Response:
        policy = ConflictPolicy(body.get("conflict_policy", "reject"))
        return self._call(
            201, lambda: self.client.write_facts(tenant, body["facts"], conflict_policy=policy)
        )

    def retract(self, tenant: str, fact_id: str, body: dict[str, Any]) -> Response:
        def run() -> BaseModel:
            end = body.get("valid_to")
            at = parse_instant(end, field="valid_to") if end else None
            return self.client.retract_fact(tenant, fact_id, valid_to=at)

        return self._call(200, run)

    def delete_episode(self, tenant: str, episode_id: str) -> Response:
        return self._call(200, lambda: self.client.delete_episode(tenant, episode_id))

    def get(self, tenant: str, path: str, params: dict[str, str]) -> Response:
        def t(name: str) -> datetime | None:
            v = params.get(name)
            return parse_instant(v, field=name) if v else None

        def run() -> BaseModel:
            if path == "/facts":
                return self.client.facts(
                    tenant,
                    subject=params.get("subject"),
                    predicate=params.get("predicate"),
                    object=params.get("object"),
                    as_of=t("as_of"),
                    known_at=t("known_at"),
                    limit=MAX_LIMIT,
                )
            if path == "/facts/history":
                return self.client.history(
                    tenant,
                    subject=params["subject"],
                    predicate=params["predicate"],
                    object=params.get("object"),
                    known_at=t("known_at"),
                )
            if path.startswith("/entities/") and path.endswith("/neighbors"):
                return self.client.neighbors(
                    tenant,
                    path[len("/entities/") : -len("/neighbors")],
                    depth=int(params.get("depth", "1")),
                    as_of=t("as_of"),
                    known_at=t("known_at"),
                )
            raise MalformedScenario(f"no such read: {path}")

        return self._call(200, run)


# -- the runner --------------------------------------------------------------------------


def _same_instant(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is b
    return parse_instant(a, field="t") == parse_instant(b, field="t")


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _describe(facts: list[dict[str, Any]]) -> str:
    """``value (source episode)`` for each fact, or "nothing"."""
    parts = []
    for f in facts:
        what = f["object"] if f.get("object") is not None else f["value"]
        parts.append(f"{_label(what)} ({f['source_episode_id']})")
    return ", ".join(parts) or "nothing"


@dataclass
class Runner:
    backend: Backend
    out: TextIO
    tenant: str = ""
    after_step: dict[int, str] = field(default_factory=dict)
    failures: int = 0
    touched: dict[tuple[str, str], None] = field(default_factory=dict)

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def run(self, scenario: dict[str, Any]) -> int:
        steps = scenario.get("steps")
        tenant = scenario.get("tenant")
        if not isinstance(steps, list) or not isinstance(tenant, str) or not valid_tenant(tenant):
            raise MalformedScenario("a scenario needs a valid 'tenant' and a list of 'steps'")
        self.tenant = tenant
        self.say(f"scenario {scenario.get('name', '?')} (tenant {tenant}, {len(steps)} steps)")
        for n, step in enumerate(steps):
            if not isinstance(step, dict) or len(set(step) & STEP_KINDS) != 1:
                raise MalformedScenario(f"step {n}: expected exactly one of {sorted(STEP_KINDS)}")
            kind = next(iter(set(step) & STEP_KINDS))
            getattr(self, f"_{kind}")(n, step)
            self.after_step[n] = format_instant(utcnow() + EPSILON)
        self._summary()
        verdict = "FAIL" if self.failures else "PASS"
        self.say(f"{verdict}: {self.failures} failed expectation(s)")
        return 1 if self.failures else 0

    def _fail(self, n: int, text: str) -> None:
        self.failures += 1
        self.say(f"[{n}] FAIL {text}")

    def _known_at(self, n: int, spec: Any) -> str | None:
        if spec is None:
            return None
        if isinstance(spec, dict) and isinstance(spec.get("after_step"), int):
            k = spec["after_step"]
            if k not in self.after_step:
                raise MalformedScenario(f"step {n}: after_step {k} has not run yet")
            return self.after_step[k]
        if isinstance(spec, str):
            parse_instant(spec, field="known_at")
            return spec
        raise MalformedScenario(f"step {n}: known_at must be a timestamp or {{'after_step': N}}")

    # steps that write ------------------------------------------------------------------
    def _episode(self, n: int, step: dict[str, Any]) -> None:
        status, body = self.backend.post_episode(self.tenant, step["episode"])
        ok = status in (200, 201)
        self.say(f"[{n}] episode {step['episode'].get('episode_id', '?')}: {status}")
        if not ok:
            self._fail(n, f"episode was refused: {body}")

    def _facts(self, n: int, step: dict[str, Any]) -> None:
        expected = step.get("expect_status", 201)
        before = self._snapshot(step["facts"]) if expected >= 400 else None
        body = {"facts": step["facts"], "conflict_policy": step.get("conflict_policy", "reject")}
        status, answer = self.backend.post_facts(self.tenant, body)
        for f in step["facts"]:
            if status < 400 and isinstance(f, dict) and "subject" in f and "predicate" in f:
                self.touched[(f["subject"], f["predicate"])] = None
        what = ", ".join(
            f"{f.get('subject')}.{f.get('predicate')}={_label(f.get('object', f.get('value')))}"
            for f in step["facts"]
            if isinstance(f, dict)
        )
        if status != expected:
            self._fail(n, f"facts {what}: got {status}, expected {expected}: {answer}")
            return
        if before is not None and self._snapshot(step["facts"]) != before:
            self._fail(n, f"facts {what}: the refused write changed the ledger")
            return
        self.say(f"[{n}] facts {what}: {status} ok")

    def _snapshot(self, facts: list[Any]) -> list[Any]:
        out = []
        for f in facts:
            if isinstance(f, dict) and "subject" in f and "predicate" in f:
                params = {"subject": f["subject"], "predicate": f["predicate"]}
                out.append(self.backend.get(self.tenant, "/facts/history", params))
        return out

    def _retract(self, n: int, step: dict[str, Any]) -> None:
        spec = step["retract"]
        end = spec["valid_to"]
        before = format_instant(parse_instant(end, field="valid_to") - EPSILON)
        params = {"subject": spec["subject"], "predicate": spec["predicate"], "as_of": before}
        if spec.get("object"):
            params["object"] = spec["object"]
        status, body = self.backend.get(self.tenant, "/facts", params)
        facts = body.get("facts", []) if status == 200 else []
        if len(facts) != 1:
            self._fail(n, f"retract: expected one fact valid just before {end}, found {len(facts)}")
            return
        status, body = self.backend.retract(self.tenant, facts[0]["fact_id"], {"valid_to": end})
        if status != 200:
            self._fail(n, f"retract refused: {status} {body}")
            return
        self.say(f"[{n}] retract {spec['subject']}.{spec['predicate']} at {end}: ok")

    def _delete_episode(self, n: int, step: dict[str, Any]) -> None:
        status, body = self.backend.delete_episode(self.tenant, step["delete_episode"])
        if status != 200:
            self._fail(n, f"delete episode {step['delete_episode']}: {status} {body}")
            return
        self.say(
            f"[{n}] delete episode {step['delete_episode']}: removed {body['facts_removed']},"
            f" restored {body['facts_restored']}"
        )

    # steps that read -------------------------------------------------------------------
    def _expect(self, n: int, step: dict[str, Any]) -> None:
        e = step["expect"]
        params = {"subject": e["subject"], "predicate": e["predicate"]}
        for k in ("object", "as_of"):
            if e.get(k):
                params[k] = e[k]
        known = self._known_at(n, e.get("known_at"))
        if known:
            params["known_at"] = known
        status, body = self.backend.get(self.tenant, "/facts", params)
        if status != 200:
            self._fail(n, f"read failed: {status} {body}")
            return
        facts = body["facts"]
        when = f" as of {e['as_of']}" if e.get("as_of") else " now"
        when += f" known at {known}" if known else ""
        name = f"{e['subject']}.{e['predicate']}"
        got = _describe(facts)
        if "value" in e:
            ok = len(facts) == 1 and facts[0].get("value") == e["value"]
            if ok and "source_episode_id" in e:
                ok = facts[0]["source_episode_id"] == e["source_episode_id"]
            want = f"{_label(e['value'])}" + (
                f" ({e['source_episode_id']})" if "source_episode_id" in e else ""
            )
        elif "objects" in e:
            ok = sorted(f.get("object") for f in facts) == sorted(e["objects"])
            want = ", ".join(e["objects"]) or "nothing"
        elif e.get("empty") is True:
            ok = not facts
            want = "nothing"
        else:
            raise MalformedScenario(f"step {n}: expect needs value, objects or empty")
        if ok:
            self.say(f"[{n}] expect {name}{when} = {got} ok")
        else:
            self._fail(n, f"expect {name}{when}: wanted {want}, got {got}")

    def _expect_history(self, n: int, step: dict[str, Any]) -> None:
        e = step["expect_history"]
        params = {"subject": e["subject"], "predicate": e["predicate"]}
        if e.get("object"):
            params["object"] = e["object"]
        known = self._known_at(n, e.get("known_at"))
        if known:
            params["known_at"] = known
        status, body = self.backend.get(self.tenant, "/facts/history", params)
        if status != 200:
            self._fail(n, f"history read failed: {status} {body}")
            return
        got = [[f["valid_from"], f["valid_to"], f["source_episode_id"]] for f in body["facts"]]
        want = e["intervals"]
        ok = len(got) == len(want) and all(
            _same_instant(g[0], w[0]) and _same_instant(g[1], w[1]) and g[2] == w[2]
            for g, w in zip(got, want, strict=True)
        )
        text = " | ".join(f"[{g[0]}, {g[1] or '∞'}) {g[2]}" for g in got)
        if ok:
            self.say(f"[{n}] history {e['subject']}.{e['predicate']}: {text} ok")
        else:
            self._fail(n, f"history {e['subject']}.{e['predicate']}: got {text}, wanted {want}")

    def _expect_neighbors(self, n: int, step: dict[str, Any]) -> None:
        e = step["expect_neighbors"]
        params = {"depth": str(e.get("depth", 1))}
        if e.get("as_of"):
            params["as_of"] = e["as_of"]
        known = self._known_at(n, e.get("known_at"))
        if known:
            params["known_at"] = known
        status, body = self.backend.get(self.tenant, f"/entities/{e['entity']}/neighbors", params)
        if status != 200:
            self._fail(n, f"neighbors read failed: {status} {body}")
            return
        ids = {x["entity_id"] for x in body["entities"]}
        missing = [i for i in e.get("includes", []) if i not in ids]
        extra = [i for i in e.get("excludes", []) if i in ids]
        if missing or extra:
            self._fail(n, f"neighbors of {e['entity']}: missing {missing}, unexpected {extra}")
        else:
            self.say(
                f"[{n}] neighbors of {e['entity']} (depth {params['depth']}): {sorted(ids)} ok"
            )

    def _summary(self) -> None:
        """What the memory holds now for every subject and predicate the scenario wrote
        (every current value of a many-valued one on one line)."""
        if not self.touched:
            return
        self.say("current state:")
        for subject, predicate in self.touched:
            params = {"subject": subject, "predicate": predicate}
            status, body = self.backend.get(self.tenant, "/facts", params)
            facts = body.get("facts", []) if status == 200 else []
            got = _describe(facts)
            self.say(f"  current {subject}.{predicate} = {got}")


STEP_KINDS = {
    "episode",
    "facts",
    "retract",
    "delete_episode",
    "expect",
    "expect_history",
    "expect_neighbors",
}


def replay(path: str | Path, backend: Backend, out: TextIO) -> int:
    try:
        scenario = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(scenario, dict):
            raise MalformedScenario("the file must hold a JSON object")
        return Runner(backend=backend, out=out).run(scenario)
    except (OSError, ValueError, KeyError, TypeError, MalformedScenario, SgamError) as e:
        print(f"malformed scenario {path}: {type(e).__name__}: {e}", file=out)
        return 2
