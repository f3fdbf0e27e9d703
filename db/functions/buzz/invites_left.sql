-- buzz.invites_left(p_community uuid, p_pubkey text) -> integer
-- How many more members p_pubkey may bring in by invites: NULL when unlimited (the owner;
-- admins unless set_invite_quota says otherwise); else its role's quota less the members it
-- brought in who are still members, less the uses left on its live invites (an unlimited one
-- takes them all), never below 0. A non-member, in an unknown community too: 0; so is NULL,
-- which names nobody (a read answers, as the others do for NULL).
-- Raises: BZIPK (a malformed pubkey).
CREATE OR REPLACE FUNCTION buzz.invites_left(p_community uuid, p_pubkey text)
RETURNS integer
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_pubkey IS NULL THEN 0
            ELSE buzz_private.invites_left(p_community,
                                           buzz_private.normalize_pubkey(p_pubkey, 'p_pubkey'))
       END;
ALTER FUNCTION buzz.invites_left(uuid, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.invites_left(uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.invites_left(uuid, text) TO buzz_reader;
COMMENT ON FUNCTION buzz.invites_left(uuid, text) IS
    'How many more members a pubkey may bring in (NULL: no limit).';
