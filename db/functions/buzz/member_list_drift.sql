-- buzz.member_list_drift(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, problem text, detail text)
-- What is wrong with live lists, for one community or all; no rows when every list agrees.
-- Problems:
--   'missing'         the community has no live list;
--   'members_differ'  the list names other members or roles than relay_members holds (members
--                     changed outside the API, e.g. a restore with triggers off);
--   'id_mismatch'     the list's id is not the sha256 of its content;
--   'bad_signature'   the list's signature does not verify (BIP-340) for its id and pubkey
--                     (e.g. edited by a superuser with triggers off).
-- Repair with republish_member_list. buzz-admin verify checks the same from outside the
-- database. Reads every member of every community checked: an operator's tool.
CREATE OR REPLACE FUNCTION buzz.member_list_drift(p_community uuid DEFAULT NULL)
RETURNS TABLE (community_id uuid, problem text, detail text)
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
    WITH checked AS (
        SELECT c.community_id, l.id, l.pubkey, l.created_at, l.sig,
               buzz_private.list_tags(c.community_id) AS listed,
               '[["-"]' || coalesce((SELECT pg_catalog.string_agg(t.tags, '' ORDER BY t.prefix)
                                     FROM buzz_private.member_tags(c.community_id, NULL) t),
                                    '') || ']' AS stored
        FROM buzz_private.communities c
        LEFT JOIN buzz_private.member_lists l ON l.community_id = c.community_id
        WHERE p_community IS NULL OR c.community_id = p_community
    )
    SELECT k.community_id, 'missing', 'no live membership list'
    FROM checked k WHERE k.id IS NULL
    UNION ALL
    SELECT k.community_id, 'members_differ',
           pg_catalog.format('list %s names %s members; relay_members holds %s',
                             k.id,
                             pg_catalog.json_array_length(k.listed::json) - 1,
                             pg_catalog.json_array_length(k.stored::json) - 1)
    FROM checked k WHERE k.id IS NOT NULL AND k.listed <> k.stored
    UNION ALL
    SELECT k.community_id, 'id_mismatch',
           pg_catalog.format('list %s hashes to %s', k.id,
                             buzz_private.event_id(buzz_private.serialize_event(
                                 k.pubkey, k.created_at, 13534, k.listed)))
    FROM checked k
    WHERE k.id IS NOT NULL
      AND k.id <> buzz_private.event_id(buzz_private.serialize_event(
                      k.pubkey, k.created_at, 13534, k.listed))
    UNION ALL
    SELECT k.community_id, 'bad_signature',
           pg_catalog.format('the signature of list %s does not verify for %s', k.id, k.pubkey)
    FROM checked k
    WHERE k.id IS NOT NULL
      AND NOT buzz_private.bip340_verify(pg_catalog.decode(k.sig, 'hex'),
                                         pg_catalog.decode(k.id, 'hex'),
                                         pg_catalog.decode(k.pubkey, 'hex'))
    ORDER BY 1, 2;
END;
ALTER FUNCTION buzz.member_list_drift(uuid) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.member_list_drift(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.member_list_drift(uuid) TO buzz_reader;
COMMENT ON FUNCTION buzz.member_list_drift(uuid) IS
    'Live lists that are missing, name other members than stored, whose id is wrong, or whose '
    'signature does not verify.';
