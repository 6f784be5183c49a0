-- The built-in mailer (API.md "Sign-in mail (SMTP)"). The existing columns keep their
-- meaning, so an external mailer still works as before: it sends what has no `sent_at`
-- and sets it. The columns added here are the built-in mailer's bookkeeping:
--   attempts         tries so far (a try counts when it is claimed, before it is sent)
--   next_attempt_at  when the row may be tried (again): a claim pushes it forward as a
--                    lease, so a mailer that dies mid-send gives the row back by itself
--   failed_at        given up: a 5xx reply, or still undelivered at 15 minutes old
--   last_error       why the last try failed (the SMTP reply or the transport error)
--   message_id       the Message-ID header, fixed at the first try so retries carry the same
ALTER TABLE outbox
    ADD COLUMN attempts int NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN failed_at timestamptz,
    ADD COLUMN last_error text,
    ADD COLUMN message_id text;

-- What is still to deliver, oldest first: claims, the queue depth and the oldest's age.
DROP INDEX outbox_unsent_idx;
CREATE INDEX outbox_unsent_idx ON outbox (created_at, id) WHERE sent_at IS NULL AND failed_at IS NULL;
