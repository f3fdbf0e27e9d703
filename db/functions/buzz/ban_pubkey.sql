-- buzz.ban_pubkey(p_community uuid, p_pubkey text, p_reason text DEFAULT NULL,
--                 p_banned_by text DEFAULT NULL, p_spare_admins boolean DEFAULT false) -> text
-- Bans a pubkey from the community: a member is removed in the same transaction (an 8001
-- and a new list), a pending join request of theirs is dropped, and the pubkey cannot come
-- back by itself (claims and requests answer 'banned'; batch adds and backfill skip it) until
-- unban_pubkey, or an explicit add_relay_member by an owner or admin, lifts the ban.
-- p_reason: at most 1,000 characters; p_banned_by: who banned (a pubkey or a short label).
-- A member it removes leaves as by remove_relay_member: its invites are revoked and the
-- members it brought in are re-attached to its inviter (release_departed).
-- p_spare_admins: the ban a member makes by a method assigned to it, which may not reach an
-- admin (decided under the ban lock, which a promotion takes too).
-- Outcomes: 'banned'; 'already_banned', 'is_owner' (no change: the owner cannot be banned),
-- 'admin_spared' (p_spare_admins: no change).
-- Raises: BZIPK, 22023 (p_reason, p_banned_by, p_spare_admins NULL), BZISO, BZNCM, BZARC.
-- Locks: community FOR KEY SHARE, the ban lock exclusive (lock_bans: a join of this
-- community under way finishes first, and none starts until this commits), the member's row
-- and those of the members it brought in (in pubkey order), its invites.
CREATE OR REPLACE FUNCTION buzz.ban_pubkey(
    p_community uuid, p_pubkey text, p_reason text DEFAULT NULL, p_banned_by text DEFAULT NULL,
    p_spare_admins boolean DEFAULT false)
RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_pubkey text := buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey');
    v_reason text := buzz_private.normalize_note(p_reason, 'p_reason', 1000);
    v_banned_by text := buzz_private.normalize_actor(p_banned_by, 'p_banned_by');
    v_removed boolean;
    v_role text;
BEGIN
    IF p_spare_admins IS NULL THEN
        RAISE EXCEPTION 'p_spare_admins must be true or false'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_community(p_community);
    PERFORM buzz_private.lock_bans(p_community, true);
    -- A member leaves as by remove_relay_member: its invites are revoked, and the members it
    -- brought in are re-attached to its inviter.
    v_removed := buzz_private.remove_member(
        p_community, v_pubkey, CASE WHEN p_spare_admins THEN 'member' END);
    IF NOT v_removed THEN
        v_role := buzz_private.member_role(p_community, v_pubkey);
        IF v_role = 'owner' THEN
            RETURN 'is_owner';
        ELSIF v_role = 'admin' AND p_spare_admins THEN
            RETURN 'admin_spared';
        END IF;
    END IF;
    DELETE FROM buzz_private.join_requests r
    WHERE r.community_id = p_community AND r.pubkey = v_pubkey;
    INSERT INTO buzz_private.banned_pubkeys (community_id, pubkey, reason, banned_by)
    VALUES (p_community, v_pubkey, v_reason, v_banned_by)
    ON CONFLICT (community_id, pubkey) DO NOTHING;
    RETURN CASE WHEN FOUND OR v_removed THEN 'banned' ELSE 'already_banned' END;
END
$$;
ALTER FUNCTION buzz.ban_pubkey(uuid, text, text, text, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.ban_pubkey(uuid, text, text, text, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.ban_pubkey(uuid, text, text, text, boolean) TO buzz_writer;
COMMENT ON FUNCTION buzz.ban_pubkey(uuid, text, text, text, boolean) IS
    'Bans a pubkey, removing it if a member: banned | already_banned | is_owner | admin_spared.';
