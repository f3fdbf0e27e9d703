-- buzz.banned_pubkeys(p_community uuid)
--   -> TABLE(pubkey text, reason text, banned_by text, banned_at timestamptz)
-- The community's bans by pubkey, with reason, who banned and when; another community's not
-- among them; an archived community's still read; none for an unknown or NULL community; and
-- who may call it (buzz_reader and buzz_writer, nobody else).
BEGIN;
\ir lib/fixtures.sql

SELECT plan(15);

SELECT function_returns('buzz', 'banned_pubkeys', ARRAY['uuid'], 'setof record',
                        'banned_pubkeys returns a table');
SELECT is((SELECT array_agg(x ORDER BY n) FROM unnest((SELECT p.proargnames FROM pg_proc p
           WHERE p.oid = 'buzz.banned_pubkeys(uuid)'::regprocedure)) WITH ORDINALITY AS t (x, n)),
          ARRAY['p_community', 'pubkey', 'reason', 'banned_by', 'banned_at'],
          '... of pubkey, reason, banned_by and banned_at');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT is_empty(format('SELECT * FROM buzz.banned_pubkeys(%L)', :'c'), 'a new community: no bans');

SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(3), 'third', 'mod') || buzz.ban_pubkey(:'c', pg_temp.pk(1))
          || buzz.ban_pubkey(:'c', upper(pg_temp.pk(2)), E'two\nlines', pg_temp.pk(0))
          || buzz.ban_pubkey(:'other', pg_temp.pk(4)),
          'bannedbannedbannedbanned', 'setup: three bans, one in another community');
SELECT results_eq(format('SELECT b.pubkey, b.reason, b.banned_by FROM buzz.banned_pubkeys(%L) b', :'c'),
                  format($$SELECT * FROM (VALUES (%L, 'third', 'mod'), (%L, NULL, NULL), (%L, E'two\nlines', %L))
                             AS v (pubkey, reason, banned_by) ORDER BY v.pubkey COLLATE "C"$$,
                         pg_temp.pk(3), pg_temp.pk(1), pg_temp.pk(2), pg_temp.pk(0)),
                  'the bans by pubkey, with reason and who banned; not the other community''s');
SELECT ok((SELECT bool_and(b.banned_at = now()) FROM buzz.banned_pubkeys(:'c') b), '... and when');

SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(1)), 'unbanned', 'one unbanned');
SELECT is((SELECT count(*) FROM buzz.banned_pubkeys(:'c')), 2::bigint, '... is no longer listed');
SELECT is(buzz.archive_community(:'other'), 'archived', 'the other community archived');
SELECT results_eq(format('SELECT b.pubkey FROM buzz.banned_pubkeys(%L) b', :'other'),
                  format('VALUES (%L)', pg_temp.pk(4)), '... its bans are still read');
SELECT is_empty(format('SELECT * FROM buzz.banned_pubkeys(%L)', gen_random_uuid()), 'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.banned_pubkeys(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT is((SELECT count(*) FROM buzz.banned_pubkeys(:'c')), 2::bigint, 'buzz_reader may read the bans');
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM buzz.banned_pubkeys(:'c')), 2::bigint, 'buzz_writer may');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_banned_pubkeys NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_banned_pubkeys;
SET LOCAL ROLE buzz_pgtap_nobody_banned_pubkeys;
SELECT throws_ok(format('SELECT * FROM buzz.banned_pubkeys(%L)', :'c'), '42501', NULL,
                 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
