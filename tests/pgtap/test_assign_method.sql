-- buzz.assign_method(p_community uuid, p_pubkey text, p_method text,
--                    p_assigned_by text DEFAULT NULL) -> text
-- buzz.unassign_method(p_community uuid, p_pubkey text, p_method text) -> text
-- buzz.method_assignees(p_community uuid) -> TABLE(pubkey, method, assigned_by, assigned_at)
-- Outcomes assigned / already_assigned / not_member and unassigned / not_assigned, members
-- only, what may be assigned and what never (22023), per community, no list owed; an
-- assignment ends with its holder's membership; the bound of 1,000 (54000); bad input (BZIPK,
-- 22023, BZNCM, BZARC) changing nothing; NOTIFY buzz_moderation at the commit of a change,
-- never for a no-op or a rollback; who may call them.
BEGIN;
\ir lib/fixtures.sql
\ir lib/moderation.sql

-- The assignments as 'n:method' for pk(n), by n and method.
CREATE FUNCTION pg_temp.assigned(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(n.n || ':' || a.method ORDER BY n.n, a.method), '{}')
        FROM buzz.method_assignees(p_community) a
        JOIN generate_series(0, 20) n (n) ON pg_temp.pk(n.n) = a.pubkey);
CREATE FUNCTION pg_temp.throws(p_function text, p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.%s(%s)', p_function, p_args), p_code, NULL, p_description);

SELECT plan(71);

SELECT function_returns('buzz', 'assign_method', ARRAY['uuid', 'text', 'text', 'text'], 'text',
                        'assign_method returns text');
SELECT function_returns('buzz', 'unassign_method', ARRAY['uuid', 'text', 'text'], 'text',
                        'unassign_method returns text');
SELECT function_returns('buzz', 'method_assignees', ARRAY['uuid'], 'setof record',
                        'method_assignees returns rows');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(2), 'admin') AS setup_2 \gset
SELECT buzz.add_relay_member(:'other', pg_temp.pk(1)) AS setup_3 \gset
SELECT buzz.add_relay_member(:'archived', pg_temp.pk(1)) AS setup_4 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.assign_method(:'archived', pg_temp.pk(1), 'listroles') AS setup_assign \gset
SELECT buzz.archive_community(:'archived') AS setup_archive \gset

-- assigned
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), 'banevent', pg_temp.pk(0)), 'assigned',
          'a member, a method: assigned');
SELECT is(buzz.assign_method(:'c', upper(pg_temp.pk(1)), 'listbannedevents'), 'assigned',
          'another method, the pubkey in uppercase: assigned');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(2), 'blockip'), 'assigned', 'an admin may be assigned one too');
SELECT is(pg_temp.assigned(:'c'), ARRAY['1:banevent', '1:listbannedevents', '2:blockip'],
          '... listed');
SELECT ok((SELECT array_agg(a.pubkey || ' ' || a.method)
                  = array_agg(a.pubkey || ' ' || a.method ORDER BY a.pubkey COLLATE "C", a.method COLLATE "C")
           FROM buzz.method_assignees(:'c') a), '... by pubkey, then method');
SELECT is((SELECT a.assigned_by = pg_temp.pk(0) AND a.assigned_at = now()
           FROM buzz.method_assignees(:'c') a WHERE a.method = 'banevent'), true,
          '... with who assigned it and when');
SELECT ok(NOT pg_temp.marked(), '... no list owed: not a membership write');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), 'banevent'), 'already_assigned', 'again: already_assigned');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(3), 'banevent'), 'not_member', 'a pubkey that is no member: not_member');
SELECT is(pg_temp.assigned(:'other'), '{}'::text[], 'another community assigns nothing of it');
SELECT is(pg_temp.assigned(:'archived'), ARRAY['1:listroles'], 'an archived community''s assignments are listed');

-- What may be assigned
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), m), 'assigned', format('%s may be assigned', m))
FROM unnest(ARRAY['unallowpubkey', 'allowkind', 'listmethodassignees', 'removebranch']) m;
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', :'c', pg_temp.pk(1), m), '22023',
                      format('%s is never assigned: 22023', m))
FROM unnest(ARRAY['assignmethod', 'unassignmethod', 'supportedmethods', 'setmemberrole',
                  'disallowpubkey', 'nosuchmethod', 'BANEVENT', '']) m;
SELECT pg_temp.throws('assign_method', format('%L, %L, NULL', :'c', pg_temp.pk(1)), '22023', 'a NULL method: 22023');

-- Delegations end with membership (SPEC §10): removed, banned, or removed by role
SELECT is(buzz.remove_relay_member(:'c', pg_temp.pk(1)), 'removed', 'the assignee leaves (or is removed)');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(pg_temp.assigned(:'c'), ARRAY['2:blockip'], '... the methods assigned to them are taken back, no one else''s');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), 'allowevent'), 'not_member', '... and no new one');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'they come back');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(pg_temp.assigned(:'c'), ARRAY['2:blockip'], '... holding no method');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), m), 'assigned', format('... until %s is assigned again', m))
FROM unnest(ARRAY['banevent', 'listbannedevents', 'unallowpubkey', 'allowkind', 'listmethodassignees',
                  'removebranch']) m;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(4)), 'added', 'setup: another member');
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(5)), 'added', 'setup: and another');
SELECT is(pg_temp.flush(), 3, '... published: one list, two 8000s');
SELECT is(buzz.assign_method(:'c', pg_temp.pk(n), 'listroles'), 'assigned', format('setup: pk(%s) assigned one', n))
FROM unnest(ARRAY[4, 5]) n;
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(4)), 'banned', 'an assignee banned');
SELECT is(buzz.remove_relay_member_if_role(:'c', pg_temp.pk(5), 'member'), 'removed',
          'an assignee removed by role');
