-- buzz.insert_signed_events(p_ids text[], p_sigs text[]) -> SETOF json
--
-- Phase two of a list write: the signatures of every row of the transaction's last prepare,
-- in its order. buzz_private.insert_events says what it stores, returns and raises.
CREATE OR REPLACE FUNCTION buzz.insert_signed_events(p_ids text[], p_sigs text[])
RETURNS SETOF json
-- PL/pgSQL, whose plan of the call is kept for the session.
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY SELECT * FROM buzz_private.insert_events(p_ids, p_sigs, NULL);
END
$$;
ALTER FUNCTION buzz.insert_signed_events(text[], text[]) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz.insert_signed_events(text[], text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION buzz.insert_signed_events(text[], text[]) TO buzz_writer;
COMMENT ON FUNCTION buzz.insert_signed_events(text[], text[]) IS
    'Phase two of a list write: stores the signed events and makes the new lists live.';
