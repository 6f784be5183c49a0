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

-- 2. People search missed a typo inside a longer name: trigram word similarity (0.6) of
-- `nwiowulkhh` to `nwiowflkhh_n` is 8 shared trigrams of 14, 0.57 (a substitution in the
-- middle of a word spoils three trigrams). What is asked for instead, exactly: a prefix of
-- the username one edit from the query (a character substituted, one too many, one
-- missing, two neighbours swapped). As LIKE patterns, each a prefix, that is about four
-- per character of the query; the trigram index looks them up (see search_typo_lookups).

-- LIKE's own characters (`%`, `_`, `\`) in a text, taken literally.
CREATE FUNCTION search_like_literal(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN replace(replace(replace($1, '\', '\\'), '%', '\%'), '_', '\_');

-- Every prefix one edit from `q`, as LIKE patterns. (A character missing at the end, or
-- two swapped at the end, is `q` itself as a prefix: found without a typo.)
CREATE FUNCTION search_typo_patterns(q text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(
    SELECT DISTINCT edited || '%'
    FROM generate_series(1, char_length(q)) i, LATERAL (VALUES
        (search_like_literal(left(q, i - 1)) || '_' || search_like_literal(substr(q, i + 1))),
        (search_like_literal(left(q, i - 1) || substr(q, i + 1))),
        (search_like_literal(left(q, i - 1)) || '_' || search_like_literal(substr(q, i))),
        (search_like_literal(left(q, i - 1) || substr(q, i + 1, 1) || substr(q, i, 1) || substr(q, i + 2)))
    ) AS edits(edited));

-- What the trigram index looks up to find those prefixes: LIKE patterns that every one of
-- them also matches. Each lookup reads the posting lists of its pattern's trigrams.
-- - Only for 5 to 31 characters (a username has at most 30; one fewer than 5, and one edit
--   leaves too little to tell a typo from another name: `ashh` finds `ash_n` by
--   similarity already), holding a run of 4 letters or digits (so that every pattern has a
--   trigram to look up; without one, an index lookup reads the whole index).
-- - From 8 characters: two pieces of the query, one of which survives any single edit
--   (pigeonhole): its first (n-1)/2 characters as a prefix, or the rest after one more
--   anywhere. Two lookups whatever the length, each of several trigrams; the patterns then
--   sort the few names they find. Among 1,000,000 made-up names, looking every pattern up
--   read 1,200 to 5,000 pages for a query of 10 to 14 characters; the pieces, 30 to 750.
-- - Shorter (or pieces without a trigram worth the name): every pattern itself. The
--   3-character piece of a 6-character query is one trigram: `hystoo`'s was in 33,000 of
--   those names (6,000 pages), where its 24 patterns read 2,500 for the 303 they match.
CREATE FUNCTION search_typo_lookups(q text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN char_length(q) NOT BETWEEN 5 AND 31 OR q !~ '[a-z0-9]{4}' THEN '{}'
    WHEN char_length(q) >= 8 AND q ~ '^[a-z0-9]{2}' AND substr(q, (char_length(q) - 1) / 2 + 2) ~ '[a-z0-9]{3}' THEN ARRAY[
        search_like_literal(left(q, (char_length(q) - 1) / 2)) || '%',
        '%' || search_like_literal(substr(q, (char_length(q) - 1) / 2 + 2)) || '%']
    ELSE search_typo_patterns(q)
END;
