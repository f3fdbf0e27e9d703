-- buzz.rotate_relay_key(p_new_pubkey text, p_limit integer DEFAULT NULL) -> integer
-- Changes the relay key: records p_new_pubkey (from then on prepare accepts only it) and
-- marks up to p_limit communities (all when NULL), archived ones included, whose live list or
-- a live role definition is signed by another key, for a new list and new definitions in this
-- transaction. Returns how many it marked. Call
-- it again, each time in a transaction of its own, until it returns 0.
-- Waits for every transaction that prepared with the old key: none commits after this does.
-- At COMMIT, NOTIFY buzz_relay_key with the new key (relay processes check theirs).
-- Locks: the relay-key lock exclusive, then the marked communities FOR KEY SHARE.
-- Raises: BZIPK, 22023 (p_limit below 1), BZISO.
-- Executable by buzz_key_admin alone (SPEC §4): a service that writes members cannot re-point
-- the relay's identity.
CREATE OR REPLACE FUNCTION buzz.rotate_relay_key(p_new_pubkey text, p_limit integer DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_new_pubkey, 'p_new_pubkey');
    v_communities uuid[];
    v_now timestamptz;
BEGIN
    IF p_limit < 1 THEN
        RAISE EXCEPTION 'p_limit must be NULL (all) or at least 1'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_relay_key(true);
    -- The time as a value: Citus takes no function call in DO UPDATE SET (relay_key is a
    -- reference table on a cluster).
    v_now := pg_catalog.now();
    INSERT INTO buzz_private.relay_key AS k (pubkey) VALUES (v_pubkey)
    ON CONFLICT (singleton) DO UPDATE SET pubkey = EXCLUDED.pubkey, recorded_at = v_now
        WHERE k.pubkey <> EXCLUDED.pubkey;
    -- FOR KEY SHARE, like any membership write: a community being deleted is waited for and
    -- then skipped, instead of its list rows being waited for under the list lock.
    v_communities := ARRAY(
        SELECT c.community_id
        FROM buzz_private.communities c
        WHERE c.community_id IN (SELECT l.community_id FROM buzz_private.member_lists l
                                 WHERE l.pubkey <> v_pubkey
                                 UNION
                                 SELECT r.community_id FROM buzz_private.role_events r
                                 WHERE r.kind = 33534 AND r.pubkey <> v_pubkey)
        ORDER BY c.community_id
        LIMIT p_limit);
    -- Locked by a statement of their own (Citus locks no rows of a statement that reads
    -- distributed tables); one deleted since is left out.
    v_communities := ARRAY(
        SELECT c.community_id
        FROM buzz_private.communities c
        WHERE c.community_id = ANY (v_communities)
        ORDER BY c.community_id
        FOR KEY SHARE);
    PERFORM buzz_private.mark_for_list(v_communities, true);
    -- Heard at COMMIT by every relay process (SPEC section 10): one holding another key says so.
    PERFORM pg_catalog.pg_notify('buzz_relay_key', v_pubkey);
    RETURN pg_catalog.cardinality(v_communities);
END
$$;
ALTER FUNCTION buzz.rotate_relay_key(text, integer) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.rotate_relay_key(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.rotate_relay_key(text, integer) TO buzz_key_admin;
COMMENT ON FUNCTION buzz.rotate_relay_key(text, integer) IS
    'Records a new relay key and marks communities whose list another key signed.';
