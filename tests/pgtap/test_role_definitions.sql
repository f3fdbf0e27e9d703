-- buzz.role_definitions(p_community uuid) -> SETOF json
-- The live signed 33534 events of a community, one per defined role, by role id (C collation):
-- each byte for byte the compact NIP-01 object built independently (tags from the definition,
-- id the sha256 of the serialization, the test signer's deterministic signature); only
-- published definitions; the new bytes after a redefinition; absent after deletion; not another
-- community's; an archived community's; no rows for an unknown or NULL community; and who may
-- call it.
BEGIN;
\ir lib/fixtures.sql

-- The live 33534 a role must have: the compact NIP-01 object with the given tags and the
-- stored created_at, its id and signature computed here.
CREATE FUNCTION pg_temp.expected(p_community uuid, p_role text, p_tags text) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT pg_temp.nip01_object(x.id, pg_temp.relay_pubkey(), x.created_at, 33534, p_tags,
                                (pg_temp.signatures(ARRAY[x.id]))[1])
    FROM (SELECT pg_temp.nip01_id(pg_temp.relay_pubkey(), r.created_at, 33534, p_tags) AS id, r.created_at
          FROM buzz_private.role_events r
          WHERE r.community_id = p_community AND r.role_id = p_role) AS x;
END;
CREATE FUNCTION pg_temp.live(p_community uuid, p_role text) RETURNS text LANGUAGE sql
BEGIN ATOMIC
    SELECT d::text FROM buzz.role_definitions(p_community) d WHERE d #>> '{tags,1,1}' = p_role;
END;
CREATE FUNCTION pg_temp.live_ids(p_community uuid) RETURNS text[] LANGUAGE sql
BEGIN ATOMIC
    SELECT coalesce(array_agg(d #>> '{tags,1,1}' ORDER BY o), '{}')
    FROM buzz.role_definitions(p_community) WITH ORDINALITY AS x (d, o);
END;

SELECT plan(32);

SELECT function_returns('buzz', 'role_definitions', ARRAY['uuid'], 'setof json', 'role_definitions returns setof json');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset

-- A new community: its base roles
SELECT is(pg_temp.live_ids(:'c'), ARRAY['admin', 'member', 'owner'], 'a new community: the three base roles, by role id');
SELECT is(pg_temp.live(:'c', 'owner'), pg_temp.expected(:'c', 'owner', '[["-"],["d","owner"],["label","Owner"],["order","0"]]'),
          '... owner byte for byte the compact NIP-01 object');
SELECT is(pg_temp.live(:'c', 'admin'), pg_temp.expected(:'c', 'admin', '[["-"],["d","admin"],["label","Admin"],["order","1"]]'),
          '... admin too');
SELECT is(pg_temp.live(:'c', 'member'), pg_temp.expected(:'c', 'member', '[["-"],["d","member"],["label","Member"],["order","2"]]'),
          '... member too');
SELECT is((SELECT pg_typeof(d)::text FROM buzz.role_definitions(:'c') d LIMIT 1), 'json', '... returned as json');
SELECT ok((SELECT bool_and((SELECT array_agg(k) FROM json_object_keys(d) k)
                           = ARRAY['id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig'])
           FROM buzz.role_definitions(:'c') d),
          '... keys in NIP-01''s order');
SELECT ok((SELECT bool_and(buzz_private.bip340_verify(decode(d ->> 'sig', 'hex'), decode(d ->> 'id', 'hex'),
                                                      decode(d ->> 'pubkey', 'hex')))
           FROM buzz.role_definitions(:'c') d),
          '... each signature verifies for its id and the relay key');

-- Only published definitions, by role id in C collation
SELECT is(buzz.define_role(:'c', 'a', 'A', 'Plain "a" \ b', 10, -1) || buzz.define_role(:'c', '_z', 'Z')
          || buzz.define_role(:'c', '0a', U&'Z\00E9ro') || buzz.define_role(:'c', '-x', 'X', p_color => 360),
          'defineddefineddefineddefined', 'four roles defined');
SELECT is(pg_temp.live_ids(:'c'), ARRAY['admin', 'member', 'owner'], '... not live before they are published');
SELECT is(pg_temp.flush(), 4, '... published');
SELECT is(pg_temp.live_ids(:'c'), ARRAY['-x', '0a', '_z', 'a', 'admin', 'member', 'owner'],
          '... then live, by role id in C collation (-x < 0a < _z < a < admin)');
SELECT is(pg_temp.live(:'c', 'a'),
          pg_temp.expected(:'c', 'a', '[["-"],["d","a"],["label","A"],["description","Plain \"a\" \\ b"],["color","10"],["order","-1"]]'),
          'a role with every field, escaped: byte for byte');
SELECT is(pg_temp.live(:'c', '0a'), pg_temp.expected(:'c', '0a', '[["-"],["d","0a"],["label","Z' || U&'\00E9' || 'ro"]]'),
          'a non-ASCII label: byte for byte, written as UTF-8');
SELECT is(pg_temp.live(:'c', '-x'), pg_temp.expected(:'c', '-x', '[["-"],["d","-x"],["label","X"],["color","360"]]'),
          'a color alone: byte for byte');
SELECT is(pg_temp.live(:'c', '_z'), pg_temp.expected(:'c', '_z', '[["-"],["d","_z"],["label","Z"]]'),
          'a label alone: byte for byte');
SELECT is(pg_temp.live_ids(:'other'), ARRAY['admin', 'member', 'owner'], 'another community has only its own');

-- Redefined: the new bytes
SELECT pg_temp.live(:'c', 'a') AS before \gset
SELECT is(buzz.define_role(:'c', 'a', 'Alpha'), 'updated', 'a role redefined');
SELECT is(pg_temp.live(:'c', 'a'), :'before', '... the old definition stays live until published');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live(:'c', 'a'), pg_temp.expected(:'c', 'a', '[["-"],["d","a"],["label","Alpha"]]'),
          '... then the new one, byte for byte');
SELECT cmp_ok((pg_temp.live(:'c', 'a')::json ->> 'created_at')::bigint, '>', (:'before'::json ->> 'created_at')::bigint,
              '... with a later created_at');

-- Deleted: absent
SELECT is(buzz.delete_role(:'c', '_z'), 'deleted', 'a role deleted');
SELECT is(pg_temp.flush(), 1, '... published');
SELECT is(pg_temp.live_ids(:'c'), ARRAY['-x', '0a', 'a', 'admin', 'member', 'owner'], '... no longer among the definitions');

-- Archived, unknown, NULL
SELECT is(buzz.archive_community(:'other'), 'archived', 'a community archived');
SELECT is(pg_temp.live_ids(:'other'), ARRAY['admin', 'member', 'owner'], '... its definitions can still be read');
SELECT is_empty(format('SELECT * FROM buzz.role_definitions(%L)', gen_random_uuid()), 'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.role_definitions(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c')), 6, 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*)::integer FROM buzz.role_definitions(:'c')), 6, 'buzz_writer may');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_role_definitions NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_role_definitions;
SET LOCAL ROLE buzz_pgtap_nobody_role_definitions;
SELECT throws_ok(format('SELECT * FROM buzz.role_definitions(%L)', :'c'), '42501', NULL,
                 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
