-- buzz.delete_role(p_community uuid, p_role text) -> text
-- Outcomes deleted / not_found; the definition goes, every holder loses the role (so the list
-- changes: its member tags, built independently), and a kind 5 deletion (NIP-09, exact tags
-- [["-"],["a","33534:<relay pubkey>:<role>"],["k","33534"]], the list's created_at) replaces the
-- 33534 as the live event of the role's address; no list when nobody held it; no kind 5 when
-- the role was never published (defined and deleted in one transaction: nothing is prepared
-- and the transaction may commit); a role defined again after deletion; base roles and
-- malformed ids (BZIRL, before not_found), BZNCM, BZARC, BZISO under REPEATABLE READ, and who
-- may call it.

-- BZISO: a transaction of its own, rolled back; psql keeps the SQLSTATE for the suite.
BEGIN ISOLATION LEVEL REPEATABLE READ;
\ir lib/fixtures.sql
SELECT pg_temp.sqlstate_of(format($$SELECT buzz.delete_role(%L, 'mod')$$, gen_random_uuid()))
       AS iso_repeatable_read \gset
ROLLBACK;

BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.irl(p_sql text, p_description text) RETURNS text LANGUAGE sql
RETURN throws_ok(p_sql, 'BZIRL', NULL, p_description);
-- The defined roles each member holds, as (pubkey, roles).
CREATE FUNCTION pg_temp.holders(p_community uuid) RETURNS TABLE (pubkey text, roles text[]) LANGUAGE sql
BEGIN ATOMIC
    SELECT m.pubkey, m.roles FROM buzz.relay_members(p_community) m;
END;
-- The shape (pg_temp.shapes) the community's next list must have.
CREATE FUNCTION pg_temp.list_shape(p_community uuid) RETURNS text LANGUAGE sql STABLE
RETURN pg_temp.shape(13534, pg_temp.expected_tags(p_community));

SELECT plan(66);

SELECT function_returns('buzz', 'delete_role', ARRAY['uuid', 'text'], 'text', 'delete_role returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.add_relay_members(:'c', ARRAY[pg_temp.pk(1), pg_temp.pk(2), pg_temp.pk(3)]) AS setup_1 \gset
SELECT buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', 'vip', 'VIP')
       || buzz.define_role(:'c', 'idle', 'Idle') AS setup_2 \gset
SELECT buzz.assign_role(:'c', pg_temp.pk(1), 'mod') || buzz.assign_role(:'c', pg_temp.pk(2), 'mod')
       || buzz.assign_role(:'c', pg_temp.pk(2), 'vip') AS setup_3 \gset
SELECT buzz.define_role(:'archived', 'mod', 'Moderator') AS setup_4 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT results_eq(format('SELECT * FROM pg_temp.holders(%L)', :'c'),
                  $$SELECT v.p, v.r FROM (VALUES (pg_temp.pk(0), '{}'::text[]), (pg_temp.pk(1), '{mod}'),
                                                 (pg_temp.pk(2), '{mod,vip}'), (pg_temp.pk(3), '{}')) AS v (p, r)
                    ORDER BY v.p COLLATE "C"$$,
                  'setup: pk(1) holds mod, pk(2) mod and vip');

-- deleted: the holders lose it, the list changes, a kind 5 is published
SELECT d ->> 'id' AS mod_33534 FROM buzz.role_definitions(:'c') d
WHERE d #>> '{tags,1,1}' = 'mod' \gset
SELECT is(buzz.delete_role(:'c', 'mod'), 'deleted', 'a held role is deleted');
SELECT is_empty(format($$SELECT FROM buzz_private.roles r WHERE r.community_id = %L AND r.role_id = 'mod'$$, :'c'),
                '... its definition is gone');
SELECT results_eq(format('SELECT * FROM pg_temp.holders(%L)', :'c'),
                  $$SELECT v.p, v.r FROM (VALUES (pg_temp.pk(0), '{}'::text[]), (pg_temp.pk(1), '{}'),
                                                 (pg_temp.pk(2), '{vip}'), (pg_temp.pk(3), '{}')) AS v (p, r)
                    ORDER BY v.p COLLATE "C"$$,
                  '... every holder lost it, and nothing else');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner'), (pg_temp.pk(1), 'member'),
                                          (pg_temp.pk(2), 'member'), (pg_temp.pk(3), 'member')$$,
                           '... nobody joined or left');
SELECT ok(pg_temp.marked(), '... the community owes its list and the deletion');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.list_shape(:'c'),
                pg_temp.shape(5, format('[["-"],["a","33534:%s:mod"],["k","33534"]]', pg_temp.relay_pubkey()))],
          '... prepared: the list (member tags without mod), then the kind 5 '
          '[["-"],["a","33534:<relay pubkey>:mod"],["k","33534"]], one created_at, no 8000 nor 8001');
