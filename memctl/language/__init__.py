"""What memctl knows about the languages it reads (English and Chinese), shared by R2G and recall.

timenorm (time expressions → ISO 8601 with a granularity, and the days a value covers) · lexicon (the shipped
word lists: aliases, gazetteer, word classes, sentiment) · question_words (question phrasing, which recall
leaves out of a query's keywords). R2G builds the graph with them and recall reads
queries with them; neither package imports the other's code, so what both use lives here. Analysis only R2G
needs (sentences, entities and roles, predicates) stays in memctl.r2g.
"""
