-- buzz.create_community(p_host text, p_owner text) -> TABLE(community_id uuid, outcome text)
-- Outcomes created / exists (the existing id) / host_taken / limit_reached (NULL id), the
-- owner as first member, its first list and 8000, the definitions of its three base roles
-- (owner, admin, member: their 33534 events, exact text, with the list's created_at), host validation (BZHST) and normalization
-- (stored lower-cased, found by buzz.community_id case-insensitively, ports part of the
-- host), BZIPK, and who may call it. BZISO is covered by pytest: this suite runs in one READ
-- COMMITTED transaction, whose isolation level can no longer change once the fixtures ran.
BEGIN;
\ir lib/fixtures.sql

-- The outcome of a create_community call.
CREATE FUNCTION pg_temp.create_outcome(p_host text, p_owner text) RETURNS text LANGUAGE sql
RETURN (SELECT c.outcome FROM buzz.create_community(p_host, p_owner) c);
-- A host name of n characters: labels of up to 63 characters joined by dots.
CREATE FUNCTION pg_temp.long_host(n integer) RETURNS text LANGUAGE sql
RETURN left(repeat(repeat('a', 62) || '.', 5), n - 1) || 'b';

SELECT plan(85);

SELECT function_returns('buzz', 'create_community', ARRAY['text', 'text'],
                        'setof record', 'create_community returns a table');
SELECT is(length(pg_temp.long_host(253)), 253, 'setup: long_host makes names of the asked length');

SELECT count(*) AS communities_before FROM buzz_private.communities \gset

-- created
SELECT c.community_id AS a, c.outcome AS a_outcome
FROM buzz.create_community('a.org', pg_temp.pk(1)) c \gset
SELECT is(:'a_outcome'::text, 'created', 'a new host is created');
SELECT is(buzz.community_id('a.org'), :'a'::uuid, '... with the returned id, found by its host');
SELECT pg_temp.members_are(:'a', $$VALUES (pg_temp.pk(1), 'owner')$$,
                           '... its owner is its one member');
SELECT ok(pg_temp.marked(), '... and it owes its first list');
SELECT pg_temp.events_are($$VALUES (13534, NULL::text), (8000, pg_temp.pk(1)), (33534, 'admin'),
                                     (33534, 'member'), (33534, 'owner')$$,
                          '... one list, an 8000 for the owner and the 33534 of each base role');
SELECT is((SELECT array_agg(p.kind::text || ':' || coalesce(p.serialized::jsonb #>> '{4,1,1}', '') ORDER BY o)
           FROM pg_temp.prepared() WITH ORDINALITY AS p (community_id, id, kind, created_at, serialized, o)),
          ARRAY['13534:' || pg_temp.pk(1), '8000:' || pg_temp.pk(1), '33534:admin', '33534:member',
                '33534:owner'],
          '... in the order list, 8000, then the 33534s by role id');
-- One prepare, kept: two calls could straddle a clock second.
CREATE TEMP TABLE first_prepare AS SELECT * FROM pg_temp.prepared();
SELECT is((SELECT array_agg(p.serialized ORDER BY p.serialized COLLATE "C")
           FROM first_prepare p WHERE p.kind = 33534),
          (SELECT array_agg(format('[0,"%s",%s,33534,%s,""]', pg_temp.relay_pubkey(), l.created_at, t)
                            ORDER BY t COLLATE "C")
           FROM first_prepare l,
                unnest(ARRAY['[["-"],["d","admin"],["label","Admin"],["order","1"]]',
                             '[["-"],["d","member"],["label","Member"],["order","2"]]',
                             '[["-"],["d","owner"],["label","Owner"],["order","0"]]']) t
           WHERE l.kind = 13534),
          '... each [0,key,created_at,33534,[["-"],["d",id],["label",..],["order",..]],""] with the list''s created_at');
SELECT results_eq(format($$SELECT r.role_id::text COLLATE "default", r.label, r.description, r.color, r.sort_order
                          FROM buzz_private.roles r WHERE r.community_id = %L ORDER BY r.role_id$$, :'a'),
                  $$VALUES ('admin', 'Admin', NULL::text, NULL::integer, 1), ('member', 'Member', NULL, NULL, 2),
                           ('owner', 'Owner', NULL, NULL, 0)$$,
                  '... the base roles stored: labels Owner, Admin, Member, order 0, 1, 2, no description or color');
SELECT is((SELECT array_agg(DISTINCT p.community_id) FROM pg_temp.prepared() p),
          ARRAY[:'a'::uuid], '... all for the new community');
SELECT ok(buzz.member_list(:'a') IS NULL, '... no list is live before it is published');
SELECT is(pg_temp.flush(), 5, 'publishing writes those five events');
SELECT pg_temp.list_is_members(:'a', 'the live list names the owner');
SELECT is((SELECT array_agg(d ->> 'kind' || ':' || (d -> 'tags' -> 1 ->> 1)) FROM buzz.role_definitions(:'a') d),
          ARRAY['33534:admin', '33534:member', '33534:owner'],
          'the three base role definitions are live, by role id');
SELECT is((SELECT m.roles FROM buzz.relay_members(:'a') m), '{}'::text[], '... the owner holds no defined role');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed once published');

-- exists
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org', pg_temp.pk(1)),
                  format('VALUES (%L::uuid, %L)', :'a', 'exists'),
                  'the same host and owner again answer exists with the existing id, one row');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'A.ORG', upper(pg_temp.pk(1))),
                  format('VALUES (%L::uuid, %L)', :'a', 'exists'),
                  '... also with host and owner in uppercase');
