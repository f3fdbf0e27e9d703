-- buzz_bip340 1.0 to 1.1: adds nip01_json, keep_list_tags and kept_list_tags.
\echo Use "ALTER EXTENSION buzz_bip340 UPDATE TO '1.1'" to load this file. \quit

-- nip01_json(event text) -> json
-- The text as json, not parsed again: for the compact NIP-01 text of an event that the
-- membership functions built themselves (json's input function would lex it all again, 4-5 ms
-- at 10,000 members). Never for text from elsewhere: the result is not checked to be JSON.
CREATE FUNCTION nip01_json(event text)
RETURNS json
AS 'MODULE_PATHNAME', 'buzz_nip01_json'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION nip01_json(text) IS
    'The NIP-01 text of an event built by the membership functions, as json, unparsed.';

-- keep_list_tags(id text, tags text) -> void; kept_list_tags(id text) -> text
-- The tags of a list prepare built, kept by the list's id to the end of the transaction, so
-- that insert_signed_events need not concatenate them again (about 1 ms at 10,000 members).
-- What is kept for an id is the text whose serialization hashes to it; kept_list_tags gives
-- NULL for an id not kept (another transaction, or past 32 MB kept in this one).
CREATE FUNCTION keep_list_tags(id text, tags text)
RETURNS void
AS 'MODULE_PATHNAME', 'buzz_keep_list_tags'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION kept_list_tags(id text)
RETURNS text
AS 'MODULE_PATHNAME', 'buzz_kept_list_tags'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION keep_list_tags(text, text) IS
    'Keep a prepared list''s tags by its id until the end of the transaction.';
COMMENT ON FUNCTION kept_list_tags(text) IS
    'The tags kept for a list id in this transaction, or NULL.';
