-- buzz.role_deletions(p_community uuid) -> SETOF json
-- The signed kind 5 deletions of a community's deleted role definitions, one per role id (by
-- role id), each byte for byte the compact NIP-01 object built independently (tags
-- [["-"],["a","33534:<relay pubkey>:<role>"],["k","33534"]], id the sha256 of the
-- serialization, the test signer's deterministic signature); none for a role never published;
-- gone when the role is defined again (its 33534 is live instead), and the newest when
-- deleted again; not another community's; no rows for an unknown or NULL community; and who
-- may call it.
BEGIN;
\ir lib/fixtures.sql

-- The kind 5 a deleted role must have, with the stored created_at, its id and signature
-- computed here.
CREATE FUNCTION pg_temp.expected(p_community uuid, p_role text) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT pg_temp.nip01_object(x.id, pg_temp.relay_pubkey(), x.created_at, 5, x.tags,
                                (pg_temp.signatures(ARRAY[x.id]))[1])
    FROM (SELECT pg_temp.nip01_id(pg_temp.relay_pubkey(), r.created_at, 5,
                                  '[["-"],["a","33534:' || pg_temp.relay_pubkey() || ':' || p_role || '"],["k","33534"]]')
                     AS id,
                 r.created_at,
                 '[["-"],["a","33534:' || pg_temp.relay_pubkey() || ':' || p_role || '"],["k","33534"]]' AS tags
          FROM buzz_private.role_events r
          WHERE r.community_id = p_community AND r.role_id = p_role) AS x;
END;
-- The roles whose deletions a community serves, in order.
CREATE FUNCTION pg_temp.deleted(p_community uuid) RETURNS text[] LANGUAGE sql
BEGIN ATOMIC
    SELECT coalesce(array_agg(split_part(d #>> '{tags,1,1}', ':', 3) ORDER BY o), '{}')
    FROM buzz.role_deletions(p_community) WITH ORDINALITY AS x (d, o);
END;
CREATE FUNCTION pg_temp.deletion(p_community uuid, p_role text) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT d::text FROM buzz.role_deletions(p_community) d
    WHERE d #>> '{tags,1,1}' = '33534:' || pg_temp.relay_pubkey() || ':' || p_role;
END;

SELECT plan(35);

SELECT function_returns('buzz', 'role_deletions', ARRAY['uuid'], 'setof json', 'role_deletions returns setof json');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT buzz.define_role(:'c', 'mod', 'Moderator') || buzz.define_role(:'c', 'b', 'B') || buzz.define_role(:'c', 'a', 'A')
       || buzz.define_role(:'other', 'mod', 'Moderator') AS setup_1 \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) || buzz.assign_role(:'c', pg_temp.pk(1), 'mod') AS setup_2 \gset
SELECT pg_temp.flush() AS setup_published \gset

SELECT is_empty(format('SELECT * FROM buzz.role_deletions(%L)', :'c'), 'no role deleted: no rows');

-- A deletion, byte for byte
SELECT is(buzz.delete_role(:'c', 'mod'), 'deleted', 'a held role deleted');
SELECT is_empty(format('SELECT * FROM buzz.role_deletions(%L)', :'c'), '... not served before it is published');
SELECT is(pg_temp.flush(), 2, '... published with the list');
SELECT is(pg_temp.deleted(:'c'), ARRAY['mod'], '... then served');
SELECT is(pg_temp.deletion(:'c', 'mod'), pg_temp.expected(:'c', 'mod'),
          '... byte for byte the compact NIP-01 kind 5 object');
SELECT is((pg_temp.deletion(:'c', 'mod')::json -> 'tags')::jsonb,
          jsonb_build_array(jsonb_build_array('-'), jsonb_build_array('a', '33534:' || pg_temp.relay_pubkey() || ':mod'),
                            jsonb_build_array('k', '33534')),
          '... its tags name the 33534''s address by the relay key');
SELECT is((pg_temp.deletion(:'c', 'mod')::json ->> 'created_at')::bigint, (buzz.member_list(:'c') ->> 'created_at')::bigint,
          '... with the list''s created_at');
SELECT ok((SELECT bool_and(buzz_private.bip340_verify(decode(d ->> 'sig', 'hex'), decode(d ->> 'id', 'hex'),
                                                      decode(d ->> 'pubkey', 'hex')))
           FROM buzz.role_deletions(:'c') d),
          '... its signature verifies for its id and the relay key');
SELECT is((SELECT pg_typeof(d)::text FROM buzz.role_deletions(:'c') d), 'json', '... returned as json');

-- By role id
SELECT is(buzz.delete_role(:'c', 'b') || buzz.delete_role(:'c', 'a'), 'deleteddeleted', 'two more deleted, b before a');
SELECT is(pg_temp.flush(), 2, '... published: two kind 5, no list (nobody held them)');
SELECT is(pg_temp.deleted(:'c'), ARRAY['a', 'b', 'mod'], '... served by role id');
SELECT ok(pg_temp.deletion(:'c', 'a') = pg_temp.expected(:'c', 'a') AND pg_temp.deletion(:'c', 'b') = pg_temp.expected(:'c', 'b'),
          '... each byte for byte');

-- Never published: none
SELECT is(buzz.define_role(:'c', 'brief', 'Brief') || buzz.delete_role(:'c', 'brief'), 'defineddeleted',
          'a role defined and deleted in one transaction');
SELECT is(pg_temp.flush(), 0, '... nothing to publish');
SELECT is(pg_temp.deleted(:'c'), ARRAY['a', 'b', 'mod'], '... and no deletion served for it');

-- Defined again: not a deletion any more; deleted again: the newest
SELECT is(buzz.define_role(:'c', 'b', 'B again'), 'defined', 'a deleted role defined again');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.deleted(:'c'), ARRAY['a', 'mod'], '... its deletion is no longer served');
SELECT pg_temp.deletion(:'c', 'a') AS a_before \gset
SELECT is(buzz.define_role(:'c', 'a', 'A') || buzz.delete_role(:'c', 'a'), 'defineddeleted',
          'a deleted role defined and deleted again in one transaction ...');
SELECT is(pg_temp.flush(), 0, '... nothing to publish: its deletion is live already');
SELECT is(pg_temp.deletion(:'c', 'a'), :'a_before', '... the same deletion served');
SELECT is(buzz.define_role(:'c', 'a', 'A'), 'defined', 'defined again ...');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(buzz.delete_role(:'c', 'a'), 'deleted', '... and deleted again');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT ok((pg_temp.deletion(:'c', 'a')::json ->> 'created_at')::bigint > (:'a_before'::json ->> 'created_at')::bigint
          AND pg_temp.deletion(:'c', 'a') = pg_temp.expected(:'c', 'a'),
          '... one deletion served for it, the newest, byte for byte');

-- Another community, unknown, NULL
SELECT is_empty(format('SELECT * FROM buzz.role_deletions(%L)', :'other'), 'another community''s: its own (none)');
SELECT is_empty(format('SELECT * FROM buzz.role_deletions(%L)', gen_random_uuid()), 'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.role_deletions(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is(pg_temp.deleted(:'c'), ARRAY['a', 'mod'], 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is(pg_temp.deleted(:'c'), ARRAY['a', 'mod'], 'buzz_writer may');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_role_deletions NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_role_deletions;
SET LOCAL ROLE buzz_pgtap_nobody_role_deletions;
SELECT throws_ok(format('SELECT * FROM buzz.role_deletions(%L)', :'c'), '42501', NULL, 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
