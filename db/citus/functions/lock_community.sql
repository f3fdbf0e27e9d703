-- buzz_private.lock_community(p_community, p_allow_archived) -> void, as a Citus cluster runs it
--
-- Replaces the one-server form (buzz_signer/citus.py): the same checks, without the row lock
-- FOR KEY SHARE on communities. communities is a reference table here, and Citus takes a
-- row lock on one as a lock of the whole table, on one node for the cluster: every write of
-- every community would queue behind every other. Citus already keeps what the row lock kept
-- on one server: a statement that changes a table referencing communities (each write path
-- changes one) locks it against a change of communities, so a delete_community (or archive)
-- and the writes of any community wait for each other, whichever came first.
--
-- What it takes instead, on the node it runs on (a write's worker): the community lock
-- (advisory (4, hashtext(community_id::text))) shared. delete_community takes it exclusive on
-- that worker before it changes communities (buzz_node.hold_community), so that it waits for
-- the writes under way there and later ones wait for it, as the row lock made them on one
-- server; without it, the deletion's cascade on the worker and a write there could each wait
-- for the other across nodes.
--
-- Raises BZNCM for a missing community, BZARC for an archived one unless p_allow_archived.
-- First bounds this transaction's lock waits and idleness (bound_waits).
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
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(4, pg_catalog.hashtext(p_community::text));
    SELECT c.archived_at IS NOT NULL INTO v_archived
    FROM buzz_private.communities c
    WHERE c.community_id = p_community;
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
    'Checks the community exists and is writable (on a cluster, without a row lock).';
