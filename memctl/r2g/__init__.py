"""Raw conversations → memory graph, by rules (seed 001 §4.x R2G-0…8): the parts that need no storage.

sentences (split with exact spans) · lang · timenorm (relative times → ISO 8601 + granularity) · predicates
(lexicon → predicate.normalized) · nlp_zh / nlp_en (entities and semantic roles) · preferences · extract (one
sentence → entities, facts, preferences, concepts, keywords, times; Episode summary and importance) · linking
(SAME_AS, SIMILAR_TO decisions) · evaluation (precision/recall against tests/r2g/gold*.yaml).
"""
