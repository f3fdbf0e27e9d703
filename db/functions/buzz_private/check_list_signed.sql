-- buzz_private.check_list_signed() -> trigger
-- The commit guard: a deferred constraint trigger on tx_pending_lists, so it runs at COMMIT
-- for every community this transaction marked. insert_signed_events removes the mark; a mark
-- still there means members changed (or a republish was asked for) without a signed list, and
-- the commit fails with BZUNS. A community deleted in the same transaction owes nothing.
-- A community that passes has its scratch rows cleared: nothing of them outlives the commit.
-- SET CONSTRAINTS ... IMMEDIATE only makes it fail sooner.
CREATE OR REPLACE FUNCTION buzz_private.check_list_signed()
RETURNS trigger
-- It runs at COMMIT as whoever commits (a buzz_writer login has no access to buzz_private).
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM buzz_private.tx_pending_lists p
                   WHERE p.xid = NEW.xid AND p.community_id = NEW.community_id) THEN
        PERFORM buzz_private.forget_community_changes(NEW.xid, NEW.community_id);
        RETURN NULL;
    END IF;
    IF NOT EXISTS (SELECT FROM buzz_private.communities c
                   WHERE c.community_id = NEW.community_id) THEN
        PERFORM buzz_private.forget_community_changes(NEW.xid, NEW.community_id);
        RETURN NULL;
    END IF;
    RAISE EXCEPTION 'community % changed without its signed membership list', NEW.community_id
        USING ERRCODE = 'BZUNS',
              HINT = 'Before COMMIT call buzz.prepare_membership_events, sign what it returns, '
                     'and pass the signatures to buzz.insert_signed_events (buzz_signer does this).';
END
$$;
ALTER FUNCTION buzz_private.check_list_signed() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.check_list_signed() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.check_list_signed() IS
    'Commit guard: BZUNS for a marked community whose list was not signed and inserted.';

-- A constraint trigger cannot be replaced in place; the whole file runs in one transaction.
DROP TRIGGER IF EXISTS tx_pending_lists_signed_at_commit ON buzz_private.tx_pending_lists;
CREATE CONSTRAINT TRIGGER tx_pending_lists_signed_at_commit
    AFTER INSERT ON buzz_private.tx_pending_lists
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION buzz_private.check_list_signed();
