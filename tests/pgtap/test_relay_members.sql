-- buzz.relay_members(p_community uuid)
--   -> TABLE(pubkey text, role text, added_by text, joined_at timestamptz, roles text[])
-- The members ordered by pubkey with role, added_by, joined_at and the defined roles held
-- (ascending by C collation, '{}' for none, gone when the role is deleted); what each write
-- path puts in added_by; no rows for an unknown or NULL community; and who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(25);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0)) \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1), 'admin', 'admin-ui'), 'added', 'an admin added by a label');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2), 'member', upper(pg_temp.pk(1))), 'added',
          'a member added by a pubkey in uppercase');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', 'a member added by nobody named');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(4)), 'joined', 'a member joined by claim');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', :'code', pg_temp.pk(5)) x), 'joined',
          'a member joined by an invite of the owner''s');
SELECT is(buzz.add_relay_member(:'other', pg_temp.pk(6)), 'added', 'a member of another community');
SELECT is(pg_temp.flush(), 8, '... published');

SELECT results_eq(format('SELECT m.pubkey, m.role, m.added_by FROM buzz.relay_members(%L) m', :'c'),
                  $$SELECT v.pubkey, v.role, v.added_by FROM (VALUES
                        (pg_temp.pk(0), 'owner', 'create'),
                        (pg_temp.pk(1), 'admin', 'admin-ui'),
                        (pg_temp.pk(2), 'member', pg_temp.pk(1)),
                        (pg_temp.pk(3), 'member', NULL),
                        (pg_temp.pk(4), 'member', 'claim'),
                        (pg_temp.pk(5), 'member', pg_temp.pk(0))) AS v (pubkey, role, added_by)
                    ORDER BY v.pubkey COLLATE "C"$$,
                  'every member of the community, by pubkey, with role and added_by');
SELECT ok((SELECT bool_and(m.joined_at = now()) FROM buzz.relay_members(:'c') m),
          '... joined_at is when they joined (this transaction)');
SELECT function_returns('buzz', 'relay_members', ARRAY['uuid'], 'setof record', 'relay_members returns a table');
SELECT is((SELECT p.proargnames FROM pg_proc p WHERE p.oid = 'buzz.relay_members(uuid)'::regprocedure),
          ARRAY['p_community', 'pubkey', 'role', 'added_by', 'joined_at', 'roles'],
          '... whose columns are pubkey, role, added_by, joined_at and roles, in that order');
SELECT is((SELECT pg_get_function_result('buzz.relay_members(uuid)'::regprocedure)),
          'TABLE(pubkey text, role text, added_by text, joined_at timestamp with time zone, roles text[])',
          '... roles a text[]');
SELECT ok((SELECT bool_and(m.roles = '{}') FROM buzz.relay_members(:'c') m), 'nobody holds a defined role: ''{}''');
SELECT is(buzz.define_role(:'c', 'a', 'A') || buzz.define_role(:'c', '_z', 'Z') || buzz.define_role(:'c', '0a', 'Zero')
          || buzz.define_role(:'c', '-x', 'X'), 'defineddefineddefineddefined', 'four roles defined');
SELECT is(buzz.assign_role(:'c', pg_temp.pk(2), 'a') || buzz.assign_role(:'c', pg_temp.pk(2), '_z')
          || buzz.assign_role(:'c', pg_temp.pk(2), '-x') || buzz.assign_role(:'c', pg_temp.pk(2), '0a')
          || buzz.assign_role(:'c', pg_temp.pk(0), '0a'), 'assignedassignedassignedassignedassigned',
          '... assigned in another order');
SELECT results_eq(format('SELECT m.pubkey, m.roles FROM buzz.relay_members(%L) m WHERE m.roles <> ''{}''', :'c'),
                  $$SELECT v.pubkey, v.roles FROM (VALUES (pg_temp.pk(0), ARRAY['0a']),
                                                          (pg_temp.pk(2), ARRAY['-x', '0a', '_z', 'a'])) AS v (pubkey, roles)
                    ORDER BY v.pubkey COLLATE "C"$$,
                  '... the roles held, ascending by C collation (''-x'' < ''0a'' < ''_z'' < ''a'')');
SELECT is(buzz.delete_role(:'c', '0a'), 'deleted', 'a role deleted');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(2)), ARRAY['-x', '_z', 'a'],
          '... gone from its holders');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(0)), '{}'::text[],
          '... ''{}'' for a holder of it alone');
SELECT is(pg_temp.flush(), 4, '... published: the list and three 33534 (0a was never published: no kind 5)');
SELECT is_empty(format('SELECT * FROM buzz.relay_members(%L)', gen_random_uuid()),
                'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.relay_members(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT results_eq(format('SELECT m.pubkey FROM buzz.relay_members(%L) m', :'other'),
                  $$SELECT v.p FROM (VALUES (pg_temp.pk(0)), (pg_temp.pk(6))) v (p) ORDER BY v.p COLLATE "C"$$,
                  'buzz_reader may read the members');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(2)), ARRAY['-x', '_z', 'a'],
          '... and the roles they hold');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM buzz.relay_members(:'other')), 2::bigint, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