SELECT ok(pg_temp.expected_tags(:'c') LIKE format('%%["member","%s","member","vip"]%%', pg_temp.pk(2))
          AND pg_temp.expected_tags(:'c') NOT LIKE '%"mod"%',
          '... (the expected list names pk(2) with vip alone, and mod nowhere)');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is((buzz.member_list(:'c') -> 'tags')::text, pg_temp.expected_tags(:'c'), '... the live list without the role');
SELECT results_eq(format('SELECT * FROM pg_temp.role_events(%L)', :'c'),
                  $$VALUES ('admin', 33534), ('idle', 33534), ('member', 33534), ('mod', 5), ('owner', 33534),
                           ('vip', 33534)$$,
                  '... the kind 5 is the live event of the role''s address');
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'mod'), 0,
          '... role_definitions no longer has it');
SELECT is((SELECT d -> 'tags' FROM buzz.role_deletions(:'c') d)::text,
          format('[["-"],["a","33534:%s:mod"],["k","33534"]]', pg_temp.relay_pubkey()),
          '... role_deletions has its kind 5');
SELECT is((SELECT (d ->> 'created_at')::bigint FROM buzz.role_deletions(:'c') d),
          (buzz.member_list(:'c') ->> 'created_at')::bigint, '... with the list''s created_at');
SELECT ok(pg_temp.id_ok((SELECT d FROM buzz.role_deletions(:'c') d)), '... its id hashes its content');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- not_found
SELECT is(buzz.delete_role(:'c', 'mod'), 'not_found', 'deleted again: not_found');
SELECT is(buzz.delete_role(:'c', 'never'), 'not_found', 'a role never defined: not_found');
SELECT ok(NOT pg_temp.marked(), '... owe nothing');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepare nothing');

-- A role nobody holds: its kind 5 alone, no list
SELECT buzz.member_list(:'c') ->> 'id' AS list_id \gset
SELECT is(buzz.delete_role(:'c', 'idle'), 'deleted', 'a role nobody holds is deleted');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.shape(5, format('[["-"],["a","33534:%s:idle"],["k","33534"]]', pg_temp.relay_pubkey()))],
          '... prepared: its kind 5 alone, no list');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.member_list(:'c') ->> 'id', :'list_id', '... the list is the same one');

-- Never published: defined and deleted in one transaction
SELECT is(buzz.define_role(:'c', 'brief', 'Brief'), 'defined', 'a role defined ...');
SELECT is(buzz.define_role(:'c', 'brief', 'Brief', 'redefined'), 'updated', '... redefined ...');
SELECT is(buzz.delete_role(:'c', 'brief'), 'deleted', '... and deleted, before any prepare');
SELECT is_empty('SELECT * FROM pg_temp.prepared()', '... prepare finds nothing to sign: no 33534, no kind 5');
SELECT is(pg_temp.guard(), NULL, '... and the transaction may commit with nothing prepared');
SELECT is_empty($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$, '... (empty arrays: no rows)');
SELECT is_empty(format($$SELECT FROM buzz_private.role_events r WHERE r.community_id = %L AND r.role_id = 'brief'$$, :'c'),
                '... the role has no event at all');
SELECT is(buzz.define_role(:'c', 'brief2', 'Brief') || buzz.assign_role(:'c', pg_temp.pk(3), 'brief2')
          || buzz.delete_role(:'c', 'brief2'), 'definedassigneddeleted',
          'defined, assigned and deleted in one transaction');
SELECT is(pg_temp.shapes(), ARRAY[pg_temp.list_shape(:'c')],
          '... the list only (allowed, as for a member added and removed again), no 33534, no kind 5');
SELECT is(pg_temp.flush(), 1, '... published');

-- Redefined and deleted in one transaction: the published 33534 is deleted
SELECT is(buzz.define_role(:'c', 'vip', 'Very important') || buzz.delete_role(:'c', 'vip'), 'updateddeleted',
          'a published role redefined and deleted in one transaction');
