-- buzz_private.remove_member(p_community uuid, p_pubkey text, p_only_role text DEFAULT NULL)
--   -> boolean
-- A member's departure, as remove_relay_member (without the branch),
-- remove_relay_member_if_role and ban_pubkey make it: deletes the member's row unless it is
-- the owner (or, with p_only_role, unless it has that role), then revokes its invites and
-- re-attaches the members it brought in (release_departed). True when it removed the member;
-- the caller tells why not (member_role).
-- Locks: the member's row and those of the members it brought in, in pubkey order, FOR
-- UPDATE (one of them is deleted, the others' added_by change), before anything changes; the
-- role condition is rechecked on the newest row version if a concurrent transfer made this
-- pubkey the owner while it waited.
CREATE OR REPLACE FUNCTION buzz_private.remove_member(
    p_community uuid, p_pubkey text, p_only_role text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_role text := buzz_private.member_role(p_community, p_pubkey);
    v_parent text;
BEGIN
    IF v_role IS NULL OR v_role = 'owner' OR v_role <> coalesce(p_only_role, v_role) THEN
        RETURN false;
    END IF;
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND (m.pubkey = p_pubkey OR m.added_by = p_pubkey)
    ORDER BY m.pubkey
    FOR UPDATE;
    DELETE FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.pubkey = p_pubkey AND m.role <> 'owner'
      AND m.role = coalesce(p_only_role, m.role)
    RETURNING m.added_by INTO v_parent;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM buzz_private.release_departed(p_community, ARRAY[p_pubkey], ARRAY[v_parent]);
    RETURN true;
END
$$;
ALTER FUNCTION buzz_private.remove_member(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.remove_member(uuid, text, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.remove_member(uuid, text, text) IS
    'Removes a member (never the owner), revoking its invites and re-attaching its invitees.';
