-- buzz.remove_relay_member(p_community uuid, p_pubkey text, p_with_branch boolean DEFAULT false,
--                          p_spare_admins boolean DEFAULT false) -> text
-- Removes a member or admin. The owner is never removed (transfer ownership first).
-- Without the branch, the members it brought in stay and are re-attached (their added_by
-- becomes its added_by). With p_with_branch, its branch (invite_branch: everyone it brought
-- in, recursively, by added_by; never the owner, nor anyone below the owner, who stays with
-- their inviter) is removed too, in this transaction: one list, one 8001 each; whoever stays
-- while their inviter goes is re-attached. Either way the departed members' invites are
-- revoked (release_departed).
-- p_spare_admins: the removal a member makes by a method assigned to it, which may not reach
-- an admin: if the member, or with the branch anyone in it, is an admin, nothing changes. It
-- is decided on the rows as locked, so a promotion committed meanwhile counts.
-- Outcomes: 'removed'; 'not_member', 'is_owner', 'admin_spared' (p_spare_admins) (no change).
-- Raises: BZIPK, 22023 (p_with_branch or p_spare_admins NULL), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE; with the branch, the ban lock exclusive (lock_bans: a join
-- under way finishes first and is then taken with the branch if it hangs from it, and none
-- starts until this commits); the member rows, in pubkey order, FOR UPDATE; their invites.
CREATE OR REPLACE FUNCTION buzz.remove_relay_member(
    p_community uuid, p_pubkey text, p_with_branch boolean DEFAULT false,
    p_spare_admins boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_branch text[];
    v_gone text[];
    v_parents text[];
    v_admins boolean;
    v_role text;
BEGIN
    IF p_with_branch IS NULL OR p_spare_admins IS NULL THEN
        RAISE EXCEPTION '% must be true or false',
            CASE WHEN p_with_branch IS NULL THEN 'p_with_branch' ELSE 'p_spare_admins' END
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    IF NOT p_with_branch THEN
        IF buzz_private.remove_member(
               p_community, v_pubkey, CASE WHEN p_spare_admins THEN 'member' END) THEN
            RETURN 'removed';
        END IF;
    ELSIF buzz_private.member_role(p_community, v_pubkey) IN ('admin', 'member') THEN
        PERFORM buzz_private.lock_bans(p_community, true);
        -- The branch (invite_branch), read after the ban lock: every join that committed is
        -- seen, and none is under way.
        v_branch := ARRAY(SELECT b.pubkey FROM buzz.invite_branch(p_community, v_pubkey) b);
        PERFORM FROM buzz_private.relay_members m
        WHERE m.community_id = p_community
          AND (m.pubkey = ANY (v_branch) OR m.added_by = ANY (v_branch))
        ORDER BY m.pubkey
        FOR UPDATE;
        -- As they are now that they are locked: one may have left, or become the owner.
        SELECT pg_catalog.array_agg(m.pubkey::text ORDER BY m.pubkey),
               pg_catalog.array_agg(m.added_by ORDER BY m.pubkey),
               pg_catalog.bool_or(m.role = 'admin')
        INTO v_gone, v_parents, v_admins
        FROM buzz_private.relay_members m
        WHERE m.community_id = p_community AND m.pubkey = ANY (v_branch) AND m.role <> 'owner';
        IF v_pubkey = ANY (v_gone) THEN
            IF p_spare_admins AND v_admins THEN
                RETURN 'admin_spared';
            END IF;
            DELETE FROM buzz_private.relay_members m
            WHERE m.community_id = p_community AND m.pubkey = ANY (v_gone);
            PERFORM buzz_private.release_departed(p_community, v_gone, v_parents);
            RETURN 'removed';
        END IF;
    END IF;
    v_role := buzz_private.member_role(p_community, v_pubkey);
    RETURN CASE WHEN v_role = 'owner' THEN 'is_owner'
                WHEN v_role = 'admin' AND p_spare_admins THEN 'admin_spared'
                ELSE 'not_member' END;
END
$$;
ALTER FUNCTION buzz.remove_relay_member(uuid, text, boolean, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.remove_relay_member(uuid, text, boolean, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.remove_relay_member(uuid, text, boolean, boolean) TO buzz_writer;
COMMENT ON FUNCTION buzz.remove_relay_member(uuid, text, boolean, boolean) IS
    'Removes a member or admin, with its branch if asked: removed | not_member | is_owner'
    ' | admin_spared.';
