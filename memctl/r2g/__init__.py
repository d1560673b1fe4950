"""Raw conversations → memory graph, by rules (seed 001 §4.x R2G-0…8): the parts that need no storage.

sentences (split with exact spans) · lang · predicates (lexicon → predicate.normalized) · nlp_zh / nlp_en
(entities and semantic roles) · preferences · extract (one sentence → entities, facts, preferences, concepts,
keywords, times; Episode summary and importance) · linking (SAME_AS, SIMILAR_TO decisions) · evaluation
(precision/recall against tests/r2g/gold*.yaml). Time normalisation and the lexicons are memctl.language's,
what a NodeIndex document holds memctl.node_documents': recall reads those too.
"""
