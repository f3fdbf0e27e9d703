-- buzz_private.use_generic_plans() -> void
-- For the rest of this transaction, each statement of the write path runs the plan it made
-- once for the session (plan_cache_mode = force_generic_plan) instead of being planned again
-- at every call. Left to choose, PostgreSQL plans a statement anew for as long as a plan for
-- the values at hand looks cheaper than its plan for any value, as it does at a small community
-- beside large ones, or when an array argument holds one element: a tenth of a 10-member
-- write went to planning. The write path's statements are written so that their plan for
-- any value is the right one (docs/design.md, "Plans the write keeps"). A session that chose a
-- mode of its own keeps it. Called first by every membership write and by prepare.
CREATE OR REPLACE FUNCTION buzz_private.use_generic_plans()
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF pg_catalog.current_setting('plan_cache_mode') = 'auto' THEN
        PERFORM pg_catalog.set_config('plan_cache_mode', 'force_generic_plan', true);
    END IF;
END
$$;
ALTER FUNCTION buzz_private.use_generic_plans() OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.use_generic_plans() FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.use_generic_plans() IS
    'Keeps the write path''s statements on their session-long generic plans for this transaction.';
