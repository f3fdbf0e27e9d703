-- buzz.assign_method(p_community uuid, p_pubkey text, p_method text,
--                    p_assigned_by text DEFAULT NULL) -> text
-- Lets a member call a NIP-86 method of the relay that their base role does not let them
-- call (SPEC §7: "a member may call the methods assigned to them"). Only a member may be
-- assigned one, and an assignment ends with the membership (SPEC §10): one who leaves, is
-- removed or banned loses theirs in that transaction (release_departed), and one who comes
-- back holds none until assigned again. Which methods may be assigned:
-- buzz_private.delegable_method.
-- Not a membership write: no list. Every relay process reloads the community's rules when it
-- commits (NOTIFY buzz_moderation).
-- p_assigned_by: who assigned it (a pubkey or a short label).
-- At most 1,000 assignments per community.
-- Outcomes: 'assigned'; 'already_assigned', 'not_member' (no change).
-- Raises: BZIPK, 22023 (p_method not a method that may be assigned, p_assigned_by), 54000
-- (the community has 1,000 assignments already), BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the moderation lock (lock_moderation), the holder's member
-- row FOR KEY SHARE (a departure committing meanwhile either takes this assignment back or
-- makes it 'not_member': release_departed), the new row.
CREATE OR REPLACE FUNCTION buzz.assign_method(
    p_community uuid, p_pubkey text, p_method text, p_assigned_by text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_method text := buzz_private.delegable_method(p_method);
    v_assigned_by text := buzz_private.normalize_actor(p_assigned_by, 'p_assigned_by');
BEGIN
    PERFORM buzz_private.lock_moderation(p_community);
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.pubkey = v_pubkey
    FOR KEY SHARE;
    IF NOT FOUND THEN
        RETURN 'not_member';
    END IF;
    IF EXISTS (SELECT FROM buzz_private.method_assignments a
               WHERE a.community_id = p_community AND a.pubkey = v_pubkey
                 AND a.method = v_method) THEN
        RETURN 'already_assigned';
    END IF;
    IF (SELECT count(*) FROM buzz_private.method_assignments a
        WHERE a.community_id = p_community) >= 1000 THEN
        RAISE EXCEPTION 'the community has 1000 assigned methods, the most it may have'
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Unassign methods from members who no longer need them, or make them admins.';
    END IF;
    INSERT INTO buzz_private.method_assignments (community_id, pubkey, method, assigned_by)
    VALUES (p_community, v_pubkey, v_method, v_assigned_by);
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'assigned';
END
$$;
ALTER FUNCTION buzz.assign_method(uuid, text, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.assign_method(uuid, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.assign_method(uuid, text, text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.assign_method(uuid, text, text, text) IS
    'Lets a member call a NIP-86 method: assigned | already_assigned | not_member.';
