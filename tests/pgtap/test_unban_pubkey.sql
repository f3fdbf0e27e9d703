-- buzz.unban_pubkey(p_community uuid, p_pubkey text) -> text
-- Outcomes unbanned / not_banned; an unban makes no member and owes no list, but lets the
-- pubkey claim or ask to join again; BZIPK, BZNCM, BZARC with nothing changed; and who may
-- call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.banned(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(b.pubkey ORDER BY b.pubkey COLLATE "C"), '{}')
        FROM buzz.banned_pubkeys(p_community) b);
CREATE FUNCTION pg_temp.unban_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.unban_pubkey(%s)', p_args), p_code, NULL, p_description);

SELECT plan(30);

SELECT function_returns('buzz', 'unban_pubkey', ARRAY['uuid', 'text'], 'text',
                        'unban_pubkey returns text');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1)) AS setup_1 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.ban_pubkey(:'c', pg_temp.pk(1), 'spam') AS ban_1 \gset
SELECT buzz.ban_pubkey(:'c', pg_temp.pk(2)) AS ban_2 \gset
SELECT buzz.ban_pubkey(:'other', pg_temp.pk(2)) AS ban_3 \gset
SELECT buzz.ban_pubkey(:'archived', pg_temp.pk(3)) AS ban_4 \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
SELECT is(pg_temp.banned(:'c'), (SELECT array_agg(p ORDER BY p COLLATE "C") FROM unnest(ARRAY[pg_temp.pk(1), pg_temp.pk(2)]) p),
          'setup: a member banned (removed) and a stranger banned');

-- unbanned
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(1)), 'unbanned', 'the banned former member: unbanned');
SELECT is(pg_temp.banned(:'c'), ARRAY[pg_temp.pk(2)], '... no longer banned');
SELECT pg_temp.members_are(:'c', $$VALUES (pg_temp.pk(0), 'owner')$$, '... and not made a member');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is(buzz.claim_relay_membership(:'c', pg_temp.pk(1)), 'joined', '... may join by claim again');
SELECT is(pg_temp.flush(), 2, '... published');
SELECT is(buzz.unban_pubkey(:'c', upper(pg_temp.pk(2))), 'unbanned', 'a banned stranger, named in uppercase: unbanned');
SELECT is(pg_temp.banned(:'c'), '{}'::text[], '... no ban left in the community');
SELECT is(pg_temp.banned(:'other'), ARRAY[pg_temp.pk(2)], '... the same pubkey stays banned in another community');

-- After an unban the pubkey may ask to join again
SELECT is(buzz.set_join_policy(:'c', 'request'), 'updated', 'the community takes requests');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), repeat('a', 64)), 'requested', 'a stranger asks');
SELECT is(buzz.ban_pubkey(:'c', pg_temp.pk(4)), 'banned', '... is banned (the request dropped)');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), repeat('b', 64)), 'banned', '... asks again: banned');
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(4)), 'unbanned', '... is unbanned');
SELECT is(buzz.request_membership(:'c', pg_temp.pk(4), repeat('b', 64)), 'requested', '... and may ask again');

-- not_banned
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(2)), 'not_banned', 'unbanning again: not_banned');
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(9)), 'not_banned', 'a pubkey never banned: not_banned');
SELECT is(buzz.unban_pubkey(:'c', pg_temp.pk(0)), 'not_banned', 'the owner: not_banned');
SELECT ok(NOT pg_temp.marked(), '... no list owed');

-- Errors
SELECT pg_temp.unban_throws(format('%L, NULL', :'c'), 'BZIPK', 'a NULL pubkey: BZIPK');
SELECT pg_temp.unban_throws(format('%L, %L', :'other', pg_temp.pk(2) || 'a'), 'BZIPK', 'a pubkey of 65 characters: BZIPK');
SELECT pg_temp.unban_throws(format('%L, %L', gen_random_uuid(), pg_temp.pk(2)), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.unban_throws(format('NULL, %L', pg_temp.pk(2)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.unban_throws(format('%L, %L', :'archived', pg_temp.pk(3)), 'BZARC', 'an archived community: BZARC');
SELECT ok(pg_temp.banned(:'archived') = ARRAY[pg_temp.pk(3)] AND pg_temp.banned(:'other') = ARRAY[pg_temp.pk(2)],
          'the refused calls lifted no ban');

-- Who may call it
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.unban_pubkey(:'other', pg_temp.pk(2)), 'unbanned', 'buzz_writer may unban');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.unban_throws(format('%L, %L', :'other', pg_temp.pk(2)), '42501', 'buzz_reader may not');
RESET ROLE;
CREATE ROLE buzz_pgtap_nobody_unban_pubkey NOLOGIN;
-- Only the schema: the refusal must come from EXECUTE not being granted to PUBLIC.
GRANT USAGE ON SCHEMA buzz TO buzz_pgtap_nobody_unban_pubkey;
SET LOCAL ROLE buzz_pgtap_nobody_unban_pubkey;
SELECT pg_temp.unban_throws(format('%L, %L', :'other', pg_temp.pk(2)), '42501', 'a role without grants may not');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
