-- API.md "Images for phones": a post's image size, so that clients lay it out before it
-- arrives (null without an image). Images stored before this migration are measured by
-- the server after it starts (Sources/PostsServer/Uploads/ImageMeasurement.swift), from
-- their headers.
ALTER TABLE posts ADD COLUMN image_width int, ADD COLUMN image_height int;

-- An avatar's file is removed once nothing points to it: these find what does.
CREATE INDEX posts_image_url_idx ON posts (image_url) WHERE image_url IS NOT NULL;
CREATE INDEX profiles_avatar_url_idx ON profiles (avatar_url) WHERE avatar_url IS NOT NULL;
