"""Write episodes.jsonl: two years (2024-2025) of an insurer's memory, deterministically.

Each line is one request body of the REST API: a ``POST /episodes`` body (a call note, an
e-mail, a policy schedule, a billing event ... with the facts the client extracted from
it, ``extract: "none"``) or a ``POST /facts`` body whose ``source_episode_id`` names an
episode of an earlier line. Lines are in the order the insurer received them.

Two customers carry the story told in README.md (``cust-ada``, ``cust-ben``); around them
400 generated customers move house, change tier, let policies lapse, file claims and
change advisor when one leaves. Everything is drawn from one seeded ``random.Random``,
so the file is the same byte for byte on every run (tests/unit/test_insurance_generator.py
checks it). Before writing, every line is validated with the repository's own models and
the example's schema, and the timelines are checked for same-start conflicts.

    python examples/insurance/generate.py [--out PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from graph.model import EpisodeCreate, MemoryDelta  # noqa: E402
from graph.schema import CheckedFact, check_delta, load_schema  # noqa: E402

SEED = 20240102
START = date(2024, 1, 2)
END = date(2025, 12, 31)
CUSTOMERS = 400
KHAN_LEAVES = date(2025, 4, 14)
LEE_JOINS = date(2024, 9, 2)
TIER_REVIEW = date(2025, 1, 1)

Fact = dict[str, Any]


# -- time ------------------------------------------------------------------------------------
def at(d: date, hour: int = 0, minute: int = 0) -> datetime:
    return datetime.combine(d, time(hour, minute), tzinfo=UTC)


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def day(d: date) -> str:
    return d.isoformat()


def long_day(d: date) -> str:
    return f"{d.day} {d.strftime('%B %Y')}"


def anniversary(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 February
        return d.replace(year=d.year + years, day=28)


# -- facts -----------------------------------------------------------------------------------
def val(subject: str, stype: str, predicate: str, value: Any, since: date | None = None) -> Fact:
    f: Fact = {"subject": subject, "subject_type": stype, "predicate": predicate, "value": value}
    if since is not None:
        f["valid_from"] = stamp(at(since))
    return f


def rel(
    subject: str,
    stype: str,
    predicate: str,
    obj: str,
    otype: str,
    since: date | None = None,
    until: date | None = None,
) -> Fact:
    f: Fact = {
        "subject": subject,
        "subject_type": stype,
        "predicate": predicate,
        "object": obj,
        "object_type": otype,
    }
    if since is not None:
        f["valid_from"] = stamp(at(since))
    if until is not None:
        f["valid_to"] = stamp(at(until))
    return f


# -- lines -----------------------------------------------------------------------------------
@dataclass
class Episode:
    kind: str
    occurred_at: datetime
    content: str
    source: str
    facts: list[Fact]
    session_id: str | None = None
    episode_id: str | None = None  # fixed for the README's episodes, else numbered on output
    arrival: datetime | None = None  # when the insurer received it (default: occurred_at)
    seq: int = 0

    @property
    def received(self) -> datetime:
        return self.arrival or self.occurred_at


@dataclass
class FactsLine:
    """A POST /facts body: facts stated by an episode of an earlier line."""

    episode: Episode
    facts: list[Fact]
    arrival: datetime
    conflict_policy: str | None = None
    seq: int = 0

    @property
    def received(self) -> datetime:
        return self.arrival


@dataclass
class World:
    rng: random.Random
    lines: list[Episode | FactsLine] = field(default_factory=list)

    def episode(
        self,
        kind: str,
        when: datetime,
        content: str,
        source: str,
        facts: list[Fact] | None = None,
        *,
        session: str | None = None,
        episode_id: str | None = None,
        arrival: datetime | None = None,
    ) -> Episode:
        ep = Episode(
            kind, when, content, source, facts or [], session, episode_id, arrival, len(self.lines)
        )
        self.lines.append(ep)
        return ep

    def facts(
        self, episode: Episode, facts: list[Fact], arrival: datetime, policy: str | None = None
    ) -> FactsLine:
        line = FactsLine(episode, facts, arrival, policy, len(self.lines))
        self.lines.append(line)
        return line

    def office_time(self, d: date) -> datetime:
        return at(d, self.rng.randint(8, 17), self.rng.randrange(0, 60))

    def between(self, lo: date, hi: date) -> date:
        return lo + timedelta(days=self.rng.randint(0, max(0, (hi - lo).days)))


# -- people and places -----------------------------------------------------------------------
_FIRST = (
    "Aileen Alasdair Amara Anders Anna Aoife Arjun Beatrice Bruno Callum Camille Catriona "
    "Chen Dara Deirdre Dmitri Eilidh Elena Emeka Ewan Fatima Fergus Fiona Gregor Hamish "
    "Hannah Ines Isla Jakub Jamal Jonas Kirsty Leila Lewis Lorna Magnus Mairi Malik Marek "
    "Maya Morag Niamh Nils Olga Omar Priya Rhona Rory Sana Seonaid Sofia Stuart Tariq "
    "Thea Tomasz Una Wei Yusuf Zofia"
)
_LAST = (
    "Ahmed Anderson Baird Bell Brown Campbell Chalmers Cowan Dalgleish Duncan Ferguson "
    "Forbes Fraser Gallacher Gordon Grant Hamilton Henderson Hughes Hunter Jamieson "
    "Johnston Kaur Kowalski Lindqvist MacDonald MacKay MacLeod Martin McIntyre Menzies "
    "Mitchell Morrison Munro Murray Nowak Ogilvie Patel Paterson Rahman Reid Robertson "
    "Ross Scott Sinclair Singh Stewart Sutherland Taylor Thomson Urquhart Wallace Watson "
    "Wilson Wright Young Zhang"
)
_STREETS = (
    "Abbey Road|Ashgrove Place|Bank Street|Beech Avenue|Braid Crescent|Bruntsfield Terrace|"
    "Castle Wynd|Church Lane|Clyde Street|Craigie Drive|Dalhousie Road|Dean Path|Dock Street|"
    "Elm Row|Ferry Road|Glebe Street|Gordon Terrace|Harbour Road|Hawthorn Gardens|High Street|"
    "Kelvin Way|King Street|Lochside Avenue|Marine Drive|Market Street|Mill Lane|Montgomery "
    "Street|Moray Place|North Bridge|Park Avenue|Queen Street|Riverside Walk|Rose Street|"
    "School Brae|Shore Road|South Street|Station Road|Thistle Street|Union Street|Victoria "
    "Road|Waverley Crescent|Wellington Place|West End|Willow Bank|York Place"
)
FIRST, LAST, STREETS = _FIRST.split(), _LAST.split(), _STREETS.split("|")
CITIES = (
    ("Edinburgh", "EH", "Edinburgh", 30),
    ("Leith, Edinburgh", "EH", "Edinburgh", 6),
    ("Glasgow", "G", "Glasgow", 28),
    ("Paisley", "PA", "Glasgow", 5),
    ("Aberdeen", "AB", "Aberdeen", 10),
    ("Dundee", "DD", "Dundee", 8),
    ("Inverness", "IV", "Inverness", 5),
    ("Stirling", "FK", "Stirling", 5),
    ("Perth", "PH", "Stirling", 3),
)


@dataclass(frozen=True)
class Advisor:
    id: str
    name: str
    branch: str
    joins: date = START
    leaves: date | None = None

    def active(self, d: date) -> bool:
        return self.joins <= d and (self.leaves is None or d < self.leaves)


ADVISORS = (
    Advisor("adv-khan", "Samira Khan", "Edinburgh", leaves=KHAN_LEAVES),
    Advisor("adv-rossi", "Giulia Rossi", "Edinburgh"),
    Advisor("adv-walsh", "Aoife Walsh", "Edinburgh"),
    Advisor("adv-lee", "Daniel Lee", "Edinburgh", joins=LEE_JOINS),
    Advisor("adv-novak", "Petra Novak", "Glasgow"),
    Advisor("adv-okafor", "Chidi Okafor", "Glasgow"),
    Advisor("adv-moreau", "Claire Moreau", "Glasgow"),
    Advisor("adv-berg", "Lars Berg", "Aberdeen"),
    Advisor("adv-silva", "Marta Silva", "Dundee"),
    Advisor("adv-tanaka", "Ken Tanaka", "Inverness"),
    Advisor("adv-murray", "Euan Murray", "Stirling"),
)
ADVISOR = {a.id: a for a in ADVISORS}
# Who takes over Samira Khan's customers when she leaves (the README's tour: Ada → Lee).
KHAN_SUCCESSORS = (("adv-lee", 6), ("adv-rossi", 2), ("adv-walsh", 2))

PRODUCTS = {  # premium range in GBP, weight for a first policy
    "home": ((380, 1400), 30),
    "contents": ((110, 420), 18),
    "motor": ((450, 1650), 26),
    "pet": ((180, 620), 8),
    "life": ((240, 900), 10),
    "travel": ((25, 120), 8),
}
THINGS = (
    "a cracked window",
    "garden furniture",
    "a bicycle kept in the shed",
    "accidental damage to a laptop",
    "a hired car abroad",
    "a burst pipe in the loft",
    "lost keys",
    "a stolen phone",
)


def weighted(rng: random.Random, items: tuple[tuple[str, int], ...]) -> str:
    return rng.choices([i for i, _ in items], weights=[w for _, w in items])[0]


def email_of(name: str, n: int) -> str:
    first, last = name.lower().split(" ", 1)
    return f"{first}.{last.replace(' ', '')}{n % 97}@example.org"


def money(x: float) -> str:
    return f"£{x:,.2f}"


# -- the advisors ----------------------------------------------------------------------------
def advisors(w: World) -> None:
    staff = [a for a in ADVISORS if a.joins == START]
    facts = [
        f
        for a in staff
        for f in (
            val(a.id, "Advisor", "name", a.name),
            val(a.id, "Advisor", "email", f"{a.id.removeprefix('adv-')}@insurer.example"),
            val(a.id, "Advisor", "branch", a.branch),
            val(a.id, "Advisor", "status", "active"),
        )
    ]
    roster = "; ".join(f"{a.name} ({a.branch})" for a in staff)
    w.episode(
        "document",
        at(START, 8, 30),
        f"Advisor roster for 2024, customer advice team: {roster}.",
        "hr",
        facts,
        episode_id="ep-roster-2024",
    )
    lee = ADVISOR["adv-lee"]
    w.episode(
        "message",
        at(LEE_JOINS, 9, 0),
        "Team note: please welcome Daniel Lee, who joins the Edinburgh branch today as a "
        "customer advisor. He takes new customers from this week.",
        "hr",
        [
            val(lee.id, "Advisor", "name", lee.name, LEE_JOINS),
            val(lee.id, "Advisor", "email", "lee@insurer.example", LEE_JOINS),
            val(lee.id, "Advisor", "branch", lee.branch, LEE_JOINS),
            val(lee.id, "Advisor", "status", "active", LEE_JOINS),
        ],
        episode_id="ep-lee-joins",
    )


# -- the README's customers ------------------------------------------------------------------
def ada(w: World, khan_memo: list[tuple[str, str, str]]) -> None:
    """cust-ada: the tour (README.md). Every date here is quoted there."""
    c, a1, a2 = "cust-ada", "acct-ada-1", "acct-ada-2"
    home, car, car2, claim = "pol-ada-home", "pol-ada-car", "pol-ada-car-2", "clm-ada-1"
    w.episode(
        "message",
        at(date(2024, 1, 9), 10, 15),
        "Welcome call with Ada Lovelace, new customer. She lives at 7 Marchmont Road, "
        "Edinburgh EH9 1HX, e-mail ada.lovelace@example.org. Opened account acct-ada-1 for "
        "her today; I'll be her advisor (Samira Khan). Standard tier to start with.",
        "phone",
        [
            val(c, "Customer", "name", "Ada Lovelace"),
            val(c, "Customer", "email", "ada.lovelace@example.org"),
            val(c, "Customer", "address", "7 Marchmont Road, Edinburgh EH9 1HX"),
            val(c, "Customer", "tier", "standard"),
            val(c, "Customer", "customer_since", "2024-01-09"),
            rel(c, "Customer", "holds", a1, "Account"),
            val(a1, "Account", "opened_on", "2024-01-09"),
            val(a1, "Account", "status", "open"),
            rel(a1, "Account", "managed_by", "adv-khan", "Advisor"),
        ],
        session="phone-cust-ada-20240109",
        episode_id="ep-ada-welcome",
    )
    w.episode(
        "document",
        at(date(2024, 1, 15), 9, 0),
        "Policy schedule pol-ada-home. Policyholder: Ada Lovelace, account acct-ada-1. "
        "Product: home (buildings and contents). Cover starts 15 January 2024, renews "
        "every year. Annual premium £612.00, paid monthly by direct debit.",
        "policy-admin",
        [
            val(home, "Policy", "product", "home", date(2024, 1, 15)),
            val(home, "Policy", "premium", 612.0, date(2024, 1, 15)),
            val(home, "Policy", "started_on", "2024-01-15", date(2024, 1, 15)),
            val(home, "Policy", "status", "active", date(2024, 1, 15)),
            rel(home, "Policy", "covers", a1, "Account", date(2024, 1, 15)),
        ],
        session="policy-admin-pol-ada-home",
        episode_id="ep-ada-home-schedule",
    )
    w.episode(
        "message",
        at(date(2024, 10, 3), 14, 20),
        "Ada Lovelace came into the branch: she bought a car and wants it insured with us. "
        "Opened a second account, acct-ada-2, and issued motor policy pol-ada-car for one "
        "year: 3 October 2024 to 3 October 2025, premium £890.00. Same advisor.",
        "branch",
        [
            rel(c, "Customer", "holds", a2, "Account"),
            val(a2, "Account", "opened_on", "2024-10-03"),
            val(a2, "Account", "status", "open"),
            rel(a2, "Account", "managed_by", "adv-khan", "Advisor"),
            val(car, "Policy", "product", "motor", date(2024, 10, 3)),
            val(car, "Policy", "premium", 890.0, date(2024, 10, 3)),
            val(car, "Policy", "started_on", "2024-10-03", date(2024, 10, 3)),
            val(car, "Policy", "expires_on", "2025-10-03", date(2024, 10, 3)),
            val(car, "Policy", "status", "active", date(2024, 10, 3)),
            rel(car, "Policy", "covers", a2, "Account", date(2024, 10, 3), date(2025, 10, 3)),
        ],
        session="branch-cust-ada-20241003",
        episode_id="ep-ada-car",
    )
    w.episode(
        "document",
        at(date(2024, 12, 18), 7, 0),
        "Renewal notice for pol-ada-home (Ada Lovelace): your home policy renews on "
        "15 January 2025. New annual premium £648.00.",
        "policy-admin",
        [val(home, "Policy", "premium", 648.0, date(2025, 1, 15))],
        session="policy-admin-pol-ada-home",
        episode_id="ep-ada-home-renewal-2025",
    )
    w.episode(
        "event",
        at(TIER_REVIEW, 6, 0),
        "Annual tier review 2025: Ada Lovelace moves from standard to gold "
        "(two active policies, no arrears in 2024).",
        "crm",
        [val(c, "Customer", "tier", "gold", TIER_REVIEW)],
        episode_id="ep-ada-tier-2025",
    )
    w.episode(
        "message",
        at(date(2025, 2, 20), 11, 5),
        "Call from Ada Lovelace: she is moving to 14 Harbour Street, Leith, Edinburgh "
        "EH6 6QN. Gets the keys on 10 March, so the new address applies from then.",
        "phone",
        [
            val(
                c,
                "Customer",
                "address",
                "14 Harbour Street, Leith, Edinburgh EH6 6QN",
                date(2025, 3, 10),
            )
        ],
        session="phone-cust-ada-20250220",
        episode_id="ep-ada-move-call",
    )
    khan_memo.extend((a, "adv-lee", c) for a in (a1, a2))
    w.episode(
        "document",
        at(date(2025, 4, 22), 9, 30),
        "Scanned change-of-address form, signed by Ada Lovelace: new address 14 Harbour "
        "Street, Leith, Edinburgh EH6 6QN, moved in on 1 March 2025 (the keys came early).",
        "post",
        [
            val(
                c,
                "Customer",
                "address",
                "14 Harbour Street, Leith, Edinburgh EH6 6QN",
                date(2025, 3, 1),
            )
        ],
        session="post-cust-ada-20250422",
        episode_id="ep-ada-address-form",
    )
    w.episode(
        "event",
        at(date(2025, 6, 1), 5, 0),
        "Billing: the direct debit for pol-ada-home (Ada Lovelace) was returned unpaid for "
        "the second month running. The policy lapses on 1 June 2025.",
        "billing",
        [val(home, "Policy", "status", "lapsed", date(2025, 6, 1))],
        episode_id="ep-ada-home-lapse",
    )
    w.episode(
        "message",
        at(date(2025, 8, 15), 16, 40),
        "Ada Lovelace paid the arrears on pol-ada-home by card today; policy reinstated "
        "from 15 August 2025. She had changed banks and the mandate had not moved with her.",
        "phone",
        [val(home, "Policy", "status", "active", date(2025, 8, 15))],
        session="phone-cust-ada-20250815",
        episode_id="ep-ada-home-reinstated",
    )
    w.episode(
        "message",
        at(date(2025, 9, 10), 12, 0),
        "E-mail from Ada Lovelace: she won't renew pol-ada-car when it ends on 3 October; "
        "she takes our new motor policy instead. Issued pol-ada-car-2 on account acct-ada-2 "
        "from 3 October 2025, premium £940.00, no fixed end.",
        "email",
        [
            val(car, "Policy", "status", "expired", date(2025, 10, 3)),
            val(car2, "Policy", "product", "motor", date(2025, 10, 3)),
            val(car2, "Policy", "premium", 940.0, date(2025, 10, 3)),
            val(car2, "Policy", "started_on", "2025-10-03", date(2025, 10, 3)),
            val(car2, "Policy", "status", "active", date(2025, 10, 3)),
            rel(car2, "Policy", "covers", a2, "Account", date(2025, 10, 3)),
        ],
        session="email-cust-ada-20250910",
        episode_id="ep-ada-car-switch",
    )
    w.episode(
        "message",
        at(date(2025, 10, 6), 10, 25),
        "Ada Lovelace reports an accident on 28 September 2025: another car reversed into "
        "hers in a car park in Leith. Repair estimate £2,350.00. Opened claim clm-ada-1 "
        "under pol-ada-car, the policy in force on the day of the accident.",
        "phone",
        [
            rel(claim, "Claim", "filed_by", c, "Customer"),
            rel(claim, "Claim", "under_policy", car, "Policy"),
            val(claim, "Claim", "incident_date", "2025-09-28"),
            val(claim, "Claim", "claim_amount", 2350.0),
            val(claim, "Claim", "status", "open"),
        ],
        session="phone-cust-ada-20251006",
        episode_id="ep-ada-claim",
    )
    report = w.episode(
        "document",
        at(date(2025, 11, 12), 15, 0),
        "Adjuster's report on clm-ada-1: liability accepted by the third party's insurer; "
        "approved at £2,100.00 after the garage's final invoice.",
        "claims",
        session="claims-clm-ada-1",
        episode_id="ep-ada-claim-report",
    )
    w.facts(
        report,
        [
            val(claim, "Claim", "status", "approved", date(2025, 11, 12)),
            val(claim, "Claim", "paid_amount", 2100.0, date(2025, 11, 12)),
        ],
        at(date(2025, 11, 12), 17, 0),
    )
    w.episode(
        "event",
        at(date(2025, 11, 20), 6, 0),
        "Payments: £2,100.00 paid to Ada Lovelace for claim clm-ada-1.",
        "payments",
        [val(claim, "Claim", "status", "paid", date(2025, 11, 20))],
        episode_id="ep-ada-claim-paid",
    )


def ben(w: World) -> None:
    """cust-ben: a premium corrected in system time, and a claim during a lapse."""
    c, a1, home, claim = "cust-ben", "acct-ben-1", "pol-ben-home", "clm-ben-1"
    w.episode(
        "message",
        at(date(2024, 1, 10), 13, 0),
        "New customer Ben Carter, 41 Hyndland Road, Glasgow G12 9UY "
        "(ben.carter@example.org). Account acct-ben-1 opened, advisor Petra Novak. Silver "
        "tier: he moved his whole household insurance to us.",
        "phone",
        [
            val(c, "Customer", "name", "Ben Carter"),
            val(c, "Customer", "email", "ben.carter@example.org"),
            val(c, "Customer", "address", "41 Hyndland Road, Glasgow G12 9UY"),
            val(c, "Customer", "tier", "silver"),
            val(c, "Customer", "customer_since", "2024-01-10"),
            rel(c, "Customer", "holds", a1, "Account"),
            val(a1, "Account", "opened_on", "2024-01-10"),
            val(a1, "Account", "status", "open"),
            rel(a1, "Account", "managed_by", "adv-novak", "Advisor"),
            val(home, "Policy", "product", "home", date(2024, 1, 10)),
            val(home, "Policy", "premium", 1180.0, date(2024, 1, 10)),
            val(home, "Policy", "started_on", "2024-01-10", date(2024, 1, 10)),
            val(home, "Policy", "status", "active", date(2024, 1, 10)),
            rel(home, "Policy", "covers", a1, "Account", date(2024, 1, 10)),
        ],
        session="phone-cust-ben-20240110",
        episode_id="ep-ben-welcome",
    )
    w.episode(
        "document",
        at(date(2024, 12, 16), 7, 0),
        "Renewal notice for pol-ben-home (Ben Carter): your home policy renews on "
        "10 January 2025. New annual premium £1,240.00.",
        "policy-admin",
        [val(home, "Policy", "premium", 1240.0, date(2025, 1, 10))],
        session="policy-admin-pol-ben-home",
        episode_id="ep-ben-renewal-2025",
    )
    fix = w.episode(
        "document",
        at(date(2025, 1, 24), 11, 0),
        "Corrected renewal notice for pol-ben-home: the premium from 10 January 2025 is "
        "£1,420.00, not £1,240.00 as printed on the notice of 16 December (digits "
        "transposed). The direct debit will be adjusted.",
        "policy-admin",
        session="policy-admin-pol-ben-home",
        episode_id="ep-ben-premium-correction",
    )
    # Same valid_from as the notice: a correction in system time, settled by the policy.
    w.facts(
        fix,
        [val(home, "Policy", "premium", 1420.0, date(2025, 1, 10))],
        at(date(2025, 1, 24), 11, 30),
        policy="latest_recorded_wins",
    )
    w.episode(
        "event",
        at(date(2025, 2, 1), 5, 0),
        "Billing: the direct debit for pol-ben-home (Ben Carter) failed after the premium "
        "change. The policy lapses on 1 February 2025.",
        "billing",
        [val(home, "Policy", "status", "lapsed", date(2025, 2, 1))],
        episode_id="ep-ben-home-lapse",
    )
    w.episode(
        "message",
        at(date(2025, 3, 5), 9, 40),
        "Ben Carter reports storm damage to his roof on 2 March 2025; roofer's quote "
        "£3,800.00. Claim clm-ben-1 opened under pol-ben-home.",
        "phone",
        [
            rel(claim, "Claim", "filed_by", c, "Customer"),
            rel(claim, "Claim", "under_policy", home, "Policy"),
            val(claim, "Claim", "incident_date", "2025-03-02"),
            val(claim, "Claim", "claim_amount", 3800.0),
            val(claim, "Claim", "status", "open"),
        ],
        session="phone-cust-ben-20250305",
        episode_id="ep-ben-claim",
    )
    w.episode(
        "message",
        at(date(2025, 3, 20), 14, 10),
        "Ben Carter set up a new direct debit and paid the arrears; pol-ben-home "
        "reinstated from 20 March 2025.",
        "phone",
        [val(home, "Policy", "status", "active", date(2025, 3, 20))],
        session="phone-cust-ben-20250320",
        episode_id="ep-ben-home-reinstated",
    )
    report = w.episode(
        "document",
        at(date(2025, 4, 2), 10, 0),
        "Claims decision on clm-ben-1: declined. The storm of 2 March 2025 fell while "
        "pol-ben-home was lapsed (1 February to 20 March 2025); reinstatement does not "
        "cover events during the lapse.",
        "claims",
        session="claims-clm-ben-1",
        episode_id="ep-ben-claim-decision",
    )
    w.facts(
        report,
        [val(claim, "Claim", "status", "declined", date(2025, 4, 2))],
        at(date(2025, 4, 2), 10, 30),
    )


# -- everyone else ---------------------------------------------------------------------------
@dataclass
class Pol:
    id: str
    product: str
    account: str
    start: date
    premium: float
    end: date | None = None  # fixed term (travel) ends here
    statuses: list[tuple[date, str]] = field(default_factory=list)

    def status_on(self, d: date) -> str | None:
        current = None
        for since, s in self.statuses:
            if since <= d:
                current = s
        return current

    def ended(self) -> date | None:
        """The day cover stopped for good (cancelled or expired), if it did."""
        last = self.statuses[-1] if self.statuses else None
        return last[0] if last and last[1] in ("cancelled", "expired") else None


class Customer:
    def __init__(self, w: World, idx: int) -> None:
        self.w, self.rng = w, w.rng
        self.id = f"cust-{idx:04d}"
        self.idx = idx
        self.name = f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"
        self.first = self.name.split(" ")[0]
        if self.rng.random() < 0.45:
            self.since = w.between(START, date(2024, 3, 31))
        else:
            self.since = w.between(date(2024, 4, 1), date(2025, 10, 31))
        self.city, self.postcode, self.branch = self.place()
        self.address = self.street_address(self.city, self.postcode)
        self.accounts: list[tuple[str, date]] = []
        self.policies: list[Pol] = []
        # The customer's advisor over time; all their accounts share it.
        first = self.pick_advisor(self.since, exclude=None)
        self.advisors: list[tuple[date, str]] = [(self.since, first)]

    def place(self) -> tuple[str, str, str]:
        city, prefix, branch, _ = self.rng.choices(CITIES, weights=[c[3] for c in CITIES])[0]
        return city, prefix, branch

    def street_address(self, city: str, prefix: str) -> str:
        n = self.rng.randint(1, 160)
        street = self.rng.choice(STREETS)
        letters = "ABDEFGHJLNPQRSTUWXYZ"
        district = self.rng.randint(1, 20)
        inward = f"{self.rng.randint(1, 9)}{self.rng.choice(letters)}{self.rng.choice(letters)}"
        code = f"{prefix}{district} {inward}"
        return f"{n} {street}, {city} {code}"

    def pick_advisor(self, d: date, exclude: str | None) -> str:
        pool = [
            a.id for a in ADVISORS if a.branch == self.branch and a.active(d) and a.id != exclude
        ]
        if not pool:
            pool = [a.id for a in ADVISORS if a.active(d) and a.id != exclude]
        return self.rng.choice(pool)

    def advisor_on(self, d: date) -> str:
        current = self.advisors[0][1]
        for since, adv in self.advisors:
            if since <= d:
                current = adv
        return current

    def session(self, channel: str, d: date) -> str:
        return f"{channel}-{self.id}-{d.strftime('%Y%m%d')}"

    # -- the story --------------------------------------------------------------------------
    def story(self, khan_memo: list[tuple[str, str, str]]) -> None:
        self.plan_advisors()
        acct = self.open_account(self.since, first=True)
        self.issue_policy(acct, self.since + timedelta(days=self.rng.randint(0, 6)), first=True)
        if self.rng.random() < 0.22:
            opened = self.since + timedelta(days=self.rng.randint(60, 420))
            if opened <= END - timedelta(days=30):
                acct2 = self.open_account(opened, first=False)
                self.issue_policy(acct2, opened, first=False)
        if self.rng.random() < 0.10:
            trip = self.since + timedelta(days=self.rng.randint(20, 500))
            if trip <= END - timedelta(days=40):
                self.issue_policy(self.accounts[0][0], trip, first=False, product="travel")
        self.moves()
        self.tier_review()
        self.advisor_changes(khan_memo)
        self.chatter()

    def plan_advisors(self) -> None:
        if self.rng.random() < 0.06:
            d = self.since + timedelta(days=self.rng.randint(90, 500))
            if d <= END:
                self.advisors.append((d, self.pick_advisor(d, exclude=self.advisor_on(d))))
        # Samira Khan leaves: her customers move to a colleague on the day.
        if self.advisor_on(KHAN_LEAVES) == "adv-khan" and self.since < KHAN_LEAVES:
            later = [(d, a) for d, a in self.advisors if d > KHAN_LEAVES]
            self.advisors = [(d, a) for d, a in self.advisors if d < KHAN_LEAVES]
            self.advisors.append((KHAN_LEAVES, weighted(self.rng, KHAN_SUCCESSORS)))
            self.advisors.extend(later)

    def open_account(self, d: date, *, first: bool) -> str:
        acct = f"acct-{self.idx:04d}-{len(self.accounts) + 1}"
        self.accounts.append((acct, d))
        adv = self.advisor_on(d)
        adv_name = ADVISOR[adv].name
        when = self.w.office_time(d)
        if first:
            facts = [
                val(self.id, "Customer", "name", self.name),
                val(self.id, "Customer", "email", email_of(self.name, self.idx)),
                val(self.id, "Customer", "address", self.address),
                val(self.id, "Customer", "tier", self.initial_tier()),
                val(self.id, "Customer", "customer_since", day(d)),
            ]
            text = self.rng.choice(
                (
                    "Welcome call with {name}, new customer, living at {address}. Account "
                    "{acct} opened; advisor {adv}.",
                    "New customer {name} signed up online ({address}). Account {acct} created "
                    "and assigned to {adv}.",
                    "{name} came into the {branch} branch to become a customer. Address: "
                    "{address}. Opened {acct}, advisor {adv}.",
                )
            )
        else:
            facts = []
            text = self.rng.choice(
                (
                    "{name} asked for a second account for a new policy: {acct} opened, "
                    "same advisor ({adv}).",
                    "Opened account {acct} for existing customer {name}; advisor {adv}.",
                )
            )
        facts += [
            rel(self.id, "Customer", "holds", acct, "Account"),
            val(acct, "Account", "opened_on", day(d)),
            val(acct, "Account", "status", "open"),
            rel(acct, "Account", "managed_by", adv, "Advisor"),
        ]
        content = text.format(
            name=self.name, address=self.address, acct=acct, adv=adv_name, branch=self.branch
        )
        channel = "phone" if "call" in text else "branch" if "branch" in text else "web"
        self.w.episode("message", when, content, channel, facts, session=self.session(channel, d))
        return acct

    def initial_tier(self) -> str:
        self.tier = "silver" if self.rng.random() < 0.25 else "standard"
        return self.tier

    def issue_policy(self, acct: str, d: date, *, first: bool, product: str | None = None) -> None:
        if product is None:
            choices = tuple((p, wt) for p, (_, wt) in PRODUCTS.items() if p != "travel")
            taken = {p.product for p in self.policies}
            choices = tuple((p, wt) for p, wt in choices if p not in taken) or choices
            product = weighted(self.rng, choices)
        lo, hi = PRODUCTS[product][0]
        premium = round(self.rng.uniform(lo, hi), 2)
        pid = f"pol-{self.idx:04d}-{len(self.policies) + 1}"
        pol = Pol(pid, product, acct, d, premium)
        facts = [
            val(pid, "Policy", "product", product, d),
            val(pid, "Policy", "premium", premium, d),
            val(pid, "Policy", "started_on", day(d), d),
            val(pid, "Policy", "status", "active", d),
        ]
        pol.statuses.append((d, "active"))
        if product == "travel":
            end = d + timedelta(days=self.rng.randint(5, 21))
            pol.end = end
            facts += [
                val(pid, "Policy", "expires_on", day(end), d),
                val(pid, "Policy", "status", "expired", end),
                rel(pid, "Policy", "covers", acct, "Account", d, end),
            ]
            pol.statuses.append((end, "expired"))
            text = (
                f"Policy schedule {pid}. Policyholder: {self.name}, account {acct}. Single-trip "
                f"travel insurance from {long_day(d)} to {long_day(end)}. Premium {money(premium)}."
            )
        else:
            facts.append(rel(pid, "Policy", "covers", acct, "Account", d))
            text = (
                f"Policy schedule {pid}. Policyholder: {self.name}, account {acct}. Product: "
                f"{product}. Cover starts {long_day(d)} and renews every year. Annual premium "
                f"{money(premium)}."
            )
        self.w.episode(
            "document",
            at(d, 9, self.rng.randrange(0, 60)),
            text,
            "policy-admin",
            facts,
            session=f"policy-admin-{pid}",
        )
        self.policies.append(pol)
        if product != "travel":
            self.policy_life(pol)
        self.claims(pol)

    def policy_life(self, pol: Pol) -> None:
        """Lapses, reinstatements, cancellations and renewals, in date order."""
        rng = self.rng
        lapse = reinstated = cancelled = None
        if rng.random() < 0.08:
            lo = pol.start + timedelta(days=60)
            if lo < END - timedelta(days=40):
                d = self.w.between(lo, END - timedelta(days=40))
                lapse = date(d.year, d.month, 1) if d.day > 1 else d
                if lapse <= pol.start + timedelta(days=30):
                    lapse = None
        if lapse is not None:
            if rng.random() < 0.7:
                reinstated = lapse + timedelta(days=rng.randint(14, 80))
            else:
                cancelled = lapse + timedelta(days=45)
        elif rng.random() < 0.05:
            cancelled = pol.start + timedelta(days=rng.randint(40, 600))
        events: list[tuple[date, str]] = []
        if lapse is not None:
            events.append((lapse, "lapsed"))
        if reinstated is not None and reinstated <= END:
            events.append((reinstated, "active"))
        if cancelled is not None and cancelled <= END:
            events.append((cancelled, "cancelled"))
        stop = next((d for d, s in events if s == "cancelled"), None)
        for years in (1, 2):
            ann = anniversary(pol.start, years)
            notice = ann - timedelta(days=rng.randint(21, 28))
            if notice > END or (stop is not None and ann >= stop):
                break
            if lapse is not None and lapse <= ann and (reinstated is None or ann < reinstated):
                continue  # no renewal while lapsed
            self.renewal(pol, ann, notice)
        for d, status in events:
            pol.statuses.append((d, status))
            self.status_change(pol, d, status, lapse)

    def renewal(self, pol: Pol, ann: date, notice: date) -> None:
        rng = self.rng
        new = round(pol.premium * rng.uniform(0.97, 1.12), 2)
        text = (
            f"Renewal notice for {pol.id} ({self.name}): your {pol.product} policy renews on "
            f"{long_day(ann)}. New annual premium {money(new)}."
        )
        typo = rng.random() < 0.04
        printed = new
        if typo:  # two digits swapped on the notice, corrected later in system time
            s = f"{new:.2f}"
            printed = float(s[1] + s[0] + s[2:]) if s[0] != s[1] else new + 100.0
            text = text.replace(money(new), money(printed))
        self.w.episode(
            "document",
            at(notice, 7, 0),
            text,
            "policy-admin",
            [val(pol.id, "Policy", "premium", printed, ann)],
            session=f"policy-admin-{pol.id}",
        )
        pol.premium = new
        fix_day = notice + timedelta(days=rng.randint(7, 20))
        if typo and fix_day <= END:
            fix = self.w.episode(
                "document",
                at(fix_day, 11, 0),
                f"Corrected renewal notice for {pol.id}: the premium from {long_day(ann)} is "
                f"{money(new)}, not {money(printed)} as printed.",
                "policy-admin",
                session=f"policy-admin-{pol.id}",
            )
            self.w.facts(
                fix,
                [val(pol.id, "Policy", "premium", new, ann)],
                at(fix_day, 11, 30),
                policy="latest_recorded_wins",
            )

    def status_change(self, pol: Pol, d: date, status: str, lapse: date | None) -> None:
        if status == "lapsed":
            self.w.episode(
                "event",
                at(d, 5, 0),
                f"Billing: direct debit for {pol.id} ({self.name}) returned unpaid twice. "
                f"The policy lapses on {long_day(d)}.",
                "billing",
                [val(pol.id, "Policy", "status", "lapsed", d)],
            )
        elif status == "active":
            self.w.episode(
                "message",
                self.w.office_time(d),
                f"{self.name} paid the arrears on {pol.id}; policy reinstated from {long_day(d)}.",
                "phone",
                [val(pol.id, "Policy", "status", "active", d)],
                session=self.session("phone", d),
            )
        elif lapse is not None:
            self.w.episode(
                "event",
                at(d, 5, 0),
                f"Billing: {pol.id} ({self.name}) cancelled for non-payment, "
                f"{(d - lapse).days} days after it lapsed.",
                "billing",
                [val(pol.id, "Policy", "status", "cancelled", d)],
            )
        else:
            self.w.episode(
                "message",
                self.w.office_time(d - timedelta(days=self.rng.randint(1, 14))),
                f"{self.name} asked us to cancel {pol.id} from {long_day(d)}: "
                + self.rng.choice(
                    (
                        "found a cheaper quote elsewhere.",
                        "sold the item it insured.",
                        "moving in with a partner who is insured already.",
                    )
                ),
                "email",
                [val(pol.id, "Policy", "status", "cancelled", d)],
                session=self.session("email", d),
            )

    def claims(self, pol: Pol) -> None:
        rng = self.rng
        if rng.random() >= (0.35 if pol.product == "travel" else 0.14):
            return
        last = min(END - timedelta(days=20), pol.end - timedelta(days=1) if pol.end else END)
        if last <= pol.start:
            return
        incident = self.w.between(pol.start + timedelta(days=1), last)
        # Only claims on cover in force: the one claim on a lapsed policy is Ben's.
        ended = pol.ended()
        if pol.status_on(incident) != "active" or (ended is not None and incident >= ended):
            return
        filed = incident + timedelta(days=rng.randint(1, 12))
        if filed > END:
            return
        cid = f"clm-{self.idx:04d}-{pol.id.rsplit('-', 1)[1]}"
        amount = round(rng.uniform(150, 6000), 2)
        what = {
            "home": "water damage from a burst pipe",
            "contents": "a stolen bicycle",
            "motor": "a collision at a roundabout",
            "pet": "vet fees after the dog swallowed a sock",
            "life": "a critical illness benefit",
            "travel": "a cancelled return flight",
        }[pol.product]
        self.w.episode(
            "message",
            self.w.office_time(filed),
            f"{self.name} reports {what} on {long_day(incident)}, estimate {money(amount)}. "
            f"Claim {cid} opened under {pol.id}.",
            "phone",
            [
                rel(cid, "Claim", "filed_by", self.id, "Customer"),
                rel(cid, "Claim", "under_policy", pol.id, "Policy"),
                val(cid, "Claim", "incident_date", day(incident)),
                val(cid, "Claim", "claim_amount", amount),
                val(cid, "Claim", "status", "open"),
            ],
            session=self.session("phone", filed),
        )
        decided = filed + timedelta(days=rng.randint(14, 45))
        if decided > END:
            return
        approved = rng.random() < 0.85
        paid = round(amount * rng.uniform(0.6, 1.0), 2) if approved else 0.0
        facts = [val(cid, "Claim", "status", "approved" if approved else "declined", decided)]
        if approved:
            facts.append(val(cid, "Claim", "paid_amount", paid, decided))
        text = (
            f"Adjuster's report on {cid}: approved at {money(paid)}."
            if approved
            else f"Claims decision on {cid}: declined, the loss is excluded by the policy wording."
        )
        if rng.random() < 0.5:
            report = self.w.episode(
                "document", at(decided, 15, 0), text, "claims", session=f"claims-{cid}"
            )
            self.w.facts(report, facts, at(decided, 17, 0))
        else:
            self.w.episode(
                "document", at(decided, 15, 0), text, "claims", facts, session=f"claims-{cid}"
            )
        payday = decided + timedelta(days=rng.randint(5, 14))
        if approved and payday <= END:
            self.w.episode(
                "event",
                at(payday, 6, 0),
                f"Payments: {money(paid)} paid to {self.name} for claim {cid}.",
                "payments",
                [val(cid, "Claim", "status", "paid", payday)],
            )

    def moves(self) -> None:
        rng = self.rng
        n = rng.choices((0, 1, 2), weights=(64, 30, 6))[0]
        last = self.since + timedelta(days=30)
        for _ in range(n):
            if last + timedelta(days=60) > END - timedelta(days=20):
                return
            moved = self.w.between(last + timedelta(days=60), END - timedelta(days=20))
            last = moved
            if rng.random() < 0.3:
                self.city, self.postcode, _ = self.place()
            new = self.street_address(self.city, self.postcode)
            if rng.random() < 0.1:
                # Reported with a wrong date; the signed form arrives weeks later.
                said = moved + timedelta(days=rng.randint(5, 15))
                told = moved - timedelta(days=rng.randint(3, 10))
                self.w.episode(
                    "message",
                    self.w.office_time(told),
                    f"Call from {self.first}: moving to {new} on {long_day(said)}.",
                    "phone",
                    [val(self.id, "Customer", "address", new, said)],
                    session=self.session("phone", told),
                )
                form = said + timedelta(days=rng.randint(25, 60))
                if form <= END:
                    self.w.episode(
                        "document",
                        self.w.office_time(form),
                        f"Scanned change-of-address form signed by {self.name}: moved to "
                        f"{new} on {long_day(moved)}.",
                        "post",
                        [val(self.id, "Customer", "address", new, moved)],
                        session=self.session("post", form),
                    )
            else:
                told = moved + timedelta(days=rng.randint(-10, 15))
                told = max(told, self.since + timedelta(days=1))
                when = self.w.office_time(told)
                late = rng.random() < 0.15  # a branch's paper notes, typed in weeks later
                self.w.episode(
                    "message",
                    when,
                    rng.choice(
                        (
                            "E-mail from {first}: I have moved to {new} (since {d}). Please "
                            "update your records.",
                            "{name} called to give a new address from {d}: {new}.",
                            "Branch note: {name} has a new address, {new}, effective {d}.",
                        )
                    ).format(first=self.first, name=self.name, new=new, d=long_day(moved)),
                    "email",
                    [val(self.id, "Customer", "address", new, moved)],
                    session=self.session("email", told),
                    arrival=when + timedelta(days=rng.randint(7, 30)) if late else None,
                )
            self.address = new

    def tier_review(self) -> None:
        if self.since >= date(2024, 10, 1):
            return
        active = [p for p in self.policies if p.status_on(TIER_REVIEW) == "active"]
        total = sum(p.premium for p in active)
        arrears = any(
            s == "lapsed" and d < TIER_REVIEW for p in self.policies for d, s in p.statuses
        )
        if arrears:
            new = "standard"
        elif total > 2200 or len(active) >= 3:
            new = "platinum"
        elif len(active) >= 2:
            new = "gold"
        elif total > 700 or self.tier == "silver":
            new = "silver"
        else:
            new = "standard"
        if new != self.tier:
            self.w.episode(
                "event",
                at(TIER_REVIEW, 6, 0),
                f"Annual tier review 2025: {self.name} moves from {self.tier} to {new}.",
                "crm",
                [val(self.id, "Customer", "tier", new, TIER_REVIEW)],
            )
            self.tier = new

    def advisor_changes(self, khan_memo: list[tuple[str, str, str]]) -> None:
        for (d, adv), (_, before) in zip(self.advisors[1:], self.advisors, strict=False):
            accts = [a for a, opened in self.accounts if opened < d]
            if not accts or adv == before:
                continue
            if d == KHAN_LEAVES and before == "adv-khan":
                khan_memo.extend((a, adv, self.id) for a in accts)
                continue
            self.w.episode(
                "event",
                at(d, 7, 30),
                f"CRM: {self.name}'s accounts ({', '.join(accts)}) reassigned from "
                f"{ADVISOR[before].name} to {ADVISOR[adv].name} (portfolio balancing).",
                "crm",
                [rel(a, "Account", "managed_by", adv, "Advisor", d) for a in accts],
            )

    def chatter(self) -> None:
        """Messages that state no fact: most of what an insurer hears."""
        rng = self.rng
        for _ in range(rng.choices((0, 1, 2, 3), weights=(20, 35, 30, 15))[0]):
            d = self.w.between(self.since + timedelta(days=3), END)
            pol = rng.choice(self.policies)
            text = rng.choice(
                (
                    "E-mail from {first}: does {pid} cover {thing}? Replied with the clause "
                    "from the policy wording.",
                    "{name} asked for a copy of the schedule of {pid}; sent by e-mail.",
                    "Chat: {first} wanted to know when the next premium for {pid} is due.",
                    "{name} called about the renewal letter for {pid}; explained the "
                    "premium change.",
                    "Complaint: {first} waited 35 minutes on hold. Apologised and noted.",
                    "{first} asked whether we offer a multi-policy discount. Sent the brochure.",
                )
            ).format(first=self.first, name=self.name, pid=pol.id, thing=rng.choice(THINGS))
            channel = "chat" if text.startswith("Chat") else "email"
            self.w.episode(
                "message", self.w.office_time(d), text, channel, session=self.session(channel, d)
            )


def khan_leaves(w: World, memo: list[tuple[str, str, str]]) -> None:
    ep = w.episode(
        "document",
        at(KHAN_LEAVES, 8, 0),
        "Memo: Samira Khan leaves the Edinburgh branch on 14 April 2025. Her customers move "
        "to Daniel Lee, Giulia Rossi and Aoife Walsh from today; the account list per "
        "advisor follows in the CRM import.",
        "hr",
        [val("adv-khan", "Advisor", "status", "left", KHAN_LEAVES)],
        episode_id="ep-khan-leaves",
    )
    by_advisor: dict[str, list[str]] = {}
    for acct, adv, _ in memo:
        by_advisor.setdefault(adv, []).append(acct)
    for adv in sorted(by_advisor):
        accts = sorted(by_advisor[adv])
        for i in range(0, len(accts), 100):
            w.facts(
                ep,
                [
                    rel(a, "Account", "managed_by", adv, "Advisor", KHAN_LEAVES)
                    for a in accts[i : i + 100]
                ],
                at(KHAN_LEAVES, 8, 30),
            )


# -- output ----------------------------------------------------------------------------------
def build() -> list[dict[str, Any]]:
    w = World(random.Random(SEED))
    advisors(w)
    memo: list[tuple[str, str, str]] = []
    ada(w, memo)
    ben(w)
    for idx in range(1, CUSTOMERS + 1):
        Customer(w, idx).story(memo)
    khan_leaves(w, memo)
    ordered = sorted(w.lines, key=lambda x: (x.received, x.seq))
    n = 0
    for line in ordered:
        if isinstance(line, Episode) and line.episode_id is None:
            n += 1
            line.episode_id = f"ep-{n:05d}"
    return [body(line) for line in ordered]


def body(line: Episode | FactsLine) -> dict[str, Any]:
    if isinstance(line, FactsLine):
        assert line.episode.episode_id is not None
        out: dict[str, Any] = {
            "facts": [{**f, "source_episode_id": line.episode.episode_id} for f in line.facts]
        }
        if line.conflict_policy is not None:
            out["conflict_policy"] = line.conflict_policy
        return out
    out = {
        "episode_id": line.episode_id,
        "kind": line.kind,
        "source": line.source,
        "occurred_at": stamp(line.occurred_at),
    }
    if line.session_id is not None:
        out["session_id"] = line.session_id
    out["content"] = line.content
    out["extract"] = "none"
    if line.facts:
        out["facts"] = line.facts
    return out


def check(bodies: list[dict[str, Any]]) -> None:
    """Every line valid for the API and the schema, and no same-start conflict left to a
    policy that would refuse it: the file loads without a single refused line."""
    schema = load_schema(HERE / "schema.json")
    occurred: dict[str, datetime] = {}
    starts: dict[tuple[str, ...], dict[datetime, str]] = {}
    for n, b in enumerate(bodies, 1):
        if "episode_id" in b:
            ep = EpisodeCreate.model_validate(b)
            assert ep.episode_id is not None
            if ep.episode_id in occurred:
                raise ValueError(f"line {n}: episode {ep.episode_id} repeated")
            occurred[ep.episode_id] = ep.occurred_at
            deltas = [
                d.model_copy(update={"source_episode_id": ep.episode_id}) for d in ep.facts or []
            ]
            policy = "reject"
        else:
            deltas = [MemoryDelta.model_validate(f) for f in b["facts"]]
            policy = b.get("conflict_policy", "reject")
        for d in deltas:
            assert d.source_episode_id is not None
            if d.source_episode_id not in occurred:
                raise ValueError(f"line {n}: episode {d.source_episode_id} not stated before")
            c = check_delta(schema, d, index=None, default_valid_from=occurred[d.source_episode_id])
            if not isinstance(c, CheckedFact):
                raise ValueError(f"line {n}: {c}")
            statement = json.dumps([c.value, c.object])
            key: tuple[str, ...] = (c.subject, c.predicate)
            if c.cardinality.value == "many":
                key += (statement,)
            seen = starts.setdefault(key, {})
            prior = seen.get(c.valid_from)
            if prior is not None and prior != statement and policy == "reject":
                raise ValueError(f"line {n}: {key} has two values from {c.valid_from}")
            seen[c.valid_from] = statement


def lines() -> Iterator[str]:
    bodies = build()
    check(bodies)
    for b in bodies:
        yield json.dumps(b, ensure_ascii=False, separators=(",", ":")) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Write the insurance example's episodes.jsonl")
    p.add_argument("--out", type=Path, default=HERE / "episodes.jsonl")
    args = p.parse_args(argv)
    with args.out.open("w", encoding="utf-8", newline="\n") as f:
        f.writelines(lines())
    return 0


if __name__ == "__main__":
    sys.exit(main())
