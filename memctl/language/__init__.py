"""What memctl knows about the languages it reads (English and Chinese), shared by R2G and recall.

timenorm (time expressions → ISO 8601 with a granularity, and the days a value covers) · lexicon (the shipped
word lists: aliases, gazetteer, word classes, sentiment) · question_words (question phrasing, which recall
leaves out of a query's keywords) · token_estimate (the token count ingest sizes chunks by and recall packs
cards by). R2G builds the graph with them and recall reads queries with them; neither package imports the
other's code (nor does recall import ingest's), so what both use lives here. Analysis only R2G needs
(sentences, entities and roles, predicates) stays in memctl.r2g.
"""
