"""Two-phase capture of single-page apps (phase `initial` at load, `post_interaction` after an
action) and supersession of stale content. Sits above `crawl` and `ingest`; its capture paths
arrive with the SPA work, the chunk payload fields they use (`phase`, `trigger_action`, `scope`,
`superseded_by`) are already part of `retrieval.Chunk`."""

__all__: list[str] = []
