-- buzz_private.delegable_method(p_method text) -> text
-- A NIP-86 method of buzz-relay that may be assigned to a member (assign_method), as given.
-- Never assignable: supportedmethods (anyone may call it), assignmethod and unassignmethod (a
-- delegate could hand out what nobody gave them), setmemberrole (a delegate could make
-- themselves an admin), and disallowpubkey, the old name of unallowpubkey (assign that).
-- The one list of them: the relay honours assignments as stored (a test holds every method
-- of buzz-relay assignable here but those five).
-- Raises 22023 (invalid_parameter_value) for NULL or any other name.
CREATE OR REPLACE FUNCTION buzz_private.delegable_method(p_method text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_method IS NULL OR NOT p_method = ANY (ARRAY[
        'allowpubkey', 'unallowpubkey', 'listallowedpubkeys',
        'banpubkey', 'unbanpubkey', 'listbannedpubkeys',
        'changerelayname', 'changerelaydescription', 'changerelayicon', 'setjoinpolicy',
        'createclaim', 'listclaims', 'deleteclaim', 'listinvites', 'revokeinvite',
        'listeventsneedingmoderation', 'allowevent', 'banevent', 'unbanevent', 'listbannedevents',
        'allowkind', 'disallowkind', 'clearkind', 'listallowedkinds', 'listdisallowedkinds',
        'blockip', 'unblockip', 'listblockedips', 'listmethodassignees',
        'createrole', 'editrole', 'deleterole', 'assignrole', 'unassignrole', 'listroles',
        'removebranch', 'setinvitequota', 'listinvitequotas', 'listinvitetree']) THEN
        RAISE EXCEPTION 'p_method must be a NIP-86 method that may be assigned to a member'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'supportedmethods, assignmethod, unassignmethod and setmemberrole '
                         'are never assigned; disallowpubkey is unallowpubkey.';
    END IF;
    RETURN p_method;
END
$$;
ALTER FUNCTION buzz_private.delegable_method(text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.delegable_method(text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.delegable_method(text) IS
    'A NIP-86 method that may be assigned to a member, else 22023.';
