-- buzz.republish_member_list(p_community uuid) -> void
-- The repair for a list made stale outside the API (a restore with triggers off): marks the
-- community so that the next prepare rebuilds its list from the stored members. Changes no
-- member; works on archived communities. Like a member change, the transaction must then
-- prepare, sign and insert, or it fails at COMMIT with BZUNS.
-- Raises: BZISO, BZNCM.
CREATE OR REPLACE FUNCTION buzz.republish_member_list(p_community uuid)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community, p_allow_archived => true);
    PERFORM buzz_private.mark_for_list(ARRAY[p_community], true);
END
$$;
ALTER FUNCTION buzz.republish_member_list(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.republish_member_list(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.republish_member_list(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.republish_member_list(uuid) IS
    'Marks a community so the next prepare rebuilds its list from the stored members.';
