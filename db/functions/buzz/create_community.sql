-- buzz.create_community(p_host text, p_owner text) -> TABLE(community_id uuid, outcome text)
-- Creates a community for a host with its owner as first member (the first list) and the
-- definitions of its three base roles (their 33534 events).
-- Outcomes: 'created' (new id); 'exists' (same host and owner: an idempotent retry, the
-- existing id); 'host_taken' (another owner's host, NULL id); 'limit_reached' (the owner
-- already owns max_communities_per_owner communities, NULL id).
-- Raises: BZHST, BZIPK, BZISO.
-- Locks: owner-limit lock of the owner; a concurrent creator of the same host waits for ours.
CREATE OR REPLACE FUNCTION buzz.create_community(p_host text, p_owner text)
RETURNS TABLE (community_id uuid, outcome text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_host text := buzz_private.normalize_host(p_host);
    v_owner text := buzz_private.normalize_pubkey(p_owner, 'p_owner');
    v_id uuid;
BEGIN
    PERFORM buzz_private.require_read_committed();
    PERFORM buzz_private.lock_owner_limit(v_owner);
    LOOP
        SELECT c.community_id INTO v_id FROM buzz_private.communities c WHERE c.host = v_host;
        IF FOUND THEN
            community_id := NULL;
            outcome := 'host_taken';
            IF EXISTS (SELECT FROM buzz_private.relay_members m
                       WHERE m.community_id = v_id AND m.pubkey = v_owner
                         AND m.role = 'owner') THEN
                community_id := v_id;
                outcome := 'exists';
            END IF;
            RETURN NEXT;
            RETURN;
        END IF;
        IF (SELECT pg_catalog.count(*) FROM buzz_private.relay_members m
            WHERE m.pubkey = v_owner AND m.role = 'owner')
           >= (SELECT s.max_communities_per_owner FROM buzz_private.settings s) THEN
            community_id := NULL;
            outcome := 'limit_reached';
            RETURN NEXT;
            RETURN;
        END IF;
        -- A concurrent creator of this host makes us wait; if it commits we see its row on
        -- the next turn, if it rolls back our insert goes through.
        INSERT INTO buzz_private.communities AS c (host) VALUES (v_host)
        ON CONFLICT (host) DO NOTHING
        RETURNING c.community_id INTO v_id;
        EXIT WHEN v_id IS NOT NULL;
    END LOOP;
    INSERT INTO buzz_private.relay_members (community_id, pubkey, role, added_by)
    VALUES (v_id, v_owner, 'owner', 'create');
    -- The base roles' definitions, published with the first list (SPEC §6).
    INSERT INTO buzz_private.roles (community_id, role_id, label, sort_order)
    VALUES (v_id, 'owner', 'Owner', 0), (v_id, 'admin', 'Admin', 1), (v_id, 'member', 'Member', 2);
    community_id := v_id;
    outcome := 'created';
    RETURN NEXT;
END
$$;
ALTER FUNCTION buzz.create_community(text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.create_community(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.create_community(text, text) TO buzz_writer;
COMMENT ON FUNCTION buzz.create_community(text, text) IS
    'Creates a community with its owner: created | exists | host_taken | limit_reached.';
