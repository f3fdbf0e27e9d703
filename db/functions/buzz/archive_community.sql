-- buzz.archive_community(p_community uuid) -> text
-- Freezes a community: every membership write on it raises BZARC from then on, including a
-- write already under way whose list lock is granted after this commits. Its list stays live.
-- Outcomes: 'archived'; 'unchanged' (already archived).
-- Raises: BZISO, BZNCM. Locks: the community row FOR NO KEY UPDATE, which writers' FOR KEY SHARE
-- does not conflict with: archiving never waits for a writer, nor a writer for it.
CREATE OR REPLACE FUNCTION buzz.archive_community(p_community uuid)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM buzz_private.require_read_committed();
    UPDATE buzz_private.communities c SET archived_at = pg_catalog.now()
    WHERE c.community_id = p_community AND c.archived_at IS NULL;
    IF FOUND THEN
        RETURN 'archived';
    END IF;
    PERFORM buzz_private.lock_community(p_community, p_allow_archived => true);
    RETURN 'unchanged';
END
$$;
ALTER FUNCTION buzz.archive_community(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.archive_community(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.archive_community(uuid) TO buzz_writer;
COMMENT ON FUNCTION buzz.archive_community(uuid) IS
    'Archives a community: archived | unchanged.';
