-- buzz.moderation_rules(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, rule text, subject text)
-- What the gate enforces, in one statement (one snapshot), as each relay process loads it into
-- memory: of one community, or of every community when p_community is NULL. One row per rule:
-- 'banned_event' (subject: the event id), 'allowed_kind' and 'disallowed_kind' (the kind, as
-- text), 'blocked_ip' (the address or network, as cidr text: 10.0.0.0/8, 192.0.2.1/32). No
-- rows for a community without rules, or an unknown one. (Assigned methods are read by the
-- relay per NIP-86 request: buzz.method_assignees.)
CREATE OR REPLACE FUNCTION buzz.moderation_rules(p_community uuid DEFAULT NULL)
RETURNS TABLE (community_id uuid, rule text, subject text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    SELECT b.community_id, 'banned_event'::text, b.event_id::text
    FROM buzz_private.banned_events b
    WHERE p_community IS NULL OR b.community_id = p_community
    UNION ALL
    SELECT k.community_id, CASE WHEN k.allowed THEN 'allowed_kind' ELSE 'disallowed_kind' END,
           k.kind::text
    FROM buzz_private.kind_rules k
    WHERE p_community IS NULL OR k.community_id = p_community
    UNION ALL
    SELECT i.community_id, 'blocked_ip'::text, i.address::text
    FROM buzz_private.blocked_ips i
    WHERE p_community IS NULL OR i.community_id = p_community;
END;
ALTER FUNCTION buzz.moderation_rules(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.moderation_rules(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.moderation_rules(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.moderation_rules(uuid) IS
    'The banned events, kind rules and blocked addresses of a community, or of all (NULL).';