SELECT is(pg_temp.flush(), 3, '... published: one list, two 8001s');
SELECT ok(NOT ('4:listroles' = ANY (pg_temp.assigned(:'c')) OR '5:listroles' = ANY (pg_temp.assigned(:'c'))),
          '... theirs are taken back too');

-- unassigned
SELECT is(buzz.unassign_method(:'c', pg_temp.pk(1), 'banevent'), 'unassigned', 'a member''s: unassigned');
SELECT is(buzz.unassign_method(:'c', pg_temp.pk(1), 'banevent'), 'not_assigned', '... again: not_assigned');
SELECT is(buzz.unassign_method(:'c', pg_temp.pk(2), 'setmemberrole'), 'not_assigned',
          'a method never assignable: not_assigned');
SELECT is(buzz.unassign_method(:'c', upper(pg_temp.pk(2)), 'blockip'), 'unassigned', 'an admin''s, named in uppercase: unassigned');
SELECT is(pg_temp.assigned(:'c'), ARRAY['1:allowkind', '1:listbannedevents', '1:listmethodassignees',
                                        '1:removebranch', '1:unallowpubkey'], '... what remains');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is_empty(format('SELECT * FROM buzz.method_assignees(%L)', gen_random_uuid()),
                'method_assignees of an unknown community: no rows');

-- The bound: 1,000 per community
INSERT INTO buzz_private.method_assignments (community_id, pubkey, method)
SELECT :'c', pg_temp.pk(1), 'm' || translate(i::text, '0123456789', 'abcdefghij') FROM generate_series(1, 994) i;
SELECT is(buzz.assign_method(:'c', pg_temp.pk(1), 'banevent'), 'assigned', 'the 1,000th: assigned');
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', :'c', pg_temp.pk(1), 'blockip'), '54000', 'the 1,001st: 54000');
DELETE FROM buzz_private.method_assignments a WHERE a.community_id = :'c' AND a.method LIKE 'm%';

-- Errors: nothing changes
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', :'c', 'xyz', 'banevent'), 'BZIPK', 'a malformed pubkey: BZIPK');
SELECT pg_temp.throws('unassign_method', format('%L, NULL, %L', :'c', 'banevent'), 'BZIPK', 'unassign of a NULL pubkey: BZIPK');
SELECT pg_temp.throws('unassign_method', format('%L, %L, %L', :'c', pg_temp.pk(1), 'Ban event'), '22023',
                      'unassign of a name that is no method name: 22023');
SELECT pg_temp.throws('assign_method', format('%L, %L, %L, %L', :'c', pg_temp.pk(1), 'blockip', repeat('x', 65)), '22023',
                      'assigned_by of 65 characters: 22023');
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', gen_random_uuid(), pg_temp.pk(1), 'blockip'), 'BZNCM',
                      'an unknown community: BZNCM');
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', :'archived', pg_temp.pk(1), 'blockip'), 'BZARC',
                      'an archived community: BZARC');
SELECT pg_temp.throws('unassign_method', format('%L, %L, %L', :'archived', pg_temp.pk(1), 'listroles'), 'BZARC',
                      '... unassign_method there too');
SELECT ok(pg_temp.assigned(:'c') = ARRAY['1:allowkind', '1:banevent', '1:listbannedevents', '1:listmethodassignees',
                                         '1:removebranch', '1:unallowpubkey']
          AND pg_temp.assigned(:'archived') = ARRAY['1:listroles'],
          'the refused calls changed nothing');

-- NOTIFY buzz_moderation, delivered at COMMIT
SELECT is(pg_temp.notified(ARRAY[
              pg_temp.member_step(1),
              pg_temp.step(format('PERFORM buzz.assign_method({c}, %L, %L)', pg_temp.pk(1), 'banevent')),
              pg_temp.step(format('PERFORM buzz.assign_method({c}, %L, %L)', pg_temp.pk(1), 'banevent')),
              pg_temp.step(format('PERFORM buzz.assign_method({c}, %L, %L)', pg_temp.pk(2), 'banevent')),
              pg_temp.rolled_back(format('PERFORM buzz.unassign_method({c}, %L, %L)', pg_temp.pk(1), 'banevent')),
              pg_temp.step(format('PERFORM buzz.unassign_method({c}, %L, %L)', pg_temp.pk(1), 'banevent'))]),
          ARRAY['C', 'C', 'marker C'],
          'a change that commits is announced with the community id; a no-op, a not_member and '
          'a rollback are not');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.assign_method(:'other', pg_temp.pk(1), 'listroles'), 'assigned', 'buzz_writer may assign');
SELECT is(buzz.unassign_method(:'other', pg_temp.pk(1), 'listroles'), 'unassigned', '... and unassign');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.throws('assign_method', format('%L, %L, %L', :'other', pg_temp.pk(1), 'listroles'), '42501',
                      'buzz_reader may not assign');
SELECT is(pg_temp.assigned(:'archived'), ARRAY['1:listroles'], '... but may read the assignments');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
