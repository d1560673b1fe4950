"""Facts that change (seed 001 §7.1, §7.2; issue 19): the versions of one subject's slot form a chain.

A slot Fact (memctl/r2g/slots.py → emit.py `_slot_fact`, or `memctl fact add`) is one claim: subject, slot,
value, polarity. Every claim about one subject's slot belongs to one chain, keyed `<subject entity key>|<slot>`;
the chain says which claim holds now, which held when, and which contradict each other:

    versions.py   a claim as the chain sees it (its value, kind, polarity, world times, source) and the chain key
    timeline.py   the chain recomputed from its claims alone: order, periods, states, in force, conflicts
    priority.py   prio = a·source_trust + b·recency + c·evidence_support + d·consistency (settings `facts.*`)
    maintain.py   the chains a write touched, recomputed and written into the same store batch (all or nothing)
    tables.py     the store tables: facts.chain (members in chain order), facts.review (the queue),
                  facts.decision (`fact resolve`), facts.audit (who changed what was in force, and when)
    events.py     ConflictDetected / FactPromoted / FactDemoted, handed to the event log
    claims.py     a claim asserted by hand (`memctl fact add`) or by an agent (structured JSONL)
    api.py        Facts: add, list, show, history, review, resolve, audit (Memory.facts)
"""
