-- buzz.community_profile(p_community uuid)
--   -> TABLE(name text, description text, icon text, join_policy text)
-- One row for a community (NULL fields and join_policy 'invite' before anything is set; an
-- archived community's too), none for an unknown or NULL one; another community's profile is
-- its own; and who may call it (buzz_reader and buzz_writer, nobody else).
BEGIN;
\ir lib/fixtures.sql

SELECT plan(16);

SELECT function_returns('buzz', 'community_profile', ARRAY['uuid'], 'setof record',
                        'community_profile returns a table');
SELECT is((SELECT array_agg(x ORDER BY n) FROM unnest((SELECT p.proargnames FROM pg_proc p
           WHERE p.oid = 'buzz.community_profile(uuid)'::regprocedure)) WITH ORDINALITY AS t (x, n)),
          ARRAY['p_community', 'name', 'description', 'icon', 'join_policy'],
          '... of name, description, icon and join_policy');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset

SELECT results_eq(format('SELECT * FROM buzz.community_profile(%L)', :'c'),
                  $$VALUES (NULL::text, NULL::text, NULL::text, 'invite')$$,
                  'a new community: one row, nothing set, join policy invite');
SELECT is(buzz.set_community_profile(:'c', 'name', 'Buzz') || buzz.set_community_profile(:'c', 'icon', 'https://x.example/i.png')
          || buzz.set_community_profile(:'c', 'description', E'About\nus') || buzz.set_join_policy(:'c', 'request'),
          'updatedupdatedupdatedupdated', 'setup: every field and the policy set');
SELECT results_eq(format('SELECT * FROM buzz.community_profile(%L)', :'c'),
                  $$VALUES ('Buzz', E'About\nus', 'https://x.example/i.png', 'request')$$,
                  'then the row holds what was set');
SELECT is(buzz.set_join_policy(:'other', 'open'), 'updated', 'another community: only a policy set');
SELECT results_eq(format('SELECT * FROM buzz.community_profile(%L)', :'other'),
                  $$VALUES (NULL::text, NULL::text, NULL::text, 'open')$$,
                  '... its row holds its own policy and no field of the first');
SELECT is(buzz.set_community_profile(:'c', 'name', NULL), 'updated', 'the name cleared');
SELECT results_eq(format('SELECT p.name, p.join_policy FROM buzz.community_profile(%L) p', :'c'),
                  $$VALUES (NULL::text, 'request')$$, '... NULL again, the rest kept');

SELECT is(buzz.archive_community(:'c'), 'archived', 'the community archived');
SELECT results_eq(format('SELECT p.description, p.join_policy FROM buzz.community_profile(%L) p', :'c'),
                  $$VALUES (E'About\nus', 'request')$$, '... its profile is still read');
SELECT is_empty(format('SELECT * FROM buzz.community_profile(%L)', gen_random_uuid()),
                'an unknown community: no row');
SELECT is_empty('SELECT * FROM buzz.community_profile(NULL)', 'a NULL community: no row');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT results_eq(format('SELECT p.join_policy FROM buzz.community_profile(%L) p', :'other'),
                  $$VALUES ('open')$$, 'buzz_reader may read it');
SET LOCAL ROLE buzz_writer;
SELECT results_eq(format('SELECT p.join_policy FROM buzz.community_profile(%L) p', :'other'),
                  $$VALUES ('open')$$, 'buzz_writer may read it');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_community_profile NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_community_profile;
SET LOCAL ROLE buzz_pgtap_nobody_community_profile;
SELECT throws_ok(format('SELECT * FROM buzz.community_profile(%L)', :'other'), '42501', NULL,
                 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
