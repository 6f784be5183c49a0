-- What a request's remembered caller raises when it is no longer the one the database has
-- (`CallerCache`): its proof, `CASE WHEN <the caller is as remembered> THEN true ELSE
-- caller_refuted() END`, travels with the request's first statement, and raising is what
-- keeps that statement from doing anything (the instance then reads the caller afresh
-- and runs the request again). Only the raise is a function: the check itself is SQL in
-- the statement (`Tokens.proof`, `Accounts.proof`), planned with it. As functions the
-- checks cost 8 µs a call in PL/pgSQL and 54 µs in SQL (not inlined), against 3 µs inline
-- (pg_stat_statements, pgbench, the bench data set). VOLATILE, so that it is never
-- evaluated ahead of time: a CASE evaluates its ELSE only when no WHEN held.
CREATE FUNCTION caller_refuted() RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION 'the caller changed since this instance looked it up' USING ERRCODE = 'PC001';
END
$$;
