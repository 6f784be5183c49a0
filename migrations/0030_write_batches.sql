-- The members of a batch of requests' writes (likes, comments: WriteCoalescer), one row
-- per request in arrival order (`idx`): a key (the post), the actor, and a text (the
-- action, the comment's body).
--
-- A function rather than unnest in each statement, for its estimate: a prepared statement
-- over unnest of a parameter is costed, generically, for ten rows, and PostgreSQL then
-- prefers a custom plan, made again for every execution (1.5 ms of an idle like's 2, for
-- a statement of many CTEs). Declared STRICT, so it is not inlined, and one row, so the
-- generic plan is the custom plan of a batch of one: planned once per connection.
CREATE FUNCTION write_batch(keys bigint[], actors bigint[], texts text[])
RETURNS TABLE (key bigint, actor bigint, text text, idx bigint)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 1
AS $$ SELECT * FROM unnest(keys, actors, texts) WITH ORDINALITY $$;