SELECT is(pg_temp.shapes(),
          ARRAY[pg_temp.list_shape(:'c'),
                pg_temp.shape(5, format('[["-"],["a","33534:%s:vip"],["k","33534"]]', pg_temp.relay_pubkey()))],
          '... the list (pk(2) lost vip) and the kind 5, no 33534');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is((SELECT array_agg(d #>> '{tags,1,1}' ORDER BY d #>> '{tags,1,1}') FROM buzz.role_deletions(:'c') d),
          ARRAY['33534:' || pg_temp.relay_pubkey() || ':idle', '33534:' || pg_temp.relay_pubkey() || ':mod',
                '33534:' || pg_temp.relay_pubkey() || ':vip'],
          'role_deletions: one kind 5 per deleted role, by role id');

-- Defined again after deletion
SELECT is(buzz.define_role(:'c', 'mod', 'Moderator'), 'defined', 'a deleted role defined again: defined');
SELECT is(pg_temp.shapes(), ARRAY[pg_temp.shape(33534, '[["-"],["d","mod"],["label","Moderator"]]')],
          '... its 33534');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT isnt((SELECT d ->> 'id' FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'mod'), :'mod_33534',
            '... a new 33534 (a later created_at)');
SELECT is((SELECT count(*)::integer FROM buzz.role_deletions(:'c') d WHERE d #>> '{tags,1,1}' LIKE '%:mod'), 0,
          '... it replaced the kind 5: role_deletions no longer has it');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'c') m WHERE m.pubkey = pg_temp.pk(1)), '{}'::text[],
          '... its former holders do not hold it again');

-- BZIRL: base roles and malformed ids, before not_found
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, 'owner')$$, :'c'), 'owner: BZIRL (base roles are never removed)');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, 'admin')$$, :'c'), 'admin: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, 'member')$$, :'c'), 'member: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, 'Mod')$$, :'c'), 'an uppercase role id: BZIRL (not lower-cased)');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, 'Nope')$$, :'c'), '... also for an undefined role (before not_found)');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, %L)$$, :'c', repeat('a', 65)), 'a role id of 65 characters: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, '')$$, :'c'), 'an empty role id: BZIRL');
SELECT pg_temp.irl(format($$SELECT buzz.delete_role(%L, NULL)$$, :'c'), 'a NULL role id: BZIRL');
SELECT is((SELECT count(*)::integer FROM buzz_private.roles r WHERE r.community_id = :'c' AND r.role_id IN ('owner', 'admin', 'member')),
          3, '... the base roles are still defined');

-- BZNCM, BZARC
SELECT throws_ok($$SELECT buzz.delete_role(NULL, 'mod')$$, 'BZNCM', NULL, 'a NULL community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.delete_role(%L, 'mod')$$, gen_random_uuid()), 'BZNCM', NULL,
                 'an unknown community: BZNCM');
SELECT throws_ok(format($$SELECT buzz.delete_role(%L, 'mod')$$, :'archived'), 'BZARC', NULL,
                 'an archived community: BZARC');
SELECT throws_ok(format($$SELECT buzz.delete_role(%L, 'never')$$, :'archived'), 'BZARC', NULL,
                 '... also when it would answer not_found');
SELECT ok(EXISTS (SELECT FROM buzz_private.roles r WHERE r.community_id = :'archived' AND r.role_id = 'mod'),
          '... the archived community keeps its role');
SELECT ok(NOT pg_temp.marked(), 'the failed calls owe nothing');

-- BZISO (the transaction at the top)
SELECT is(:'iso_repeatable_read'::text, 'BZISO', 'under REPEATABLE READ: BZISO');

-- privileges
SELECT buzz.define_role(:'c', 'w', 'W') || buzz.define_role(:'c', 'r', 'R') || buzz.define_role(:'c', 'n', 'N') AS setup_5 \gset
SELECT pg_temp.flush() AS setup_published \gset
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.delete_role(:'c', 'w'), 'deleted', 'buzz_writer may delete a role');
SELECT is(pg_temp.flush(), 1, '... and publish its kind 5');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format($$SELECT buzz.delete_role(%L, 'r')$$, :'c'), '42501', NULL, 'buzz_reader may not delete a role');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_delete_role NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_delete_role;
SET LOCAL ROLE buzz_pgtap_nobody_delete_role;
SELECT throws_ok(format($$SELECT buzz.delete_role(%L, 'n')$$, :'c'), '42501', NULL,
                 'a role without grants may not delete a role');
RESET ROLE;

SELECT is_empty(format('SELECT * FROM buzz.member_list_drift(%L)', :'c'), 'in the end no drift');

SELECT * FROM finish();
ROLLBACK;
