-- buzz_private.check_relay_key(p_pubkey) -> void
-- The relay key a prepare may sign with: the recorded one. The first prepare records its key;
-- any other raises BZKEY until rotate_relay_key names it. A prepare that has lists to write
-- takes the relay-key lock (shared) first, so that no rotation commits between this check and
-- its COMMIT.
CREATE OR REPLACE FUNCTION buzz_private.check_relay_key(p_pubkey text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_recorded text;
BEGIN
    SELECT k.pubkey::text INTO v_recorded FROM buzz_private.relay_key k;
    IF NOT FOUND THEN
        -- Two first prepares at once: the loser waits on the winner's row, then reads it.
        INSERT INTO buzz_private.relay_key (pubkey) VALUES (p_pubkey) ON CONFLICT DO NOTHING;
        SELECT k.pubkey::text INTO v_recorded FROM buzz_private.relay_key k;
    END IF;
    IF v_recorded <> p_pubkey THEN
        RAISE EXCEPTION 'p_relay_pubkey is not the recorded relay key %', v_recorded
            USING ERRCODE = 'BZKEY',
                  HINT = 'Sign with the recorded key, or change it with buzz.rotate_relay_key.';
    END IF;
END
$$;
ALTER FUNCTION buzz_private.check_relay_key(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.check_relay_key(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.check_relay_key(text) IS
    'Records the first relay key; BZKEY for any other until a rotation names it.';
