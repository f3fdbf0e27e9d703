-- buzz.community_id(p_host text) -> uuid
-- The community of a host, compared case-insensitively, port included; NULL for an unknown,
-- malformed or NULL host and after deletion; and who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(19);

SELECT community_id AS c FROM buzz.create_community('Relay.Example.ORG', pg_temp.pk(0)) \gset
SELECT community_id AS plain FROM buzz.create_community('a.example.org', pg_temp.pk(0)) \gset
SELECT community_id AS port FROM buzz.create_community('a.example.org:443', pg_temp.pk(0)) \gset
SELECT is(pg_temp.flush(), 15, 'three communities published (each a list, an 8000, three 33534)');

SELECT is(buzz.community_id('relay.example.org'), :'c'::uuid, 'the host, lower-cased: its community');
SELECT is(buzz.community_id('Relay.Example.ORG'), :'c'::uuid, '... as it was given');
SELECT is(buzz.community_id('RELAY.EXAMPLE.ORG'), :'c'::uuid, '... in uppercase');
SELECT is(buzz.community_id('a.example.org'), :'plain'::uuid, 'a host without port');
SELECT is(buzz.community_id('a.example.org:443'), :'port'::uuid, '... and with a port are different communities');
SELECT ok(buzz.community_id('a.example.org:8443') IS NULL, 'another port: NULL');
SELECT ok(buzz.community_id('unknown.example.org') IS NULL, 'an unknown host: NULL');
SELECT ok(buzz.community_id('relay.example.org.') IS NULL, 'a trailing dot: NULL');
SELECT ok(buzz.community_id(' relay.example.org') IS NULL, 'a leading space: NULL');
SELECT ok(buzz.community_id('https://relay.example.org') IS NULL, 'a URL: NULL');
SELECT ok(buzz.community_id('') IS NULL, 'an empty host: NULL');
SELECT ok(buzz.community_id(NULL) IS NULL, 'a NULL host: NULL');
SELECT community_id AS kind FROM buzz.create_community('kind.example.org', pg_temp.pk(0)) \gset
SELECT is(buzz.community_id('KIND.example.org'), :'kind'::uuid, 'kind.example.org is found');
SELECT ok(buzz.community_id(U&'\212Aind.example.org') IS NULL,
          '... but not through U+212A KELVIN SIGN, which lower() turns into k');
SELECT is(buzz.delete_community(:'plain'), 'deleted', 'a community deleted');
SELECT ok(buzz.community_id('a.example.org') IS NULL, '... its host: NULL');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is(buzz.community_id('relay.example.org'), :'c'::uuid, 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.community_id('relay.example.org'), :'c'::uuid, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
