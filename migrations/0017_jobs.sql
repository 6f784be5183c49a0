-- One durable job queue for all background work (see Sources/PostsServer/Jobs/JobQueue.swift):
-- sign-in mail, push deliveries and stored images to delete so far. A job is written by the
-- write that causes it, in that write's transaction, and claimed by any instance's job
-- runner with FOR UPDATE SKIP LOCKED (N instances never run the same job at once).
--
--   kind         what to do (`mail.send`, `push.deliver`, `storage.delete`, …): the Swift
--                `JobKind` of that name says how, how often to retry and for how long
--   payload      the kind's arguments, one JSON object (ids, never copies of rows)
--   state        `queued` (waiting, or due again after a failed try), `running` (claimed:
--                `run_at` is then its lease, and a runner that died gives it back when the
--                lease ends), `dead` (given up: its retry window passed, or a failure that
--                no retry can mend; kept a week for the operator, then pruned)
--   run_at       when it may be claimed (again)
--   attempts     tries so far (a try counts when it is claimed)
--   last_error   why the last try failed
--   finished_at  when it went dead
-- A job that succeeds is deleted: the table holds only work still to do and recent failures.
CREATE TABLE jobs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL,
    payload json NOT NULL,
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'dead')),
    run_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);
-- A kind's due jobs, oldest due first (the claim), and its depth and oldest age (metrics).
CREATE INDEX jobs_due_idx ON jobs (kind, run_at, id) WHERE state <> 'dead';
-- Dead jobs, oldest first, for the pruner.
CREATE INDEX jobs_dead_idx ON jobs (finished_at) WHERE state = 'dead';

-- The three queues this one replaces, with what was still pending in them: mail not yet
-- sent nor failed, pushes not yet delivered nor failed, stored images not yet deleted.
INSERT INTO jobs (kind, payload, run_at, attempts, last_error, created_at)
SELECT 'mail.send', json_build_object('outbox_id', id), next_attempt_at, attempts, last_error, created_at
FROM outbox WHERE sent_at IS NULL AND failed_at IS NULL ORDER BY id;

INSERT INTO jobs (kind, payload, run_at, attempts, last_error, created_at)
SELECT 'push.deliver', json_build_object('notification_id', notification_id, 'delivery_id', delivery_id),
       next_attempt_at, attempts, last_error, created_at
FROM push_outbox WHERE failed_at IS NULL ORDER BY id;

INSERT INTO jobs (kind, payload, run_at, attempts, last_error, created_at)
SELECT 'storage.delete', json_build_object('url', url), next_attempt_at, attempts, last_error, created_at
FROM storage_deletions ORDER BY id;

-- Images are queued for deletion by the writes that drop them (explicitly, in their own
-- transaction), no longer by triggers.
DROP TRIGGER posts_image_replaced ON posts;
DROP TRIGGER posts_image_deleted ON posts;
DROP TRIGGER profiles_avatar_replaced ON profiles;
DROP TRIGGER profiles_avatar_deleted ON profiles;
DROP FUNCTION queue_image_deletion();
DROP TABLE storage_deletions;

-- A notification's push is queued by the write that notifies (until then by the trigger of
-- migration 0015, which now writes a job).
DROP TABLE push_outbox;
CREATE OR REPLACE FUNCTION notifications_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO changes (type, user_id, recipient_id, data)
    SELECT 'notification', n.actor_id, n.recipient_id, notification_json(n) FROM new_notifications n ORDER BY n.id;
    IF current_setting('posts.push', true) = 'on' THEN
        INSERT INTO jobs (kind, payload)
        SELECT 'push.deliver', json_build_object('notification_id', id, 'delivery_id', gen_random_uuid())
        FROM new_notifications ORDER BY id;
    END IF;
    RETURN NULL;
END
$$;

-- The outbox keeps the messages and what an external mailer or the dev mailbox reads
-- (`sent_at`, `failed_at`, `message_id`); the built-in mailer's tries are its jobs'.
ALTER TABLE outbox DROP COLUMN attempts, DROP COLUMN next_attempt_at, DROP COLUMN last_error;
DROP INDEX outbox_unsent_idx;
CREATE INDEX outbox_unsent_idx ON outbox (created_at, id) WHERE sent_at IS NULL AND failed_at IS NULL;
