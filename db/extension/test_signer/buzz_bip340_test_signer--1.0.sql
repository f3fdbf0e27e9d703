-- buzz_bip340_test_signer 1.0: lets the pgTAP suites sign what they prepare (README.md).
\echo Use "CREATE EXTENSION buzz_bip340_test_signer" to load this file. \quit

-- The BIP-340 signature (64 bytes) of msg (32 bytes) by the secret key seckey (32 bytes),
-- deterministic (no auxiliary randomness). For tests, with test keys only.
CREATE FUNCTION bip340_test_sign(msg bytea, seckey bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'buzz_bip340_test_sign'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- The x-only public key (32 bytes) of seckey.
CREATE FUNCTION bip340_test_pubkey(seckey bytea)
RETURNS bytea
AS 'MODULE_PATHNAME', 'buzz_bip340_test_pubkey'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
-- Executable by PUBLIC: suites sign under SET ROLE buzz_writer too. Test databases only.
