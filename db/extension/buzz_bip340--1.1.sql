-- buzz_bip340 1.1: BIP-340 signature verification in the server, nip01_json and the kept list
-- tags (see README.md).
\echo Use "CREATE EXTENSION buzz_bip340" to load this file. \quit

-- bip340_verify(sig, msg, pubkey) -> boolean
-- True when sig (64 bytes) is a valid BIP-340 Schnorr signature of msg (32 bytes) by the x-only
-- public key pubkey (32 bytes); false when it is not, or when pubkey is not an x coordinate on
-- the curve. Any other size: ERROR 22023. STRICT: NULL in, NULL out.
CREATE FUNCTION bip340_verify(sig bytea, msg bytea, pubkey bytea)
RETURNS boolean
AS 'MODULE_PATHNAME', 'buzz_bip340_verify'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bip340_verify(bytea, bytea, bytea) IS
    'BIP-340: does sig (64 bytes) sign msg (32 bytes) for x-only pubkey (32 bytes)?';

-- bip340_first_invalid(sigs, msgs, pubkey) -> integer
-- The 1-based position of the first signature in sigs (64 bytes each) that is not a valid
-- BIP-340 signature of the message at the same position in msgs (32 bytes each) by pubkey;
-- 0 when every one is. For many signatures at once (several threads; see README.md). NULL
-- elements, other sizes, or arrays of different lengths: ERROR. STRICT.
CREATE FUNCTION bip340_first_invalid(sigs bytea[], msgs bytea[], pubkey bytea)
RETURNS integer
AS 'MODULE_PATHNAME', 'buzz_bip340_first_invalid'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION bip340_first_invalid(bytea[], bytea[], bytea) IS
    'BIP-340: position of the first of sigs that does not sign its msg for pubkey, 0 if none.';

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
