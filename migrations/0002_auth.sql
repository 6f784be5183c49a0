-- Email-code sign-in (API.md "Auth and profiles"): codes and tokens are stored only as
-- SHA-256 hashes; messages wait in an outbox for whatever mailer delivers them.

CREATE TABLE login_codes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL CHECK (email = lower(email)),
    -- sha256 of "email:code": the code itself is never stored.
    code_hash bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    attempts int NOT NULL DEFAULT 0,
    used_at timestamptz
);
-- The live codes of an address, and how many it was sent in the last hour.
CREATE INDEX login_codes_email_created_idx ON login_codes (email, created_at DESC);

CREATE TABLE outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recipient text NOT NULL,
    subject text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz
);
-- A mailer takes what is unsent, oldest first; the dev mailbox reads one address, newest first.
CREATE INDEX outbox_unsent_idx ON outbox (created_at) WHERE sent_at IS NULL;
CREATE INDEX outbox_recipient_created_idx ON outbox (recipient, created_at DESC, id DESC);

CREATE TABLE tokens (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- sha256 of the token's text: resolving a bearer token is one lookup in this index.
    token_hash bytea NOT NULL UNIQUE,
    user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    device_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX tokens_user_idx ON tokens (user_id);
