-- buzz_private.bip340_verify(sig bytea, msg bytea, pubkey bytea) -> boolean (db/extension)
-- BIP-340's test vectors 0-14 (every case with a 32-byte message: valid signatures, a public
-- key not on the curve or past the field size, R not on the curve, negated s or R, s or R at
-- or past the group order or field size, the point at infinity), loaded by `make pgtap` into
-- public.bip340_vectors from the npm package bip-schnorr (its test-vectors-schnorr.json); then
-- sizes, NULLs, zero bytes and the point at infinity through the SQL function, and a signature
-- of our own test signer.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(46);

CREATE FUNCTION pg_temp.verify(p_sig text, p_msg text, p_pubkey text) RETURNS boolean
LANGUAGE sql IMMUTABLE
RETURN buzz_private.bip340_verify(decode(p_sig, 'hex'), decode(p_msg, 'hex'), decode(p_pubkey, 'hex'));

-- The official vectors: each row's expected result, and that all 15 are there (16 tests).
CREATE FUNCTION pg_temp.vector_tests() RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    IF to_regclass('public.bip340_vectors') IS NULL THEN
        RETURN NEXT skip('BIP-340 vectors not loaded (make pgtap loads them from npm bip-schnorr)', 16);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE $q$
        SELECT is(pg_temp.verify(v.sig, v.m, v.pk), v.result,
                  format('BIP-340 vector %s %s', v.n - 1, coalesce(nullif(v.comment, ''), '(valid)')))
        FROM public.bip340_vectors v ORDER BY v.n $q$;
    RETURN QUERY EXECUTE $q$
        SELECT ok((SELECT count(*) = 15 AND count(*) FILTER (WHERE result) = 5 FROM public.bip340_vectors),
                  '... all 15 of them, 5 valid and 10 invalid') $q$;
END
$$;
SELECT * FROM pg_temp.vector_tests();

-- Wrong sizes are errors, before libsecp256k1 sees them
SELECT throws_ok($$SELECT buzz_private.bip340_verify('\x00'::bytea, decode(repeat('00', 32), 'hex'), decode(repeat('00', 32), 'hex'))$$,
                 '22023', 'bip340_verify: sig must be 64 bytes, not 1', 'a 1-byte sig: 22023');
SELECT throws_ok($$SELECT buzz_private.bip340_verify(decode(repeat('00', 65), 'hex'), decode(repeat('00', 32), 'hex'), decode(repeat('00', 32), 'hex'))$$,
                 '22023', 'bip340_verify: sig must be 64 bytes, not 65', 'a 65-byte sig: 22023');
SELECT throws_ok($$SELECT buzz_private.bip340_verify(decode(repeat('00', 64), 'hex'), decode(repeat('00', 31), 'hex'), decode(repeat('00', 32), 'hex'))$$,
                 '22023', 'bip340_verify: msg must be 32 bytes, not 31', 'a 31-byte msg: 22023');
SELECT throws_ok($$SELECT buzz_private.bip340_verify(decode(repeat('00', 64), 'hex'), decode(repeat('00', 33), 'hex'), decode(repeat('00', 32), 'hex'))$$,
                 '22023', 'bip340_verify: msg must be 32 bytes, not 33', 'a 33-byte msg: 22023');
SELECT throws_ok($$SELECT buzz_private.bip340_verify(decode(repeat('00', 64), 'hex'), decode(repeat('00', 32), 'hex'), decode(repeat('02', 33), 'hex'))$$,
                 '22023', 'bip340_verify: pubkey must be 32 bytes, not 33', 'a 33-byte (compressed) pubkey: 22023');
SELECT throws_ok($$SELECT buzz_private.bip340_verify(''::bytea, ''::bytea, ''::bytea)$$,
                 '22023', 'bip340_verify: sig must be 64 bytes, not 0', 'empty inputs: 22023');

-- NULLs: STRICT
SELECT is(buzz_private.bip340_verify(NULL, decode(repeat('00', 32), 'hex'), decode(repeat('00', 32), 'hex')), NULL, 'a NULL sig: NULL');
SELECT is(buzz_private.bip340_verify(decode(repeat('00', 64), 'hex'), NULL, decode(repeat('00', 32), 'hex')), NULL, 'a NULL msg: NULL');
SELECT is(buzz_private.bip340_verify(decode(repeat('00', 64), 'hex'), decode(repeat('00', 32), 'hex'), NULL), NULL, 'a NULL pubkey: NULL');

-- Zero bytes, the point at infinity, keys past the field
SELECT is(pg_temp.verify(repeat('00', 64), repeat('00', 32), repeat('00', 32)), false,
          'all zero bytes (x = 0 is not on the curve): false');
SELECT is(pg_temp.verify(repeat('00', 64), repeat('00', 32), pg_temp.relay_pubkey()), false,
          'a zero signature (R at infinity, s = 0) by a real key: false');
SELECT is(pg_temp.verify(repeat('ff', 64), repeat('00', 32), pg_temp.relay_pubkey()), false,
          'a signature of all ones (r past the field, s past the order): false');
SELECT is(pg_temp.verify(repeat('00', 64), repeat('00', 32), repeat('ff', 32)), false,
          'a pubkey past the field size: false');

