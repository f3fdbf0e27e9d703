-- buzz.member_list_drift(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, problem text, detail text)
-- What is wrong with live lists and role definitions, for one community or all; no rows when
-- every list and definition agrees. Problems of the list:
--   'missing'         the community has no live list;
--   'members_differ'  the list names other members or roles than relay_members holds (members
--                     changed outside the API, e.g. a restore with triggers off);
--   'id_mismatch'     the list's id is not the sha256 of its content;
--   'bad_signature'   the list's signature does not verify (BIP-340) for its id and pubkey
--                     (e.g. edited by a superuser with triggers off).
-- Of a role (the detail names it):
--   'role_missing'        a defined role has no live 33534 (e.g. defined by a migration);
--   'role_differs'        a live 33534 says other than the stored definition, or its role is
--                         no longer defined;
--   'role_id_mismatch'    a role event's (33534 or kind 5) id is not the sha256 of its content;
--   'role_bad_signature'  a role event's signature does not verify.
-- Repair with republish_member_list (kind 5 deletions are not re-signed by it). buzz-admin verify checks the same from outside the
-- database. Reads every member of every community checked: an operator's tool.
--
-- A community at a time, its list's tags and its members' read by statements of their own:
-- on a Citus cluster a statement that reads a community's tables must not call a function
-- that reads more of them (docs/scale-out.md).
CREATE OR REPLACE FUNCTION buzz.member_list_drift(p_community uuid DEFAULT NULL)
RETURNS TABLE (community_id uuid, problem text, detail text)
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_community uuid;
    v_list record;
    v_listed text;  -- the list's tags, as the stored pieces build them
    v_stored text;  -- the tags relay_members holds now
BEGIN
    FOR v_community IN
        SELECT c.community_id FROM buzz_private.communities c
        WHERE p_community IS NULL OR c.community_id = p_community
        ORDER BY c.community_id
    LOOP
        v_listed := buzz_private.list_tags(v_community);
        v_stored := '[["-"]' || coalesce((SELECT pg_catalog.string_agg(t.tags, '' ORDER BY t.prefix)
                                          FROM buzz_private.member_tags(v_community, NULL) t),
                                         '') || ']';
        SELECT l.id, l.pubkey, l.created_at, l.sig INTO v_list
        FROM buzz_private.member_lists l WHERE l.community_id = v_community;
        RETURN QUERY
            WITH role_checked AS (
                SELECT coalesce(d.role_id, e.role_id) AS role_id,
                       d.role_id IS NOT NULL AS defined,
                       e.kind, e.id, e.pubkey, e.created_at, e.tags, e.sig,
                       buzz_private.role_event_tags(d.role_id, d.label, d.description, d.color,
                                                    d.sort_order) AS stored
                FROM (SELECT * FROM buzz_private.roles r WHERE r.community_id = v_community) AS d
                FULL JOIN (SELECT * FROM buzz_private.role_events r
                           WHERE r.community_id = v_community) AS e
                    ON e.role_id = d.role_id
            ), problems AS (
                SELECT 'missing' AS problem, 'no live membership list' AS detail
                WHERE v_list.id IS NULL
                UNION ALL
                SELECT 'members_differ',
                       pg_catalog.format('list %s names %s members; relay_members holds %s '
                                         '(members or their roles differ)',
                                         v_list.id,
                                         pg_catalog.json_array_length(v_listed::json) - 1,
                                         pg_catalog.json_array_length(v_stored::json) - 1)
                WHERE v_list.id IS NOT NULL AND v_listed <> v_stored
                UNION ALL
                SELECT 'id_mismatch',
                       pg_catalog.format('list %s hashes to %s', v_list.id,
                                         buzz_private.event_id(buzz_private.serialize_event(
                                             v_list.pubkey, v_list.created_at, 13534, v_listed)))
                WHERE v_list.id IS NOT NULL
                  AND v_list.id <> buzz_private.event_id(buzz_private.serialize_event(
                                       v_list.pubkey, v_list.created_at, 13534, v_listed))
                UNION ALL
                SELECT 'bad_signature',
                       pg_catalog.format('the signature of list %s does not verify for %s',
                                         v_list.id, v_list.pubkey)
                WHERE v_list.id IS NOT NULL
                  AND NOT buzz_private.bip340_verify(pg_catalog.decode(v_list.sig, 'hex'),
                                                     pg_catalog.decode(v_list.id, 'hex'),
                                                     pg_catalog.decode(v_list.pubkey, 'hex'))
                UNION ALL
                SELECT 'role_missing',
                       pg_catalog.format('role %s has no live 33534 definition', r.role_id)
                FROM role_checked r WHERE r.defined AND r.kind IS DISTINCT FROM 33534
                UNION ALL
                SELECT 'role_differs',
                       CASE WHEN r.defined
                            THEN pg_catalog.format('the 33534 of role %s has tags %s; the '
                                                   'definition is %s', r.role_id, r.tags, r.stored)
                            ELSE pg_catalog.format('role %s is not defined, yet its 33534 %s is '
                                                   'live', r.role_id, r.id) END
                FROM role_checked r
                WHERE r.kind = 33534 AND (NOT r.defined OR r.tags <> r.stored)
                UNION ALL
                SELECT 'role_id_mismatch',
                       pg_catalog.format('event %s of role %s hashes to %s', r.id, r.role_id,
                                         buzz_private.event_id(buzz_private.serialize_event(
                                             r.pubkey, r.created_at, r.kind, r.tags)))
                FROM role_checked r
                WHERE r.id IS NOT NULL
                  AND r.id <> buzz_private.event_id(buzz_private.serialize_event(
                                  r.pubkey, r.created_at, r.kind, r.tags))
                UNION ALL
                SELECT 'role_bad_signature',
                       pg_catalog.format('the signature of event %s of role %s does not verify '
                                         'for %s', r.id, r.role_id, r.pubkey)
                FROM role_checked r
                WHERE r.id IS NOT NULL
                  AND NOT buzz_private.bip340_verify(pg_catalog.decode(r.sig, 'hex'),
                                                     pg_catalog.decode(r.id, 'hex'),
                                                     pg_catalog.decode(r.pubkey, 'hex'))
            )
            SELECT v_community, p.problem, p.detail FROM problems p ORDER BY 2, 3;
    END LOOP;
END
$$;
ALTER FUNCTION buzz.member_list_drift(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.member_list_drift(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.member_list_drift(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.member_list_drift(uuid) IS
    'Live lists and role definitions that are missing, say other than stored, whose id is '
    'wrong, or whose signature does not verify.';
