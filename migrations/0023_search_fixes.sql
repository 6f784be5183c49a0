-- Search defects of migration 0021, fixed where the data is (the argument for each is in
-- Sources/PostsServer/Search/).

-- 1. A phrase matched across fields. `tsvector || tsvector` numbers the right operand's
-- words on from the left's last position, so a title's last word and the summary's first
-- were neighbours: a title ending "quick" and a summary starting "brown fox" matched
-- `"quick brown"`. Between the fields now stands one unused position: a gap word, then the
-- gap word taken out again (`ts_delete` keeps every other position as it is). The gap word
-- is a space, which no document's parsing and no query yields. A query's phrase is always
-- of neighbours (`<->`: the `simple` configuration drops no word), so one position suffices
-- and relevance, which weighs how near the words are, moves as little as it can.
CREATE FUNCTION search_vector(title text, summary text, body text) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ts_delete(
    setweight(to_tsvector('simple', search_document(title)), 'A') || $$' ':1$$::tsvector
    || setweight(to_tsvector('simple', search_document(summary)), 'B') || $$' ':1$$::tsvector
    || setweight(to_tsvector('simple', search_document(body)), 'C'),
    ' ');

-- PostgreSQL 15 cannot change a generated column's expression: the column is made again,
-- which computes it for every post (one rewrite of the table, as migration 0021's was),
-- and so is its index, under the same name (bench/search.sh drops and remakes it).
ALTER TABLE posts DROP COLUMN search;
ALTER TABLE posts ADD COLUMN search tsvector GENERATED ALWAYS AS (search_vector(title, summary, body)) STORED;
CREATE INDEX posts_search_idx ON posts USING gin (search);
