-- buzz_private.set_kind_rule(p_community uuid, p_kind integer, p_allowed boolean) -> text
-- Puts a kind where allow_kind (p_allowed true), disallow_kind (false) and clear_kind_rule
-- (NULL: neither list) ask, and announces the change (announce_moderation).
-- Outcomes: 'updated' (the kind moved); 'unchanged' (it was there already).
-- Raises: 22023 (p_kind not 0..65535), BZNCM, BZARC. Locks: lock_moderation, the kind's row.
CREATE OR REPLACE FUNCTION buzz_private.set_kind_rule(
    p_community uuid, p_kind integer, p_allowed boolean)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- A value, not a call: Citus plans no function but IMMUTABLE ones in DO UPDATE SET.
    v_now timestamptz := pg_catalog.now();
BEGIN
    IF p_kind IS NULL OR p_kind NOT BETWEEN 0 AND 65535 THEN
        RAISE EXCEPTION 'p_kind must be an event kind, 0 to 65535'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM buzz_private.lock_moderation(p_community);
    IF p_allowed IS NULL THEN
        DELETE FROM buzz_private.kind_rules k
        WHERE k.community_id = p_community AND k.kind = p_kind;
    ELSE
        INSERT INTO buzz_private.kind_rules AS k (community_id, kind, allowed)
        VALUES (p_community, p_kind, p_allowed)
        ON CONFLICT (community_id, kind) DO UPDATE
            SET allowed = excluded.allowed, updated_at = v_now
            WHERE k.allowed <> excluded.allowed;
    END IF;
    IF NOT FOUND THEN
        RETURN 'unchanged';
    END IF;
    PERFORM buzz_private.announce_moderation(p_community);
    RETURN 'updated';
END
$$;
ALTER FUNCTION buzz_private.set_kind_rule(uuid, integer, boolean) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.set_kind_rule(uuid, integer, boolean) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.set_kind_rule(uuid, integer, boolean) IS
    'Allows (true), disallows (false) or clears (NULL) a kind: updated | unchanged.';
