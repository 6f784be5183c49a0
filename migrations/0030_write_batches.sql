-- The members of a batch of requests' writes (likes, comments, follows: WriteCoalescer),
-- one row per request in arrival order (`member_idx`): a key (the post, the followee), the
-- actor, and a text (the action, the comment's body).
--
-- A function rather than unnest in each statement, for its estimate: a prepared statement
-- over unnest of a parameter is costed, generically, for ten rows, and PostgreSQL then
-- prefers a custom plan, made again for every execution (1.5 ms of an idle like's 2, for
-- a statement of many CTEs). Declared one row, and PL/pgSQL (never inlined, its own plan
-- kept for the session: a SQL function's body is planned again at every call), so the
-- generic plan is the custom plan of a batch of one, planned once per connection.
CREATE FUNCTION write_batch(keys bigint[], actors bigint[], texts text[])
RETURNS TABLE (member_key bigint, member_actor bigint, member_text text, member_idx bigint)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 1
AS $$
BEGIN
    RETURN QUERY SELECT * FROM unnest(keys, actors, texts) WITH ORDINALITY;
END
$$;
