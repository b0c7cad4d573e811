"""The Cypher template loader: headers and parameters are checked before any query runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graph.errors import TemplateError
from graph.stores.neo4j.templates import (
    CYPHER_DIR,
    is_fragment,
    load_fragments,
    load_templates,
    parse_template,
    require,
    template_dir,
)

GOOD = """// name: facts.demo
// params: tenant_id, subject
// mode: read
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $subject})
RETURN e
"""


def write(tmp_path: Path, text: str, name: str = "demo.cypher") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_template_is_parsed(tmp_path: Path) -> None:
    t = parse_template(write(tmp_path, GOOD))
    assert t.name == "facts.demo"
    assert t.mode == "read"
    assert t.params == {"tenant_id", "subject"}
    assert t.text.startswith("MATCH (e:Entity")
    assert t.statement_params == (frozenset({"tenant_id", "subject"}),)


def test_undeclared_parameter_is_refused_naming_file_and_parameter(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("$subject", "$subjekt"), "typo.cypher")
    with pytest.raises(TemplateError) as e:
        parse_template(path)
    assert "typo.cypher" in str(e.value)
    assert "undeclared parameter(s): subjekt" in str(e.value)


def test_unused_parameter_is_refused_naming_it(tmp_path: Path) -> None:
    header = "// params: tenant_id, subject"
    path = write(tmp_path, GOOD.replace(header, header + ", limit"))
    with pytest.raises(TemplateError, match=r"demo\.cypher: .*unused parameter\(s\): limit"):
        parse_template(path)


def test_parameters_in_strings_and_comments_do_not_count(tmp_path: Path) -> None:
    text = GOOD.replace(
        "RETURN e",
        "// $ghost in a comment\nRETURN e, '$not_a_param' AS s, \"$nor_this\" AS d",
    )
    assert parse_template(write(tmp_path, text)).params == {"tenant_id", "subject"}
    # ...so declaring one that only appears in a comment is an unused parameter.
    declared = text.replace("params: tenant_id, subject", "params: tenant_id, subject, ghost")
    with pytest.raises(TemplateError, match="unused parameter\\(s\\): ghost"):
        parse_template(write(tmp_path, declared))


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("// params: tenant_id, subject\n// mode: read\n", "missing header field(s): name"),
        ("// name: facts.demo\n// mode: read\n", "missing header field(s): params"),
        ("// name: facts.demo\n// params: tenant_id, subject\n", "missing header field(s): mode"),
        (
            "// name: facts.demo\n// params: tenant_id, subject\n// mode: sideways\n",
            "mode must be read or write, not 'sideways'",
        ),
        (
            "// name: Facts Demo\n// params: tenant_id, subject\n// mode: read\n",
            "bad template name 'Facts Demo'",
        ),
        (
            "// name: facts.demo\n// name: facts.other\n"
            "// params: tenant_id, subject\n// mode: read\n",
            "header field 'name' given twice",
        ),
        (
            "// name: facts.demo\n// params: tenant_id, subject, subject\n// mode: read\n",
            "parameter(s) declared twice: subject",
        ),
        (
            "// name: facts.demo\n// params: tenant_id, sub-ject\n// mode: read\n",
            "bad parameter name 'sub-ject'",
        ),
        (
            "// name: facts.demo\n// params: tenant_id, subject\n// mode: read\n// route: x\n",
            "unknown header field 'route'",
        ),
    ],
)
def test_bad_headers_are_refused(tmp_path: Path, header: str, reason: str) -> None:
    body = GOOD.split("// mode: read\n", 1)[1]
    with pytest.raises(TemplateError) as e:
        parse_template(write(tmp_path, header + body, "bad.cypher"))
    assert str(e.value).startswith(f"bad.cypher: {reason}")


def test_empty_body_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="no body"):
        parse_template(write(tmp_path, "// name: x\n// params:\n// mode: read\n"))


def test_a_read_template_must_not_write(tmp_path: Path) -> None:
    text = GOOD.replace("RETURN e", "SET e.touched = true RETURN e")
    with pytest.raises(TemplateError, match=r"facts\.demo is declared read but writes \(SET\)"):
        parse_template(write(tmp_path, text))
    # The same body is fine as a write template.
    as_write = text.replace("mode: read", "mode: write")
    assert parse_template(write(tmp_path, as_write)).mode == "write"


def test_statements_split_on_semicolons_with_their_own_parameters(tmp_path: Path) -> None:
    text = (
        "// name: schema.demo\n// params: dim\n// mode: write\n"
        "CREATE INDEX a IF NOT EXISTS FOR (n:A) ON (n.x);\n"
        "// a comment; with a semicolon\n"
        "CREATE VECTOR INDEX b IF NOT EXISTS FOR (n:B) ON (n.e) "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dim}};\n"
    )
    t = parse_template(write(tmp_path, text))
    assert len(t.statements) == 2
    assert t.statement_params == (frozenset(), frozenset({"dim"}))
    with pytest.raises(TemplateError, match="holds 2 statements"):
        _ = t.text


def test_duplicate_names_across_files_are_refused(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "a.cypher")
    write(tmp_path, GOOD, "b.cypher")
    with pytest.raises(TemplateError, match=r"'facts\.demo' is also used by a\.cypher"):
        load_templates(tmp_path)


def test_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match=r"no \.cypher templates"):
        load_templates(tmp_path)


def test_every_real_template_loads() -> None:
    templates = load_templates()
    files = [p for p in sorted(CYPHER_DIR.glob("*.cypher")) if not is_fragment(p)]
    assert len(templates) == len(files) >= 25
    for name in (
        "schema.setup",
        "facts.by_subject",
        "facts.history",
        "graph.hop",
        "ledger.lock_timelines",
        "ledger.write_batch",
        "ledger.delete_episode_data",
        "tenant.purge",
    ):
        assert name in templates
    assert templates["facts.by_subject"].mode == "read"
    assert templates["ledger.write_batch"].params == {
        "tenant_id",
        "entities",
        "retire",
        "retired_at",
        "lock_entities",
        "values",
        "relations",
        "literals",
        "assertions",
        "episodes",
        "mentions",
    }


def test_every_ledger_template_is_run_by_the_store() -> None:
    """A ledger template the store does not run is dead text that no test exercises (a
    tenant-filter mutant of it survives every test): none may be left behind."""
    from graph.stores.neo4j.store import TEMPLATES

    ledger = {n for n in load_templates() if n.startswith("ledger.")}
    assert ledger - TEMPLATES == set()
    assert {"ledger.write_batch", "ledger.lock_timelines"} <= ledger


def test_real_templates_never_format_values_into_text() -> None:
    """Every value is a $parameter: no Python format fields, no string concatenation
    building Cypher, and writes are batched with UNWIND."""
    for t in load_templates().values():
        for statement in t.statements:
            assert not re.search(r"\{[a-z_]+\}", statement.replace("{}", "")), t.name
        if t.name.startswith("ledger.") and t.mode == "write" and "rows" in t.params:
            assert all("UNWIND $rows" in s for s in t.statements), t.name


# -- fragments ------------------------------------------------------------------------------
FRAGMENT = """// fragment: demo_projection
// A comment of the fragment's own.
RETURN e {.*, name: toString(e.name)} AS entity
"""
USES = """// name: facts.uses
// params: tenant_id, subject
// mode: read
MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $subject})
// include: demo_projection
ORDER BY e.name
"""


def test_an_include_splices_the_fragment_in_place(tmp_path: Path) -> None:
    write(tmp_path, FRAGMENT, "_demo_projection.cypher")
    t = parse_template(write(tmp_path, USES, "uses.cypher"))
    assert t.includes == {"demo_projection"}
    lines = [line for line in t.text.splitlines() if not line.startswith("//")]
    assert lines == [
        "MATCH (e:Entity {tenant_id: $tenant_id, entity_id: $subject})",
        "RETURN e {.*, name: toString(e.name)} AS entity",
        "ORDER BY e.name",
    ]
    # A folder's fragments are not templates.
    assert list(load_templates(tmp_path)) == ["facts.uses"]
    assert list(load_fragments(tmp_path)) == ["demo_projection"]


def test_a_fragment_may_open_the_body(tmp_path: Path) -> None:
    write(tmp_path, "// fragment: whole\nMATCH (e:Entity {tenant_id: $tenant_id}) RETURN e\n")
    text = "// name: x.whole\n// params: tenant_id\n// mode: read\n// include: whole\n"
    t = parse_template(write(tmp_path, text, "whole.cypher"))
    assert t.text == "MATCH (e:Entity {tenant_id: $tenant_id}) RETURN e"


def test_an_unknown_fragment_is_refused_naming_it(tmp_path: Path) -> None:
    write(tmp_path, FRAGMENT, "_demo_projection.cypher")
    path = write(tmp_path, USES.replace("demo_projection", "demo_projektion"), "typo.cypher")
    with pytest.raises(TemplateError) as e:
        parse_template(path)
    assert str(e.value) == (
        "typo.cypher: unknown fragment 'demo_projektion' in '// include:' (known: demo_projection)"
    )
    with pytest.raises(TemplateError, match="unknown fragment 'demo_projektion'"):
        load_templates(tmp_path)


def test_parameters_are_checked_after_splicing(tmp_path: Path) -> None:
    write(tmp_path, FRAGMENT.replace("toString(e.name)", "$label"), "_demo_projection.cypher")
    path = write(tmp_path, USES, "uses.cypher")
    with pytest.raises(TemplateError, match=r"facts\.uses uses undeclared parameter\(s\): label"):
        parse_template(path)
    declared = USES.replace("params: tenant_id, subject", "params: tenant_id, subject, label")
    assert parse_template(write(tmp_path, declared, "uses.cypher")).params == {
        "tenant_id",
        "subject",
        "label",
    }
    # ...and a fragment that writes makes a read template refuse to load.
    writes = FRAGMENT.replace("RETURN", "SET e.seen = true RETURN")
    write(tmp_path, writes, "_demo_projection.cypher")
    with pytest.raises(TemplateError, match=r"facts\.uses is declared read but writes \(SET\)"):
        parse_template(write(tmp_path, USES, "uses.cypher"))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("// fragment: Bad Name\nRETURN 1\n", "bad fragment name 'Bad Name'"),
        ("// fragment: empty\n// only a comment\n", "fragment 'empty' has no body"),
        (
            "// fragment: nested\n// include: other\nRETURN 1\n",
            "fragment 'nested' includes another; fragments do not nest",
        ),
    ],
)
def test_bad_fragments_are_refused(tmp_path: Path, text: str, reason: str) -> None:
    write(tmp_path, text, "_bad.cypher")
    write(tmp_path, GOOD)
    with pytest.raises(TemplateError) as e:
        load_templates(tmp_path)
    assert str(e.value) == f"_bad.cypher: {reason}"


def test_a_fragment_name_defined_twice_is_refused(tmp_path: Path) -> None:
    write(tmp_path, FRAGMENT, "_a.cypher")
    write(tmp_path, FRAGMENT, "_b.cypher")
    with pytest.raises(TemplateError, match=r"'demo_projection' is also defined in _a\.cypher"):
        load_fragments(tmp_path)


def test_each_projection_is_written_once() -> None:
    """The fact projections live in their fragments only, and every fragment is used."""
    fragments = load_fragments(CYPHER_DIR)
    assert {"fact_projection", "fact_fields"} <= fragments.keys()
    templates = load_templates()
    used = {name for t in templates.values() for name in t.includes}
    assert used == fragments.keys()
    for path in CYPHER_DIR.glob("*.cypher"):
        if not is_fragment(path):
            text = path.read_text(encoding="utf-8")
            assert "toString(r.valid_from)" not in text, path.name
            assert ".retention_policy, .cardinality}" not in text, path.name
    by_fact = {n for n, t in templates.items() if "fact_projection" in t.includes}
    assert {"facts.by_subject", "facts.history", "graph.hop", "ledger.current_versions"} <= by_fact
    by_fields = {n for n, t in templates.items() if "fact_fields" in t.includes}
    assert {"search.facts_by_id", "search.facts_touching"} <= by_fields


def test_the_store_finds_every_template_it_runs() -> None:
    from graph.stores.neo4j.store import TEMPLATES

    templates = load_templates()
    require(templates, TEMPLATES)
    reads = {n for n in TEMPLATES if templates[n].mode == "read"}
    assert {"facts.by_subject", "facts.history", "graph.hop", "ledger.current_versions"} <= reads
    with pytest.raises(TemplateError, match=r"missing Cypher template\(s\): facts\.nope"):
        require(templates, {*TEMPLATES, "facts.nope"})


def test_an_installed_copy_is_found_through_sgam_cypher_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, GOOD)
    monkeypatch.setenv("SGAM_CYPHER_DIR", str(tmp_path))
    assert template_dir() == tmp_path
    assert list(load_templates()) == ["facts.demo"]


def test_the_templates_ship_as_package_data() -> None:
    import tomllib

    from graph.stores.neo4j.templates import CYPHER_DIR

    config = tomllib.loads((CYPHER_DIR.parent / "pyproject.toml").read_text())
    assert "cypher" in config["tool"]["setuptools"]["packages"]
    assert config["tool"]["setuptools"]["package-data"]["cypher"] == ["*.cypher"]
    assert len(list(CYPHER_DIR.glob("*.cypher"))) >= 30
