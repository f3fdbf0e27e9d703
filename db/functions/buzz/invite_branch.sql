-- buzz.invite_branch(p_community uuid, p_pubkey text) -> TABLE(pubkey text, role text)
-- A member's branch: the member and everyone they brought in, recursively (by added_by), with
-- their base roles, by pubkey; what remove_relay_member(..., p_with_branch => true) removes. The owner is never in
-- a branch, nor anyone below the owner (they stay with their inviter). No rows for the owner,
-- a non-member or a NULL pubkey. The one walk of the branch: the relay (NIP-86), buzz-admin
-- and remove_relay_member read it here.
-- Raises: BZIPK (p_pubkey not 64 hexadecimal characters).
CREATE OR REPLACE FUNCTION buzz.invite_branch(p_community uuid, p_pubkey text)
RETURNS TABLE (pubkey text, role text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text;
    v_branch text[];
    v_generation text[];
BEGIN
    IF p_pubkey IS NULL THEN
        RETURN;
    END IF;
    v_pubkey := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    IF coalesce(buzz_private.member_role(p_community, v_pubkey), '') NOT IN ('admin', 'member') THEN
        RETURN;
    END IF;
    -- A generation a statement; a loop of added_by ends where it comes back.
    v_branch := ARRAY[v_pubkey];
    v_generation := v_branch;
    LOOP
        v_generation := ARRAY(
            SELECT m.pubkey::text
            FROM buzz_private.relay_members m
            WHERE m.community_id = p_community AND m.added_by = ANY (v_generation)
              AND m.role <> 'owner'
            EXCEPT
            SELECT b.pubkey FROM pg_catalog.unnest(v_branch) AS b (pubkey));
        EXIT WHEN pg_catalog.cardinality(v_generation) = 0;
        v_branch := v_branch || v_generation;
    END LOOP;
    RETURN QUERY
        SELECT m.pubkey::text, m.role
        FROM buzz_private.relay_members m
        WHERE m.community_id = p_community AND m.pubkey = ANY (v_branch)
        ORDER BY m.pubkey;
END
$$;
ALTER FUNCTION buzz.invite_branch(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.invite_branch(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.invite_branch(uuid, text) TO buzz_reader;
COMMENT ON FUNCTION buzz.invite_branch(uuid, text) IS
    'A member and everyone they brought in, recursively; the owner never.';
