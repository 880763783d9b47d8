"""An independent OpenID Federation 1.0 metadata policy engine (merge + apply).

Written from the specification text (section 6.1, "Metadata Policy"), not from the Swift
code, so the interop tests can compare the server's resolved metadata with a second opinion.
It is checked against the public metadata policy test vectors in test_policy_engine.py.

Only the standard operators are implemented: value, add, default, one_of, subset_of,
superset_of, essential.  Unknown operators raise PolicyError (the spec says an unknown
operator that is not listed in the statement's `metadata_policy_crit` is ignored; critical
ones make the chain invalid — the demo uses neither).
"""
from __future__ import annotations

import copy
from typing import Any

OPERATOR_ORDER = ["value", "add", "default", "one_of", "subset_of", "superset_of", "essential"]


class PolicyError(Exception):
    """The policy itself is invalid (merge or operator combination)."""


class MetadataError(Exception):
    """The metadata does not satisfy the policy."""


def _as_list(v: Any) -> list:
    return v if isinstance(v, list) else [v]


def _key(v: Any) -> str:
    import json

    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def _set_equal(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return {_key(x) for x in a} == {_key(x) for x in b}
    return _key(a) == _key(b)


def _contains_all(container: list, items: list) -> bool:
    keys = {_key(x) for x in container}
    return all(_key(x) in keys for x in items)


def _union(a: list, b: list) -> list:
    out = list(a)
    keys = {_key(x) for x in out}
    for x in b:
        if _key(x) not in keys:
            out.append(x)
            keys.add(_key(x))
    return out


def _intersection(a: list, b: list) -> list:
    keys = {_key(x) for x in b}
    return [x for x in a if _key(x) in keys]


# ---------------------------------------------------------------------------- merge


def _merge_operator(name: str, param: str, sup: Any, sub: Any) -> Any:
    if name == "value":
        if not _set_equal(sup, sub):
            raise PolicyError(f"{param}: value mismatch {sup!r} vs {sub!r}")
        return sup
    if name == "default":
        if not _set_equal(sup, sub):
            raise PolicyError(f"{param}: default mismatch {sup!r} vs {sub!r}")
        return sup
    if name == "add":
        return _union(_as_list(sup), _as_list(sub))
    if name == "superset_of":
        return _union(sup, sub)
    if name == "subset_of":
        return _intersection(sup, sub)
    if name == "one_of":
        r = _intersection(sup, sub)
        if not r:
            raise PolicyError(f"{param}: one_of intersection is empty")
        return r
    if name == "essential":
        return bool(sup) or bool(sub)
    raise PolicyError(f"{param}: unknown operator {name}")


def check_combination(param: str, ops: dict) -> None:
    """Checks that the operators of one parameter's policy can be used together."""
    for name in ops:
        if name not in OPERATOR_ORDER:
            raise PolicyError(f"{param}: unknown operator {name}")
    if "value" in ops:
        v = ops["value"]
        if v is None:
            # value null removes the parameter: only essential=false may accompany it.
            others = set(ops) - {"value", "essential"}
            if others:
                raise PolicyError(f"{param}: value null combined with {sorted(others)}")
            if ops.get("essential") is True:
                raise PolicyError(f"{param}: value null with essential true")
        else:
            if "add" in ops and not _contains_all(_as_list(v), _as_list(ops["add"])):
                raise PolicyError(f"{param}: value is not a superset of add")
            if "one_of" in ops and not _contains_all(ops["one_of"], [v]):
                raise PolicyError(f"{param}: value is not one of one_of")
            if "subset_of" in ops and not _contains_all(ops["subset_of"], _as_list(v)):
                raise PolicyError(f"{param}: value is not a subset of subset_of")
            if "superset_of" in ops and not _contains_all(_as_list(v), ops["superset_of"]):
                raise PolicyError(f"{param}: value is not a superset of superset_of")
    if "add" in ops:
        if "one_of" in ops:
            raise PolicyError(f"{param}: add combined with one_of")
        if "subset_of" in ops and not _contains_all(ops["subset_of"], _as_list(ops["add"])):
            raise PolicyError(f"{param}: add is not a subset of subset_of")
    if "one_of" in ops:
        if "subset_of" in ops or "superset_of" in ops:
            raise PolicyError(f"{param}: one_of combined with subset_of/superset_of")
    if "subset_of" in ops and "superset_of" in ops:
        if not _contains_all(ops["subset_of"], ops["superset_of"]):
            raise PolicyError(f"{param}: subset_of is not a superset of superset_of")


def merge_entity_type_policies(superior: dict, subordinate: dict) -> dict:
    """Merges two policies for one entity type ({param: {op: operand}})."""
    merged = copy.deepcopy(superior)
    for param, ops in subordinate.items():
        target = merged.setdefault(param, {})
        for name, operand in ops.items():
            if name in target:
                target[name] = _merge_operator(name, param, target[name], operand)
            else:
                target[name] = copy.deepcopy(operand)
    for param, ops in merged.items():
        check_combination(param, ops)
    return merged


def merge_policies(policies: list[dict]) -> dict:
    """Merges metadata_policy objects ordered from the Trust Anchor down to the immediate superior."""
    result: dict = {}
    for pol in policies:
        for etype, tpol in (pol or {}).items():
            if etype in result:
                result[etype] = merge_entity_type_policies(result[etype], tpol)
            else:
                for param, ops in tpol.items():
                    check_combination(param, ops)
                result[etype] = copy.deepcopy(tpol)
    return result


# ---------------------------------------------------------------------------- apply


def apply_entity_type_policy(policy: dict, metadata: dict) -> dict:
    md = copy.deepcopy(metadata)
    for param, ops in policy.items():
        for name in OPERATOR_ORDER:
            if name not in ops:
                continue
            operand = ops[name]
            present = param in md
            if name == "value":
                if operand is None:
                    md.pop(param, None)
                else:
                    md[param] = copy.deepcopy(operand)
            elif name == "add":
                md[param] = _union(_as_list(md[param]), _as_list(operand)) if present else copy.deepcopy(_as_list(operand))
            elif name == "default":
                if not present:
                    md[param] = copy.deepcopy(operand)
            elif name == "one_of":
                if present and not _contains_all(operand, [md[param]]):
                    raise MetadataError(f"{param}: {md[param]!r} is not one of {operand!r}")
            elif name == "subset_of":
                if present:
                    md[param] = _intersection(_as_list(md[param]), operand)
            elif name == "superset_of":
                if present and not _contains_all(_as_list(md[param]), operand):
                    raise MetadataError(f"{param}: {md[param]!r} is not a superset of {operand!r}")
            elif name == "essential":
                if operand is True and param not in md:
                    raise MetadataError(f"{param}: essential parameter is missing")
    return md


def apply_policy(policy: dict, metadata: dict) -> dict:
    """Applies a merged metadata_policy ({entity_type: {...}}) to a metadata object."""
    out = {}
    for etype, md in metadata.items():
        out[etype] = apply_entity_type_policy(policy.get(etype, {}), md) if etype in policy else copy.deepcopy(md)
    return out
