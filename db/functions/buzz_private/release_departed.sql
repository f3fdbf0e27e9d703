-- buzz_private.release_departed(p_community uuid, p_departed text[], p_parents text[]) -> void
-- What follows when members stop being members (removed, banned, left; their rows already
-- deleted in this transaction): p_departed are their pubkeys, p_parents their added_by, in
-- the same order.
-- - Their invites are revoked: an invite is its creator's, counted on its creator's quota,
--   and nobody may join hanging from someone who is gone (a claim waiting for the invite's
--   row then finds none: 'invalid').
-- - The members they brought in are re-attached: their added_by becomes the departed
--   member's added_by, followed up past members departing with it (a branch), so that no
--   member hangs from a departed one. A loop of added_by that would make a member its own
--   inviter leaves it NULL (nobody recorded).
-- - The methods assigned to them are taken back (SPEC §10: delegations end with membership;
--   one who comes back holds none until assigned again). No NOTIFY: relays read assignments
--   on each call, and on Citus this runs on a worker, which must not NOTIFY (two-phase commit).
-- - Their own profiles (kind 0) are deleted (SPEC §8: one who comes back sends it again).
-- Locks: the invite rows, then the re-attached members' rows FOR NO KEY UPDATE in pubkey
-- order (the callers have locked the rows they knew of already: lock_with_invitees), then the
-- departed members' assignment rows and profiles. assign_method and set_member_profile lock
-- the member's row FOR KEY SHARE, which the departure's DELETE waits for (or they wait for the
-- departure): an assignment or a profile made while a member leaves is either committed first
-- and deleted here, or refused ('not_member').
CREATE OR REPLACE FUNCTION buzz_private.release_departed(
    p_community uuid, p_departed text[], p_parents text[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_parents text[] := ARRAY[]::text[];
    v_parent text;
    v_steps integer;
BEGIN
    IF coalesce(pg_catalog.cardinality(p_departed), 0) = 0 THEN
        RETURN;
    END IF;
    DELETE FROM buzz_private.relay_invites i
    WHERE i.community_id = p_community AND i.created_by = ANY (p_departed);
    -- Each departed member's nearest inviter that stays.
    FOR i IN 1 .. pg_catalog.cardinality(p_departed) LOOP
        v_parent := p_parents[i];
        v_steps := 0;
        WHILE v_parent = ANY (p_departed) AND v_steps <= pg_catalog.cardinality(p_departed) LOOP
            v_parent := p_parents[pg_catalog.array_position(p_departed, v_parent)];
            v_steps := v_steps + 1;
        END LOOP;
        IF v_parent = ANY (p_departed) THEN  -- a loop among the departed: nobody stays
            v_parent := NULL;
        END IF;
        v_parents := pg_catalog.array_append(v_parents, v_parent);
    END LOOP;
    PERFORM FROM buzz_private.relay_members m
    WHERE m.community_id = p_community AND m.added_by = ANY (p_departed)
    ORDER BY m.pubkey
    FOR NO KEY UPDATE;
    -- Nobody to re-attach (the common case): no UPDATE, whose statement trigger would run
    -- for no row.
    IF FOUND THEN
        UPDATE buzz_private.relay_members m
        SET added_by = NULLIF(d.parent, m.pubkey::text)
        FROM ROWS FROM (pg_catalog.unnest(p_departed), pg_catalog.unnest(v_parents))
             AS d (departed, parent)
        WHERE m.community_id = p_community AND m.added_by = d.departed;
    END IF;
    DELETE FROM buzz_private.method_assignments a
    WHERE a.community_id = p_community AND a.pubkey = ANY (p_departed);
    DELETE FROM buzz_private.member_profiles p
    WHERE p.community_id = p_community AND p.pubkey = ANY (p_departed);
END
$$;
ALTER FUNCTION buzz_private.release_departed(uuid, text[], text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.release_departed(uuid, text[], text[]) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.release_departed(uuid, text[], text[]) IS
    'Revokes departed members'' invites, assigned methods and profiles; re-attaches their invitees.';
