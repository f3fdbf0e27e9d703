-- buzz.set_join_policy(p_community uuid, p_policy text) -> text
-- Outcomes updated / unchanged, the default 'invite' (setting it on a new community changes
-- nothing and makes no row), every policy, other values 22023 (nothing changed), pending
-- requests kept whatever the policy, the other profile fields kept, no list owed, BZNCM,
-- BZARC, and who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.policy(p_community uuid) RETURNS text LANGUAGE sql
RETURN (SELECT p.join_policy FROM buzz.community_profile(p_community) p);
CREATE FUNCTION pg_temp.policy_throws(p_community uuid, p_policy text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.set_join_policy(%L, %L)', p_community, p_policy), p_code, NULL,
                 p_description);

SELECT plan(34);

SELECT function_returns('buzz', 'set_join_policy', ARRAY['uuid', 'text'], 'text',
                        'set_join_policy returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset

-- The default
SELECT is(pg_temp.policy(:'c'), 'invite', 'a new community''s policy is invite');
SELECT is(buzz.set_join_policy(:'c', 'invite'), 'unchanged', 'setting invite on it: unchanged');
SELECT is((SELECT count(*) FROM buzz_private.community_profiles p WHERE p.community_id = :'c'), 0::bigint,
          '... and no profile row is made');

-- Every policy
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'request: updated');
SELECT is(pg_temp.policy(:'c'), 'request', '... read back');
SELECT is(buzz.set_join_policy(:'c', 'request'), 'unchanged', '... again: unchanged');
SELECT is(buzz.set_join_policy(:'c', 'open'), 'updated', 'open: updated');
SELECT is(pg_temp.policy(:'c'), 'open', '... read back');
SELECT is(buzz.set_join_policy(:'c', 'invite'), 'updated', 'invite again: updated');
SELECT is(pg_temp.policy(:'c'), 'invite', '... read back');
SELECT ok(NOT pg_temp.marked(), 'not a membership write: no list owed');

-- The profile's fields are kept; its row is shared
SELECT is(buzz.set_community_profile(:'c', 'name', 'Buzz'), 'updated', 'a name set');
SELECT is(buzz.set_join_policy(:'c', 'open'), 'updated', 'then the policy');
SELECT results_eq(format('SELECT p.name, p.join_policy FROM buzz.community_profile(%L) p', :'c'),
                  $$VALUES ('Buzz', 'open')$$, '... the name is kept');
SELECT is(buzz.set_community_profile(:'c', 'name', NULL), 'updated', 'the name cleared');
SELECT is(pg_temp.policy(:'c'), 'open', '... the policy is kept');

-- Pending requests stay as they are whatever the policy
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'request');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(1), repeat('a', 64)), 'requested', 'a request is pending');
SELECT is(buzz.set_join_policy(:'c', 'invite'), 'updated', 'invite');
SELECT results_eq(format('SELECT r.pubkey FROM buzz.join_requests(%L) r', :'c'),
                  $$VALUES (pg_temp.pk(1))$$, '... the request is still pending');

-- Other values
SELECT pg_temp.policy_throws(:'c', NULL, '22023', 'NULL: 22023');
SELECT pg_temp.policy_throws(:'c', '', '22023', 'empty: 22023');
SELECT pg_temp.policy_throws(:'c', 'Open', '22023', 'another case: 22023');
SELECT pg_temp.policy_throws(:'c', 'open ', '22023', 'a trailing space: 22023');
SELECT pg_temp.policy_throws(:'c', 'closed', '22023', 'an unknown policy: 22023');
SELECT is(pg_temp.policy(:'c'), 'invite', '... none changed the policy');

-- The community
SELECT pg_temp.policy_throws(gen_random_uuid(), 'open', 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.policy_throws(NULL, 'open', 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.policy_throws(:'archived', 'open', 'BZARC', 'an archived community: BZARC');
SELECT is(pg_temp.policy(:'archived'), 'invite', '... whose policy is unchanged');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.set_join_policy(:'c', 'open'), 'updated', 'buzz_writer may set the policy');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.policy_throws(:'c', 'request', '42501', 'buzz_reader may not');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_set_join_policy NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_set_join_policy;
SET LOCAL ROLE buzz_pgtap_nobody_set_join_policy;
SELECT pg_temp.policy_throws(:'c', 'request', '42501', 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
