-- API.md "Sessions and the account": DELETE /api/me removes an account in one transaction,
-- except a post under which someone else has posted, which stays as a tombstone owned by
-- the reserved user `deleted` so that the others' posts keep their place.

ALTER TABLE posts ADD COLUMN deleted boolean NOT NULL DEFAULT false;

-- The username `deleted` is the reserved user's (made by the first account deletion, see
-- Sources/PostsServer/Account/ReservedUser.swift); no one may take it from now on, and a
-- profile that has it already gives it up.
UPDATE profiles SET username = 'deleted_' || user_id WHERE lower(username) = 'deleted';

-- The sessions list reads a user's live tokens newest first.
CREATE INDEX tokens_user_created_idx ON tokens (user_id, created_at DESC, id DESC) WHERE revoked_at IS NULL;
