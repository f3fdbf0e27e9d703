-- buzz.add_relay_members(p_community uuid, p_pubkeys text[], p_role text DEFAULT 'member',
--                        p_added_by text DEFAULT NULL) -> integer
-- Adds many members at once (one list for the whole batch); pubkeys already members, and
-- repeats within the array, are skipped, and so are banned pubkeys (ban_pubkey: a batch is
-- no explicit add of each). Returns the number of rows added (0: no change).
-- Raises: BZIPK (NULL array or any malformed element, named by position), 54000 (more than
-- 100,000 elements), BZIRL, 22023 (p_added_by), BZISO, BZNCM, BZARC.
CREATE OR REPLACE FUNCTION buzz.add_relay_members(
    p_community uuid, p_pubkeys text[], p_role text DEFAULT 'member',
    p_added_by text DEFAULT NULL)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_role text := buzz_private.normalize_role(p_role, ARRAY['admin', 'member']);
    v_added_by text := buzz_private.normalize_actor(p_added_by, 'p_added_by');
    v_bad bigint;
    v_added integer;
BEGIN
    IF p_pubkeys IS NULL OR pg_catalog.array_ndims(p_pubkeys) > 1 THEN
        RAISE EXCEPTION 'p_pubkeys must be a one-dimensional array of pubkeys'
            USING ERRCODE = 'BZIPK';
    END IF;
    IF pg_catalog.cardinality(p_pubkeys) > 100000 THEN
        RAISE EXCEPTION 'p_pubkeys has % elements; at most 100000 per call',
                pg_catalog.cardinality(p_pubkeys)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Call it several times within one transaction: still one list.';
    END IF;
    SELECT u.position INTO v_bad
    FROM pg_catalog.unnest(p_pubkeys) WITH ORDINALITY AS u (pubkey, position)
    WHERE u.pubkey IS NULL OR pg_catalog.length(u.pubkey) <> 64 OR u.pubkey ~ '[^0-9A-Fa-f]'
    ORDER BY u.position
    LIMIT 1;
    IF FOUND THEN
        -- Name the element by its subscript, which need not start at 1.
        RAISE EXCEPTION 'p_pubkeys[%] must be a pubkey: 64 hexadecimal characters',
                v_bad + pg_catalog.array_lower(p_pubkeys, 1) - 1
            USING ERRCODE = 'BZIPK', HINT = 'Decode npub keys to hex before calling.';
    END IF;

    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, false);
    -- In pubkey order: two batches that share pubkeys take their rows in the same order and
    -- cannot deadlock (a hash de-duplication would insert in an order of its own).
    -- Counted by what it returns: Citus's INSERT ... SELECT reports the rows it sent as the
    -- row count, those ON CONFLICT skipped included.
    WITH added AS (
        INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
        SELECT p_community, u.pubkey, v_role, v_added_by
        FROM (SELECT DISTINCT pg_catalog.lower(x.pubkey) COLLATE "C" AS pubkey
              FROM pg_catalog.unnest(p_pubkeys) AS x (pubkey)) AS u
        WHERE NOT EXISTS (SELECT FROM buzz_private.banned_pubkeys b
                          WHERE b.community_id = p_community AND b.pubkey = u.pubkey)
        ORDER BY u.pubkey
        ON CONFLICT (community_id, pubkey) DO NOTHING
        RETURNING 1
    )
    SELECT pg_catalog.count(*)::integer INTO v_added FROM added;
    RETURN v_added;
END
$$;
ALTER FUNCTION buzz.add_relay_members(uuid, text[], text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.add_relay_members(uuid, text[], text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.add_relay_members(uuid, text[], text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.add_relay_members(uuid, text[], text, text) IS
    'Adds many members in one statement; returns how many were added.';
