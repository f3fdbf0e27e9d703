-- buzz_bip340 1.0 to 1.1: adds nip01_json.
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