-- A signature of our own test signer, and what breaks it
SELECT encode(public.bip340_test_sign(decode(repeat('42', 32), 'hex'), pg_temp.test_secret(pg_temp.relay_pubkey())), 'hex') AS sig \gset
SELECT is(pg_temp.verify(:'sig', repeat('42', 32), pg_temp.relay_pubkey()), true, 'a good signature: true');
SELECT is(pg_temp.verify(:'sig', repeat('43', 32), pg_temp.relay_pubkey()), false, '... of another message: false');
SELECT is(pg_temp.verify(:'sig', repeat('42', 32), 'e493dbf1c10d80f3581e4904930b1404cc6c13900ee0758474fa94abe8c4cd13'),
          false, '... for another key: false');
SELECT is(pg_temp.verify(overlay(:'sig' placing translate(substr(:'sig', 1, 1), '0123456789abcdef', '1032547698badcfe') from 1 for 1),
                         repeat('42', 32), pg_temp.relay_pubkey()), false, '... one bit of R flipped: false');
SELECT is(pg_temp.verify(overlay(:'sig' placing translate(substr(:'sig', 128, 1), '0123456789abcdef', '1032547698badcfe') from 128 for 1),
                         repeat('42', 32), pg_temp.relay_pubkey()), false, '... one bit of s flipped: false');
SELECT is(pg_temp.verify(substr(:'sig', 65) || substr(:'sig', 1, 64), repeat('42', 32), pg_temp.relay_pubkey()),
          false, '... R and s swapped: false');

-- Declared as it behaves
SELECT ok((SELECT p.proisstrict AND p.provolatile = 'i' AND p.proparallel = 's'
           FROM pg_proc p WHERE p.oid = 'buzz_private.bip340_verify(bytea, bytea, bytea)'::regprocedure),
          'STRICT, IMMUTABLE, PARALLEL SAFE');
-- (The signature depends on g, so that the IMMUTABLE call is not folded into one at plan time.)
SELECT is((SELECT count(*) FILTER (WHERE buzz_private.bip340_verify(
                      substr(decode(:'sig', 'hex') || int4send(g), 1, 64), decode(repeat('42', 32), 'hex'),
                      decode(pg_temp.relay_pubkey(), 'hex')))
           FROM generate_series(1, 2000) g), 2000::bigint,
          '2,000 verifications in one query, each true (one context per backend)');

-- bip340_first_invalid: many signatures by one key at once, in threads past 256 of them
CREATE TEMP TABLE batch AS
SELECT g AS n, decode(encode(sha256(int4send(g)), 'hex'), 'hex') AS msg,
       public.bip340_test_sign(sha256(int4send(g)), pg_temp.test_secret(pg_temp.relay_pubkey())) AS sig
FROM generate_series(1, 3000) g;
CREATE FUNCTION pg_temp.first_invalid(p_spoil integer DEFAULT 0) RETURNS integer LANGUAGE sql AS $$
    SELECT buzz_private.bip340_first_invalid(
        ARRAY(SELECT CASE WHEN b.n = p_spoil THEN set_byte(b.sig, 10, get_byte(b.sig, 10) # 1) ELSE b.sig END
              FROM batch b ORDER BY b.n),
        ARRAY(SELECT b.msg FROM batch b ORDER BY b.n),
        decode(pg_temp.relay_pubkey(), 'hex'))
$$;
SELECT is(pg_temp.first_invalid(), 0, 'first_invalid: 3,000 good signatures: 0');
SELECT is(pg_temp.first_invalid(2999), 2999, '... one bit flipped in the 2,999th: 2999');
SELECT is(pg_temp.first_invalid(1), 1, '... in the first: 1');
SET LOCAL buzz_bip340.max_threads = 1;
SELECT is(pg_temp.first_invalid(1777), 1777, '... without threads (buzz_bip340.max_threads = 1): the same');
RESET buzz_bip340.max_threads;
SELECT is(buzz_private.bip340_first_invalid('{}', '{}', decode(pg_temp.relay_pubkey(), 'hex')), 0,
          '... no signatures: 0');
SELECT is(buzz_private.bip340_first_invalid(ARRAY[(SELECT b.sig FROM batch b WHERE b.n = 1)],
                                            ARRAY[(SELECT b.msg FROM batch b WHERE b.n = 1)],
                                            decode(repeat('00', 32), 'hex')), 1,
          '... by a key not on the curve: 1');
SELECT throws_ok($$SELECT buzz_private.bip340_first_invalid(ARRAY['\x00'::bytea], ARRAY[decode(repeat('00', 32), 'hex')], decode(repeat('00', 32), 'hex'))$$,
                 '22023', 'bip340_first_invalid: sigs[1] must be 64 bytes, not 1', '... a wrong size: 22023, naming the element');
SELECT throws_ok($$SELECT buzz_private.bip340_first_invalid(ARRAY[NULL::bytea], ARRAY[decode(repeat('00', 32), 'hex')], decode(repeat('00', 32), 'hex'))$$,
                 '22004', 'bip340_first_invalid: sigs[1] is NULL', '... a NULL element: 22004');
SELECT throws_ok($$SELECT buzz_private.bip340_first_invalid(ARRAY[decode(repeat('00', 64), 'hex')], '{}', decode(repeat('00', 32), 'hex'))$$,
                 '2202E', 'bip340_first_invalid: 1 signatures for 0 messages', '... arrays of different lengths');

SELECT * FROM finish();
ROLLBACK;
