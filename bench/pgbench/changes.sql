-- GET /api/changes?since=<txid,position>&limit=100 — ChangeReader.page(after:filter:limit:): the
-- page below the horizon, then isRetained's check (two statements, as the server sends them).
-- Variables: txid and position, decoded from the `since` token by bench/results.sh.
SELECT c.*, h.horizon FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon) h
LEFT JOIN LATERAL (
    SELECT c.txid::text::bigint AS txid, c.position, c.type, c.at, c.post_id, c.parent_id, c.old_parent_id,
           c.reparented, c.user_id, c.data::text AS data
    FROM changes c WHERE c.txid < pg_snapshot_xmin(pg_current_snapshot())
      AND (c.txid, c.position) > (:txid::xid8, :position)
    ORDER BY c.txid, c.position LIMIT 101
) c ON true
ORDER BY c.txid, c.position;
SELECT (SELECT txid::text::bigint FROM changes_pruned) AS pruned_txid,
       (SELECT position FROM changes_pruned) AS pruned_position,
       pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon;
