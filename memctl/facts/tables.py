"""The store tables of the fact chains (MANIFEST.spec, "Fact chains"; since format version 5).

    facts.chain     chain key → {"entries": [[version key, valid_since], …] in chain order (a version that
                    comes back appears again), "claims": [keys of the chain's claims that are no version],
                    "contradicts": [[key, key, dimension], …], "in_force": [version keys], "reviews": [[key in
                    force, challenger key], …]}: how a write finds a chain, the edges and reviews it wrote,
                    without a scan
    facts.review    "<chain key>/<key in force>/<challenger key>" → {"chain", "versions", "dimension",
                    "terms": {key: prio terms}, "margin", "since"}: the review queue (contested pairs)
    facts.decision  version key → {"decision": "keep" | "reject", "at", "by"}: `fact resolve`
    facts.audit     chain key → [{"at", "by", "fact", "from", "to"}, …]: the last AUDIT_KEPT changes of state
"""

from __future__ import annotations

CHAIN_TABLE = "facts.chain"
REVIEW_TABLE = "facts.review"
DECISION_TABLE = "facts.decision"
AUDIT_TABLE = "facts.audit"
AUDIT_KEPT = 64
REVIEW_SEPARATOR = "/"


def review_key(chain: str, versions) -> str:
    return REVIEW_SEPARATOR.join((chain, *versions))


def chain_record(timeline, claims: list) -> dict:
    from memctl.facts.versions import iso

    return {"entries": [[entry.key, iso(entry.since)] for entry in timeline.entries], "claims": sorted(claims),
            "contradicts": [[*pair, dimension] for pair, dimension in sorted(timeline.contradicts.items())],
            "in_force": list(timeline.in_force), "reviews": [list(pair) for pair in sorted(timeline.reviews)]}


def members(record: dict | None) -> list:
    """Every claim of a stored chain record, versions first (in chain order, each once)."""
    if not record:
        return []
    return list(dict.fromkeys([entry[0] for entry in record["entries"]] + list(record["claims"])))
