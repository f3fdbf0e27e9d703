-- buzz_private.lock_community(p_community, p_allow_archived) -> void
-- The community row lock every membership write takes first: FOR KEY SHARE, the same lock a
-- foreign-key check takes. It keeps the community from being deleted under the write, yet
-- never blocks, and is never blocked by, archive/unarchive (FOR NO KEY UPDATE) or other writers.
-- Raises BZNCM for a missing community, BZARC for an archived one unless p_allow_archived.
-- An archive that commits later is caught by prepare, after the list lock. First bounds this
-- transaction's lock waits and idleness (bound_waits) and keeps its plans (use_generic_plans).
CREATE OR REPLACE FUNCTION buzz_private.lock_community(
    p_community uuid, p_allow_archived boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_archived boolean;
BEGIN
    PERFORM buzz_private.bound_waits();
    PERFORM buzz_private.use_generic_plans();
    SELECT c.archived_at IS NOT NULL INTO v_archived
    FROM buzz_private.communities c
    WHERE c.community_id = p_community
    FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no community %', coalesce(p_community::text, 'NULL')
            USING ERRCODE = 'BZNCM', HINT = 'Look the id up with buzz.community_id(host).';
    END IF;
    IF v_archived AND NOT p_allow_archived THEN
        RAISE EXCEPTION 'community % is archived', p_community
            USING ERRCODE = 'BZARC', HINT = 'Unarchive it with buzz.unarchive_community first.';
    END IF;
END
$$;
ALTER FUNCTION buzz_private.lock_community(uuid, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.lock_community(uuid, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.lock_community(uuid, boolean) IS
    'FOR KEY SHARE on the community row; BZNCM if missing, BZARC if archived.';
