-- Sign in with Apple, Google or any OpenID Connect provider (API.md, issue 35): each
-- provider account a user signs in with, keyed as the provider keys it, (issuer, sub).
-- The email is what the provider said when the identity was linked (for the list the user
-- sees); an account's own email stays in users.
CREATE TABLE identities (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    issuer text NOT NULL,
    subject text NOT NULL,
    email text,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (issuer, subject)
);
CREATE INDEX identities_user_idx ON identities (user_id);
