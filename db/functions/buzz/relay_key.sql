-- buzz.relay_key() -> text
-- The relay key the database records (64 hex): the only key a list may be signed with, set by
-- the first write and changed by rotate_relay_key; NULL before the first write. A relay
-- process compares it with its own at start and at every rotation (NOTIFY buzz_relay_key),
-- and refuses to write with a retired key rather than fail each write (SPEC section 10).
CREATE OR REPLACE FUNCTION buzz.relay_key()
RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT k.pubkey::text FROM buzz_private.relay_key k;
END;
ALTER FUNCTION buzz.relay_key() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.relay_key() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.relay_key() TO buzz_reader;
COMMENT ON FUNCTION buzz.relay_key() IS 'The recorded relay key (hex); NULL before the first write.';
