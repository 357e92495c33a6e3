"""The shape of a JSON record kltrans reads back (a lineage, an experiment), checked
against a JSON Schema with the ``jsonschema`` package: the first problem, in document
order, as 'where: what' (``runs[3].final: 'evaluations' is a required property``)."""

from __future__ import annotations


def schema_problem(schema: dict, doc) -> str | None:
    """What keeps ``doc`` from matching ``schema``, or None."""
    from jsonschema import Draft202012Validator

    errors = list(Draft202012Validator(schema).iter_errors(doc))
    if not errors:
        return None
    e = min(errors, key=lambda e: [str(p) for p in e.absolute_path])
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e.absolute_path)
    return f"{where.lstrip('.') or 'the file'}: {e.message}"
