-- API.md "Search and hashtags": posts found by their words in any script, people by a
-- prefix or a typo of their names, hashtags kept by id. All of it in PostgreSQL: its own
-- extensions `unaccent` and `pg_trgm` (Debian's postgresql package ships both), no second
-- engine to operate. The argument for each choice is in Sources/PostsServer/Search/.

-- Both extensions are "trusted" (PostgreSQL 13+): the database's owner may create them.
-- A role that may not gets a message saying what to run instead.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS unaccent;
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE EXCEPTION 'search needs the PostgreSQL extensions unaccent and pg_trgm, which role % may not create: as a superuser (or the database''s owner), run in database %: CREATE EXTENSION unaccent; CREATE EXTENSION pg_trgm; then migrate again',
        current_user, current_database();
END $$;

-- The one fold of text for search, at index and at query time alike: compatibility forms
-- composed (NFKC: `ＦＯＯ` is `FOO`, `ﬁ` is `fi`), accents taken off (`unaccent`), then
-- lower case. Declared IMMUTABLE so an index may use it: `unaccent` is only STABLE because
-- its rules file could be edited, and is named here with its dictionary and schema so no
-- search_path changes what it does (an index built with other rules would need a REINDEX).
-- ASCII text is its own NFKC form: it skips `normalize`, which cost 33 µs of the 48 that a
-- 600-character text took to fold (most of a post's indexing).
DO $$
DECLARE
    schema text := (SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'unaccent');
BEGIN
    EXECUTE format($f$
        CREATE FUNCTION search_fold(text) RETURNS text
        LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN lower(%1$s.unaccent(%2$L::regdictionary,
            CASE WHEN octet_length($1) = char_length($1) THEN $1 ELSE normalize($1, NFKC) END))
    $f$, schema, schema || '.unaccent');
END $$;

-- Chinese, Japanese and Korean are written without spaces between words, and the text
-- search parser takes a whole run of them for one word. Each run is cut into overlapping
-- pairs of characters (bigrams: "東京都" is 東京 京都 都, the run's last character alone
-- too), each its own token. A query's run becomes the phrase of its pairs, a single
-- character a prefix (`search_query`). Why pairs and not trigrams: most words of these
-- languages are two characters long, and a trigram index cannot find a two-character word.
-- The characters: CJK ideographs (with extension A and the compatibility block), kana and
-- Hangul syllables (after NFKC: half-width kana are full-width by then).
CREATE FUNCTION search_document(text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN octet_length($1) = char_length($1) THEN search_fold($1) ELSE regexp_replace(
    regexp_replace(search_fold($1),
        '(?<=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])',
        '\1\1', 'g'),
    '([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff][\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]?)',
    ' \1 ', 'g') END;

-- A user's query, in web-search syntax (`"a phrase"`, `-word`, `or`), folded as documents
-- are. A run of CJK characters becomes its pairs separated by an ideographic comma, which
-- the parser splits on without ending the word: websearch_to_tsquery then joins them as a
-- phrase (東京都 → 東京 <-> 京都). A lone CJK character is a prefix of the pairs it starts.
-- Anything at all is a valid input: operators alone give an empty query (no match).
CREATE FUNCTION search_query(text) RETURNS tsquery
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN regexp_replace(
    websearch_to_tsquery('simple',
        regexp_replace(search_fold($1),
            '(?<=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])(?=[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])',
            '\1、\1', 'g'))::text,
    '''([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])''(?=$| |\))',
    '''\1'':*', 'g')::tsquery;

-- Posts: the title weighs most (A), then the summary (B), then the body (C). A generated
-- column: written with the row in the post's own statement (findable as soon as its 201
-- is sent), rewritten by any edit, gone with the row.
ALTER TABLE posts ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', search_document(title)), 'A')
    || setweight(to_tsvector('simple', search_document(summary)), 'B')
    || setweight(to_tsvector('simple', search_document(body)), 'C')
) STORED;
CREATE INDEX posts_search_idx ON posts USING gin (search);

-- People: trigrams of the folded username and full name, for prefixes and typos. Stored
-- folded: an index's recheck of each candidate reads the column, where an expression index
-- folded every candidate again (17 µs each: 20 ms for a prefix shared by a thousand names).
ALTER TABLE profiles ADD COLUMN search_username text GENERATED ALWAYS AS (search_fold(username)) STORED,
                     ADD COLUMN search_full_name text GENERATED ALWAYS AS (search_fold(full_name)) STORED;
CREATE INDEX profiles_username_trgm_idx ON profiles USING gin (search_username gin_trgm_ops);
CREATE INDEX profiles_full_name_trgm_idx ON profiles USING gin (search_full_name gin_trgm_ops);

-- Hashtags, by id. `posts_count`: the posts (not comments) that carry the tag now.
CREATE TABLE tags (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE,
    posts_count int NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tags_name_trgm_idx ON tags USING gin (name gin_trgm_ops);

-- A post's tags (each once), with what the tag page and trending ask without reading the
-- post: its time (the page's order) and its author (distinct authors for trending).
CREATE TABLE post_tags (
    tag_id     bigint NOT NULL REFERENCES tags(id),
    post_id    bigint NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
    author_id  bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tag_id, post_id)
);
CREATE INDEX post_tags_page_idx ON post_tags (tag_id, created_at DESC, post_id DESC);
CREATE INDEX post_tags_post_idx ON post_tags (post_id);
CREATE INDEX post_tags_recent_idx ON post_tags (created_at);

CREATE TABLE comment_tags (
    tag_id     bigint NOT NULL REFERENCES tags(id),
    comment_id uuid NOT NULL REFERENCES comments(id) ON DELETE CASCADE,
    author_id  bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tag_id, comment_id)
);
CREATE INDEX comment_tags_comment_idx ON comment_tags (comment_id);
CREATE INDEX comment_tags_recent_idx ON comment_tags (created_at);

-- What a post or comment shows of its tags ([{name, field, start, end}]), kept in its row
-- as `mentions` is (Mentions.swift has the argument: no join on the hottest reads).
ALTER TABLE posts ADD COLUMN tags json;
ALTER TABLE comments ADD COLUMN tags json;

-- The tags named, each made once whoever names it first: ids for names already folded.
-- A function, so each of its statements sees what others committed since the calling
-- statement began: a name inserted by a concurrent post is found, not missed.
CREATE FUNCTION tag_ids(names text[]) RETURNS TABLE (tag_id bigint, tag_name text)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tags (name) SELECT DISTINCT n FROM unnest(names) n ORDER BY n ON CONFLICT (name) DO NOTHING;
    RETURN QUERY SELECT t.id, t.name FROM tags t WHERE t.name = ANY(names);
END $$;

-- `posts_count` follows the rows of `post_tags` however they go: a post's own statements
-- and the cascade of any deletion of posts (a subtree, an account's, a moderator's
-- removal), which only a trigger sees. An integrity rule, like the cascades of migration
-- 0018: a count of rows, not a business rule. Tags in id order: one lock order.
CREATE FUNCTION post_tags_counted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE tags t SET posts_count = t.posts_count + n.c
        FROM (SELECT tag_id, count(*) AS c FROM changed_rows GROUP BY tag_id ORDER BY tag_id) n WHERE t.id = n.tag_id;
    ELSE
        UPDATE tags t SET posts_count = t.posts_count - n.c
        FROM (SELECT tag_id, count(*) AS c FROM changed_rows GROUP BY tag_id ORDER BY tag_id) n WHERE t.id = n.tag_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER post_tags_inserted AFTER INSERT ON post_tags
    REFERENCING NEW TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION post_tags_counted();
CREATE TRIGGER post_tags_deleted AFTER DELETE ON post_tags
    REFERENCING OLD TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION post_tags_counted();