SELECT ok(NOT pg_temp.marked(), '... exists defines nothing again and owes nothing');

-- host_taken
SELECT buzz.add_relay_member(:'a', pg_temp.pk(3), 'admin') AS setup_1 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org', pg_temp.pk(2)),
                  $$VALUES (NULL::uuid, 'host_taken')$$,
                  'another owner''s host answers host_taken with a NULL id');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'A.Org', pg_temp.pk(2)),
                  $$VALUES (NULL::uuid, 'host_taken')$$,
                  '... also spelled in another case');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org', pg_temp.pk(3)),
                  $$VALUES (NULL::uuid, 'host_taken')$$,
                  '... also for an admin of that community');
SELECT pg_temp.members_are(:'a', $$VALUES (pg_temp.pk(1), 'owner'), (pg_temp.pk(3), 'admin')$$,
                           '... the community is unchanged');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_members m WHERE m.pubkey = pg_temp.pk(2)),
          '... the other owner joined nothing');
SELECT is((SELECT count(*)::integer FROM buzz_private.communities), :communities_before + 1,
          'exists and host_taken created no community');
SELECT ok(NOT pg_temp.marked(), 'exists and host_taken owe no list');

-- hosts: ports are part of the host, case is not
SELECT c.community_id AS b, c.outcome AS b_outcome
FROM buzz.create_community('a.org:443', pg_temp.pk(2)) c \gset
SELECT is(:'b_outcome'::text, 'created', 'a.org:443 is another host than a.org');
SELECT isnt(:'b'::uuid, :'a'::uuid, '... with its own community');
SELECT is(buzz.community_id('a.org:443'), :'b'::uuid, '... found by host and port');
SELECT is(buzz.community_id('a.org'), :'a'::uuid, '... while a.org is still the first one');
SELECT c.community_id AS u, c.outcome AS u_outcome
FROM buzz.create_community('Upper.Example.ORG', upper(pg_temp.pk(4))) c \gset
SELECT is(:'u_outcome'::text, 'created', 'a host in mixed case is created');
SELECT is((SELECT c.host FROM buzz_private.communities c WHERE c.community_id = :'u'), 'upper.example.org',
          '... stored lower-cased');
SELECT is(buzz.community_id('UPPER.example.Org'), :'u'::uuid,
          '... and found by buzz.community_id in any case');
SELECT pg_temp.members_are(:'u', $$VALUES (pg_temp.pk(4), 'owner')$$,
                           '... its owner stored lower-cased');
SELECT is(pg_temp.flush(), 10, 'both communities publish their first lists (2 x list, 8000 and three 33534)');

-- valid hosts
SELECT is(pg_temp.create_outcome('localhost', pg_temp.pk(5)), 'created', 'a single label is a host');
SELECT is(pg_temp.create_outcome('a.org:1', pg_temp.pk(5)), 'created', 'port 1 is accepted');
SELECT is(pg_temp.create_outcome('a.org:65535', pg_temp.pk(5)), 'created', 'port 65535 is accepted');
SELECT is(pg_temp.create_outcome(repeat('a', 63) || '.org', pg_temp.pk(5)), 'created',
          'a label of 63 characters is accepted');
SELECT is(pg_temp.create_outcome(pg_temp.long_host(253), pg_temp.pk(5)), 'created',
          'a name of 253 characters is accepted');
SELECT is(pg_temp.create_outcome('xn--bcher-kva.example', pg_temp.pk(5)), 'created',
          'an IDNA (punycode) name with hyphens is accepted');
SELECT is(pg_temp.flush(), 30, '... six communities publish their first lists and definitions');

