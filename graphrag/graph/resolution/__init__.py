"""Entity resolution: a base's per-document entities joined to resolved entities, explained.

`name_match` compares two names, `rules` turns the evidence of a pair into a decision,
`judge` asks the LLM about the pairs the rules leave open, `store` reads and writes the
resolution in Neo4j, `resolver` runs it for one document and `admin` is the audit, merge and
split an administrator uses.
"""
