-- The checks that a caller an instance remembers (its user, its token, its blocks and mutes
-- by version) is still the one the database has, so that a request need not look it up
-- again (`CallerCache`). One travels ahead of the request's first statement in the same
-- pipeline: when it raises, PostgreSQL skips that statement, and the instance reads the
-- caller afresh and runs the request again. Functions rather than SQL in Swift because
-- only a function can raise, and raising is what keeps the statement behind it from running.
--
-- Two functions, not one with optional arguments: `(p IS NULL OR …)` made PL/pgSQL plan its
-- query again at every call (custom plans beat the generic one), 44 µs a call against 8
-- (pg_stat_statements, pgbench, the bench data set).
--
-- Each raises SQLSTATE PC001 when the user is gone, suspended or has another
-- relations_version; by email (trust mode) when the email is no longer theirs; by token
-- when it is revoked, another user's, or not used since `p_used_after`: the caller passes
-- the time its last use is due to be written again (`Tokens.renewalSeconds`, shorter than
-- the lifetime), so that a token in use is renewed by the full lookup, and an expired one
-- refused by it.
CREATE FUNCTION caller_email_is_current(p_user bigint, p_email text, p_relations_version bigint) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
    current boolean;
BEGIN
    SELECT true INTO current FROM users u
    WHERE u.id = p_user AND u.email = p_email AND u.suspended_at IS NULL AND u.relations_version = p_relations_version;
    IF current IS NULL THEN
        RAISE EXCEPTION 'the caller changed since this instance looked it up' USING ERRCODE = 'PC001';
    END IF;
    RETURN true;
END
$$;

CREATE FUNCTION caller_token_is_current(p_user bigint, p_token bigint, p_relations_version bigint,
                                        p_used_after timestamptz) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
    current boolean;
BEGIN
    SELECT true INTO current FROM tokens t JOIN users u ON u.id = t.user_id
    WHERE t.id = p_token AND t.user_id = p_user AND t.revoked_at IS NULL AND t.last_used_at > p_used_after
      AND u.suspended_at IS NULL AND u.relations_version = p_relations_version;
    IF current IS NULL THEN
        RAISE EXCEPTION 'the caller changed since this instance looked it up' USING ERRCODE = 'PC001';
    END IF;
    RETURN true;
END
$$;
