-- Indexes for two kinds of upkeep: change filters walked in key order, and the background
-- pruning of sign-in codes, mail, sessions and idempotency keys (see CHANGELOG.md).

-- `parent_id=root` on /api/changes: a btree walked for `parent_id IS NULL` does not hand
-- rows back in (txid, position) order (only an equality does), so PostgreSQL read every root
-- change after the cursor and sorted them. Roots get a partial index of their own in key
-- order, and leave the parent index, which then costs writes no more than before. The same
-- for the rare reparent of a root (`old_parent_id IS NULL`). See ChangeFilter.branches.
DROP INDEX changes_parent_idx;
CREATE INDEX changes_parent_idx ON changes (parent_id, txid, position) WHERE parent_id IS NOT NULL;
CREATE INDEX changes_root_idx ON changes (txid, position) WHERE parent_id IS NULL AND post_id IS NOT NULL;
CREATE INDEX changes_old_root_idx ON changes (txid, position) WHERE reparented AND old_parent_id IS NULL;

-- The pruner deletes in short batches found through these, oldest first, so that no batch
-- reads a whole table. (idempotency_keys has its created_at index since 0003.)
CREATE INDEX login_codes_created_idx ON login_codes (created_at);
CREATE INDEX outbox_created_idx ON outbox (created_at);
CREATE INDEX tokens_revoked_idx ON tokens (revoked_at) WHERE revoked_at IS NOT NULL;
-- Written at most once a minute per token (Tokens.caller), so its upkeep is small.
CREATE INDEX tokens_last_used_idx ON tokens (last_used_at) WHERE revoked_at IS NULL;
