-- buzz.unarchive_community(p_community uuid) -> text
-- Lets membership writes on the community again.
-- Outcomes: 'unarchived'; 'unchanged' (not archived). Raises: BZISO, BZNCM.
CREATE OR REPLACE FUNCTION buzz.unarchive_community(p_community uuid)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.require_read_committed();
    UPDATE buzz_private.communities c SET archived_at = NULL
    WHERE c.community_id = p_community AND c.archived_at IS NOT NULL;
    IF FOUND THEN
        RETURN 'unarchived';
    END IF;
    PERFORM buzz_private.lock_community(p_community, p_allow_archived => true);
    RETURN 'unchanged';
END
$$;
ALTER FUNCTION buzz.unarchive_community(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.unarchive_community(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.unarchive_community(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.unarchive_community(uuid) IS
    'Unarchives a community: unarchived | unchanged.';
