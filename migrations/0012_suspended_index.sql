-- Whether an author is suspended is asked per row by the reads and writes that have no
-- author join (a like's or a comment's post, a reply's parent, every change a feed reads):
-- a probe into this index, empty on most instances, instead of the profile's own row.
CREATE INDEX profiles_suspended_idx ON profiles (user_id) WHERE suspended;
