-- buzz_private.record_policy_acceptance(p_community, p_pubkey, p_policy_version) -> void
-- Records that a pubkey accepted a version of the community's policy; the first acceptance of
-- each version is kept. Nothing when the version is NULL. The caller has checked the version
-- with check_policy_version, before any outcome.
CREATE OR REPLACE FUNCTION buzz_private.record_policy_acceptance(
    p_community uuid, p_pubkey text, p_policy_version text)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    INSERT INTO buzz_private.policy_acceptances (community_id, pubkey, policy_version)
    SELECT p_community, p_pubkey, p_policy_version
    WHERE p_policy_version IS NOT NULL
    ON CONFLICT DO NOTHING;
END
$$;
ALTER FUNCTION buzz_private.record_policy_acceptance(uuid, text, text) OWNER TO buzz_owner;
REVOKE ALL ON FUNCTION buzz_private.record_policy_acceptance(uuid, text, text) FROM PUBLIC;
COMMENT ON FUNCTION buzz_private.record_policy_acceptance(uuid, text, text) IS
    'Records a policy acceptance when a version is given.';
