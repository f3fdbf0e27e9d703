-- buzz.communities() -> TABLE(community_id uuid, host text, created_at timestamptz,
--                             archived_at timestamptz)
-- Every community by host, archived ones included with their archived_at, deleted ones gone;
-- and who may call it.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(6);

DELETE FROM buzz_private.communities;
SELECT is_empty('SELECT * FROM buzz.communities()', 'no community: no rows');
SELECT pg_temp.community('b.example.org') AS b \gset
SELECT pg_temp.community('a.example.org:8443') AS a \gset
SELECT pg_temp.community('c.example.org') AS c \gset
SELECT buzz.archive_community(:'c') AS archived \gset
SELECT results_eq(
    'SELECT community_id, host, archived_at IS NOT NULL FROM buzz.communities()',
    format($$VALUES (%L::uuid, 'a.example.org:8443', false), (%L::uuid, 'b.example.org', false),
                    (%L::uuid, 'c.example.org', true)$$, :'a', :'b', :'c'),
    'every community by host, the archived one marked');
SELECT is(buzz.delete_community(:'b'), 'deleted', 'one deleted');
SELECT is(ARRAY(SELECT host FROM buzz.communities()), ARRAY['a.example.org:8443', 'c.example.org'],
          '... is gone from the list');

SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*) FROM buzz.communities()), 2::bigint, 'buzz_reader may');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM buzz.communities()), 2::bigint, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
