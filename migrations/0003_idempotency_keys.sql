-- API.md "Retries": a create retried with the same Idempotency-Key by the same user within
-- 24 hours gets the first answer again. The key is stored in the same transaction as the
-- row it created, so it survives restarts and never outlives a rolled-back create.
CREATE TABLE idempotency_keys (
    user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    key text NOT NULL,
    -- sha256 of the request's method, path and fields: the same key with another body is 422.
    request_hash bytea NOT NULL,
    status int NOT NULL,
    response bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);
