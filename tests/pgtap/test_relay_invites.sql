-- buzz.relay_invites(p_community uuid)
--   -> TABLE(invite_id, created_by, created_at, expires_at, max_uses, use_count, sealed)
-- Every invite of the community, oldest first, with its uses and without its code; revoked
-- invites gone; no rows for an unknown or NULL community; buzz_writer may call it,
-- buzz_reader may not.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(11);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT invite_id AS first, code AS first_code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 2, '1 hour') \gset
SELECT invite_id AS second FROM buzz.create_relay_invite(:'c', 'admin-ui', NULL, '2 days') \gset
SELECT invite_id AS elsewhere FROM buzz.create_relay_invite(:'other', pg_temp.pk(0)) \gset
-- Distinct created_at within one transaction: move the first back in time.
UPDATE buzz_private.relay_invites SET created_at = created_at - interval '1 minute'
WHERE invite_id = :'first';
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', :'first_code', pg_temp.pk(1)) x), 'joined',
          'one use of the first invite');
SELECT is(pg_temp.flush(), 2, '... published');

SELECT results_eq(format('SELECT i.invite_id, i.created_by, i.max_uses, i.use_count FROM buzz.relay_invites(%L) i', :'c'),
                  format($$VALUES (%L::uuid, %L::text, 2, 1), (%L::uuid, 'admin-ui', NULL::integer, 0)$$,
                         :'first', pg_temp.pk(0), :'second'),
                  'every invite of the community, oldest first, with its uses');
SELECT ok((SELECT bool_and(i.expires_at > i.created_at) FROM buzz.relay_invites(:'c') i),
          '... and when each expires');
SELECT is((SELECT array_agg(x ORDER BY n) FROM unnest((SELECT p.proargnames FROM pg_proc p
           WHERE p.oid = 'buzz.relay_invites(uuid)'::regprocedure)) WITH ORDINALITY AS t (x, n)),
          ARRAY['p_community', 'invite_id', 'created_by', 'created_at', 'expires_at', 'max_uses', 'use_count', 'sealed'],
          '... and no code among them, only the sealed copy its maker kept');
SELECT is(buzz.revoke_relay_invite(:'c', :'second'), 'revoked', 'the second invite revoked');
SELECT results_eq(format('SELECT i.invite_id FROM buzz.relay_invites(%L) i', :'c'),
                  format($$VALUES (%L::uuid)$$, :'first'), '... is no longer listed');
SELECT is_empty(format('SELECT * FROM buzz.relay_invites(%L)', gen_random_uuid()),
                'an unknown community: no rows');
SELECT is_empty('SELECT * FROM buzz.relay_invites(NULL)', 'a NULL community: no rows');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is((SELECT count(*) FROM buzz.relay_invites(:'other')), 1::bigint, 'buzz_writer may');
RESET ROLE;
SET LOCAL ROLE buzz_reader;
SELECT throws_ok(format('SELECT * FROM buzz.relay_invites(%L)', :'c'), '42501', NULL,
                 'buzz_reader may not: who invited whom is not for readers');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