-- BZHST
SELECT throws_ok(format('SELECT * FROM buzz.create_community(NULL, %L)', pg_temp.pk(6)),
                 'BZHST', NULL, 'a NULL host raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', '', pg_temp.pk(6)),
                 'BZHST', NULL, 'an empty host raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'https://b.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a scheme raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org/path', pg_temp.pk(6)),
                 'BZHST', NULL, 'a path raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b .org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a space inside raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', ' b.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a leading space raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', E'b.org\n', pg_temp.pk(6)),
                 'BZHST', NULL, 'a trailing newline raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org.', pg_temp.pk(6)),
                 'BZHST', NULL, 'a trailing dot raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b..org', pg_temp.pk(6)),
                 'BZHST', NULL, 'an empty label raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', '-b.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a label starting with a hyphen raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b-.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a label ending with a hyphen raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b_c.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'an underscore raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'bücher.example', pg_temp.pk(6)),
                 'BZHST', NULL, 'a non-ASCII letter raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'user@b.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'user info raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org:0', pg_temp.pk(6)),
                 'BZHST', NULL, 'port 0 raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org:65536', pg_temp.pk(6)),
                 'BZHST', NULL, 'port 65536 raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org:0443', pg_temp.pk(6)),
                 'BZHST', NULL, 'a port with a leading zero raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org:', pg_temp.pk(6)),
                 'BZHST', NULL, 'an empty port raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org:443:1', pg_temp.pk(6)),
                 'BZHST', NULL, 'two ports raise BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', repeat('b', 64) || '.org', pg_temp.pk(6)),
                 'BZHST', NULL, 'a label of 64 characters raises BZHST');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', pg_temp.long_host(254), pg_temp.pk(6)),
                 'BZHST', NULL, 'a name of 254 characters raises BZHST');

-- BZIPK, also where the call would otherwise answer exists
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, NULL)', 'b.org'),
                 'BZIPK', NULL, 'a NULL owner raises BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org', left(pg_temp.pk(6), 63)),
                 'BZIPK', NULL, 'an owner of 63 hex characters raises BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'b.org', 'npub1' || repeat('q', 59)),
                 'BZIPK', NULL, 'an npub owner raises BZIPK');
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org', left(pg_temp.pk(1), 63) || 'x'),
                 'BZIPK', NULL, '... also for a taken host (before exists and host_taken)');
SELECT ok(buzz.community_id('b.org') IS NULL AND NOT pg_temp.marked(),
          'the failed calls created nothing and owe no list');

-- limit_reached: pk(1) owns a.org
UPDATE buzz_private.settings SET max_communities_per_owner = 1;
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'c.org', pg_temp.pk(1)),
                  $$VALUES (NULL::uuid, 'limit_reached')$$,
                  'an owner at the maximum answers limit_reached with a NULL id');
SELECT is(buzz.community_id('c.org'), NULL, '... and no community is created');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org', pg_temp.pk(1)),
                  format('VALUES (%L::uuid, %L)', :'a', 'exists'),
                  '... its own host answers exists (before limit_reached)');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'a.org:443', pg_temp.pk(1)),
                  $$VALUES (NULL::uuid, 'host_taken')$$,
                  '... another owner''s host answers host_taken (before limit_reached)');
SELECT ok(NOT pg_temp.marked(), 'limit_reached owes no list');
UPDATE buzz_private.settings SET max_communities_per_owner = 2;
SELECT is(pg_temp.create_outcome('c.org', pg_temp.pk(1)), 'created',
          'below the limit (one owned, limit two) the community is created');
SELECT is(pg_temp.flush(), 5, '... and publishes its first list and definitions');
UPDATE buzz_private.settings SET max_communities_per_owner = DEFAULT;

-- the default maximum is 50
SELECT is((SELECT count(*)::integer
           FROM generate_series(1, 50) g
           CROSS JOIN LATERAL buzz.create_community('owned-' || g || '.example.org', pg_temp.pk(9)) c
           WHERE c.outcome = 'created'),
          50, 'with the default settings an owner creates 50 communities');
SELECT results_eq(format('SELECT * FROM buzz.create_community(%L, %L)', 'owned-51.example.org', pg_temp.pk(9)),
                  $$VALUES (NULL::uuid, 'limit_reached')$$,
                  '... and the 51st answers limit_reached');
SELECT is(pg_temp.flush(), 250, '... the 50 publish their first lists and definitions');

-- BZISO: the guard is in the body (the error itself is tested by pytest, see the header)
SELECT ok(pg_get_functiondef('buzz.create_community(text, text)'::regprocedure)
          ~ 'PERFORM buzz_private\.require_read_committed\(\)',
          'create_community calls buzz_private.require_read_committed (BZISO)');

-- privileges
SET LOCAL ROLE buzz_writer;
SELECT is(pg_temp.create_outcome('writer.example.org', pg_temp.pk(7)), 'created',
          'buzz_writer may create a community');
SELECT is(pg_temp.flush(), 5, '... and publish its first list and definitions');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'reader.example.org', pg_temp.pk(8)),
                 '42501', NULL, 'buzz_reader may not create a community');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_create_community NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_create_community;
SET LOCAL ROLE buzz_pgtap_nobody_create_community;
SELECT throws_ok(format('SELECT * FROM buzz.create_community(%L, %L)', 'nobody.example.org', pg_temp.pk(8)),
                 '42501', NULL, 'a role without grants may not create a community');
RESET ROLE;
SELECT ok(buzz.community_id('reader.example.org') IS NULL
          AND buzz.community_id('nobody.example.org') IS NULL,
          '... neither refused call created a community');

SELECT * FROM finish();
ROLLBACK;
