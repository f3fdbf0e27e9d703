-- buzz.create_relay_invite(p_community uuid, p_created_by text, p_max_uses integer DEFAULT 1,
--                          p_ttl interval DEFAULT '72 hours', p_code text DEFAULT NULL,
--                          p_sealed text DEFAULT NULL)
--   -> TABLE(invite_id uuid, code text, expires_at timestamptz)
-- The code (32 hex characters, stored only as its sha256), the defaults, p_max_uses NULL or
-- 1..10000 and p_ttl 60 s..30 days (else BZINV), p_created_by (22023), a chosen p_code
-- (8-128 characters of [A-Za-z0-9_-], else BZINV; claimed without regard to case; equal to
-- a live code BZINV, without echoing it; equal to an expired or used-up one it replaces that
-- invite), p_sealed (returned by relay_invites, at most 1000 characters, else 22023), BZNCM,
-- BZARC, no membership change, and who may call it.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.invite_throws(p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT * FROM buzz.create_relay_invite(%s)', p_args), p_code, NULL,
                 p_description);
CREATE FUNCTION pg_temp.invite_lives(p_args text, p_description text)
RETURNS text LANGUAGE sql
RETURN lives_ok(format('SELECT * FROM buzz.create_relay_invite(%s)', p_args), p_description);

SELECT plan(74);

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT pg_temp.community('other.example.org') AS other_c \gset
SELECT buzz.archive_community(:'archived') AS archive_outcome \gset
-- pk(3) creates invites too: an admin, whose quota is unlimited by default (the quotas
-- themselves: test_invite_quotas).
SELECT buzz.add_relay_member(:'c', pg_temp.pk(3), 'admin') AS setup_admin \gset
SELECT pg_temp.flush() AS setup_published \gset

-- The code and the defaults
SELECT clock_timestamp() AS before \gset
SELECT invite_id, code, expires_at FROM buzz.create_relay_invite(:'c', pg_temp.pk(0)) \gset
SELECT clock_timestamp() AS after \gset
SELECT ok(:'code' ~ '^[0-9a-f]{32}$', 'the code is 32 lowercase hex characters (128 bits)');
SELECT ok(:'invite_id' IS NOT NULL, '... with an invite id');
SELECT ok(:'expires_at'::timestamptz BETWEEN :'before'::timestamptz + interval '72 hours'
                                         AND :'after'::timestamptz + interval '72 hours',
          '... expiring after 72 hours by default');
SELECT is((SELECT i.max_uses FROM buzz_private.relay_invites i WHERE i.invite_id = :'invite_id'),
          1, '... for one use by default');
SELECT is((SELECT i.use_count FROM buzz_private.relay_invites i WHERE i.invite_id = :'invite_id'),
          0, '... none used yet');
SELECT is((SELECT i.community_id FROM buzz_private.relay_invites i WHERE i.invite_id = :'invite_id'),
          :'c'::uuid, '... in its community');
SELECT is((SELECT i.code_sha256 FROM buzz_private.relay_invites i WHERE i.invite_id = :'invite_id'),
          sha256(convert_to(:'code', 'UTF8')), 'the sha256 of the code is stored');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_invites i
                      WHERE strpos(i::text, :'code') > 0 OR strpos(i::text, upper(:'code')) > 0),
          '... and the code itself nowhere');
SELECT is((SELECT i.created_by FROM buzz_private.relay_invites i WHERE i.invite_id = :'invite_id'),
          pg_temp.pk(0), '... with who created it');
SELECT isnt((SELECT x.code FROM buzz.create_relay_invite(:'c', pg_temp.pk(0)) x), :'code',
            'another invite has another code');
SELECT ok(NOT pg_temp.marked(), 'creating invites is not a membership write: no list owed');

-- p_max_uses and p_ttl
SELECT invite_id AS unlimited FROM buzz.create_relay_invite(:'c', 'admin-ui', NULL, interval '1 hour') \gset
SELECT ok((SELECT i.max_uses IS NULL FROM buzz_private.relay_invites i WHERE i.invite_id = :'unlimited'),
          'p_max_uses NULL: unlimited');
SELECT is((SELECT i.created_by FROM buzz_private.relay_invites i WHERE i.invite_id = :'unlimited'),
          'admin-ui', 'p_created_by may be a label');
SELECT pg_temp.invite_lives(format('%L, %L, 1', :'c', pg_temp.pk(0)), 'p_max_uses 1');
SELECT pg_temp.invite_lives(format('%L, %L, 10000', :'c', pg_temp.pk(0)), 'p_max_uses 10000');
SELECT pg_temp.invite_throws(format('%L, %L, 0', :'c', pg_temp.pk(0)), 'BZINV', 'p_max_uses 0: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, -1', :'c', pg_temp.pk(0)), 'BZINV', 'p_max_uses -1: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 10001', :'c', pg_temp.pk(0)), 'BZINV', 'p_max_uses 10001: BZINV');
SELECT pg_temp.invite_lives(format('%L, %L, 1, %L', :'c', pg_temp.pk(0), '60 seconds'), 'p_ttl 60 s');
SELECT pg_temp.invite_lives(format('%L, %L, 1, %L', :'c', pg_temp.pk(0), '30 days'), 'p_ttl 30 days');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L', :'c', pg_temp.pk(0), '59 seconds'), 'BZINV',
                             'p_ttl 59 s: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L', :'c', pg_temp.pk(0), '30 days 1 second'), 'BZINV',
                             'p_ttl 30 days and 1 s: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L', :'c', pg_temp.pk(0), '-1 hour'), 'BZINV',
                             'a negative p_ttl: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, NULL', :'c', pg_temp.pk(0)), 'BZINV', 'p_ttl NULL: BZINV');
SELECT clock_timestamp() AS before \gset
SELECT expires_at AS short FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 1, interval '60 seconds') \gset
SELECT clock_timestamp() AS after \gset
SELECT ok(:'short'::timestamptz BETWEEN :'before'::timestamptz + interval '60 seconds'
                                    AND :'after'::timestamptz + interval '60 seconds',
          '... the ttl counts from the clock');

-- p_created_by
SELECT invite_id AS upper_by FROM buzz.create_relay_invite(:'c', upper(pg_temp.pk(3))) \gset
SELECT is((SELECT i.created_by FROM buzz_private.relay_invites i WHERE i.invite_id = :'upper_by'),
          pg_temp.pk(3), 'a pubkey in p_created_by is lower-cased');
SELECT pg_temp.invite_throws(format('%L, NULL', :'c'), '22023', 'p_created_by NULL: 22023');
SELECT pg_temp.invite_throws(format('%L, %L', :'c', ''), '22023', 'p_created_by empty: 22023');
SELECT pg_temp.invite_throws(format('%L, %L', :'c', repeat('x', 65)), '22023',
                             'p_created_by of 65 characters: 22023');
SELECT pg_temp.invite_throws(format('%L, %L', :'c', E'a\nb'), '22023',
                             'p_created_by with a control character: 22023');

-- The community
SELECT pg_temp.invite_throws(format('%L, %L', gen_random_uuid(), pg_temp.pk(0)), 'BZNCM',
                             'an unknown community: BZNCM');
SELECT pg_temp.invite_throws(format('NULL, %L', pg_temp.pk(0)), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.invite_throws(format('%L, %L', :'archived', pg_temp.pk(0)), 'BZARC',
                             'an archived community: BZARC');
SELECT pg_temp.invite_throws(format('%L, %L, 0', gen_random_uuid(), pg_temp.pk(0)), 'BZINV',
                             'p_max_uses out of range on an unknown community: BZINV, arguments first');
SELECT is((SELECT count(*) FROM buzz_private.relay_invites i WHERE i.community_id = :'archived'),
          0::bigint, 'no invite was created on the archived community');
SELECT ok(NOT pg_temp.marked(), 'still no list owed');
SELECT is(pg_temp.guard(), NULL, '... and the commit guard passes');

-- p_code: the caller's code, 8-128 characters of [A-Za-z0-9_-], compared without regard to case
CREATE FUNCTION pg_temp.invites_with(p_community uuid, p_code text) RETURNS bigint LANGUAGE sql
RETURN (SELECT count(*) FROM buzz_private.relay_invites i
        WHERE i.community_id = p_community AND i.code_sha256 = sha256(convert_to(lower(p_code), 'UTF8')));
-- The message of the error a statement raises (NULL if none); its effects are rolled back.
CREATE FUNCTION pg_temp.message_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE p_sql;
    EXCEPTION WHEN OTHERS THEN
        RETURN SQLERRM;
    END;
    RETURN NULL;
END
$$;
SELECT invite_id AS chosen_id, code AS chosen FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 3, '1 hour', 'Flotilla-Code_01') \gset
SELECT is(:'chosen'::text, 'Flotilla-Code_01', 'a chosen code is returned as given');
SELECT is((SELECT i.code_sha256 FROM buzz_private.relay_invites i WHERE i.invite_id = :'chosen_id'),
          sha256(convert_to('flotilla-code_01', 'UTF8')), '... the sha256 of its lower case is stored');
SELECT ok(NOT EXISTS (SELECT FROM buzz_private.relay_invites i
                      WHERE strpos(lower(i::text), 'flotilla-code_01') > 0),
          '... and the code itself nowhere');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', 'FLOTILLA-CODE_01', pg_temp.pk(20)) x), 'joined',
          '... claimed in upper case: joined');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', 'flotilla-code_01', pg_temp.pk(21)) x), 'joined',
          '... and in lower case');
SELECT is(pg_temp.flush(), 3, '... the two joins published');
SELECT pg_temp.invite_lives(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'abcd-_89'), 'a code of 8 characters');
SELECT pg_temp.invite_lives(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', repeat('C', 128)), 'a code of 128 characters');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'abcd-_8'), 'BZINV', 'a code of 7 characters: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', repeat('C', 129)), 'BZINV', 'a code of 129 characters: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', ''), 'BZINV', 'an empty code: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'code with space'), 'BZINV', 'a code with a space: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'code.with.dots'), 'BZINV', 'a code with dots: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'code+slash/'), 'BZINV', 'a code with + and /: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'c' || U&'\00F6' || 'decode'), 'BZINV', 'a code with a non-ASCII letter: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', E'codecode\n'), 'BZINV', 'a code with a line break: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', $$x' OR '1'='1$$), 'BZINV', 'a code shaped like SQL: BZINV');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'FLOTILLA-code_01'), 'BZINV',
                             'a code equal to a live one (another case): BZINV');
SELECT ok(strpos(lower(pg_temp.message_of(format('SELECT * FROM buzz.create_relay_invite(%L, %L, 1, %L, %L)',
                                                 :'c', pg_temp.pk(0), '1 hour', 'FLOTILLA-code_01'))),
                 'flotilla') = 0,
          '... whose message does not echo the code');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L', :'c', pg_temp.pk(0), '1 hour', upper(:'code')), 'BZINV',
                             'a code equal to a live drawn one: BZINV');
SELECT ok(pg_temp.invites_with(:'c', 'flotilla-code_01') = 1 AND pg_temp.invites_with(:'c', :'code') = 1,
          '... the live invites are kept, once each');
SELECT pg_temp.invite_lives(format('%L, %L, 1, %L, %L', :'other_c', pg_temp.pk(0), '1 hour', 'Flotilla-Code_01'),
                            'the same code in another community');
-- Equal to an expired invite's or a used-up one's: it replaces that invite
SELECT invite_id AS old_id FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 1, '1 hour', 'Expired-Code') \gset
UPDATE buzz_private.relay_invites SET expires_at = clock_timestamp() - interval '1 second' WHERE invite_id = :'old_id';
SELECT invite_id AS new_id FROM buzz.create_relay_invite(:'c', pg_temp.pk(3), 1, '1 hour', 'EXPIRED-CODE') \gset
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'old_id')
          AND EXISTS (SELECT FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'new_id' AND i.created_by = pg_temp.pk(3)),
          'a code equal to an expired one replaces that invite');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', 'expired-code', pg_temp.pk(22)) x), 'joined',
          '... and the code works again');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', 'expired-code', pg_temp.pk(23)) x), 'exhausted',
          '... until used up');
SELECT invite_id AS third_id FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 5, '1 hour', 'expired-code') \gset
SELECT ok(NOT EXISTS (SELECT FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'new_id')
          AND pg_temp.invites_with(:'c', 'expired-code') = 1,
          'a code equal to a used-up one replaces that invite');
SELECT is((SELECT x.outcome FROM buzz.claim_relay_invite(:'c', 'Expired-Code', pg_temp.pk(23)) x), 'joined',
          '... and the code works again');
SELECT is(pg_temp.flush(), 3, '... the joins published');
-- p_sealed: opaque text kept with the invite, returned by relay_invites
SELECT invite_id AS sealed_id FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), 1, '1 hour', 'sealed-code', 'AqSealed+/=') \gset
SELECT is((SELECT i.sealed FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'sealed_id'), 'AqSealed+/=',
          'p_sealed is stored and returned by relay_invites');
SELECT is((SELECT i.sealed FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'chosen_id'), NULL,
          '... NULL where none was given');
SELECT invite_id AS sealed_drawn FROM buzz.create_relay_invite(:'c', pg_temp.pk(0), p_sealed => repeat('s', 1000)) \gset
SELECT is((SELECT i.sealed FROM buzz.relay_invites(:'c') i WHERE i.invite_id = :'sealed_drawn'), repeat('s', 1000),
          '... 1000 characters, with a drawn code');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, NULL, %L', :'c', pg_temp.pk(0), '1 hour', repeat('s', 1001)), '22023',
                             'a sealed text of 1001 characters: 22023');
SELECT pg_temp.invite_throws(format('%L, %L, 1, %L, %L, %L', :'c', pg_temp.pk(0), '1 hour', 'unsealed-code', ''), '22023',
                             'an empty sealed text: 22023');
SELECT is(pg_temp.invites_with(:'c', 'unsealed-code'), 0::bigint, '... no invite made');
SELECT ok(NOT pg_temp.marked(), 'no list owed');

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.invite_throws(format('%L, %L', :'c', pg_temp.pk(0)), '42501',
                             'buzz_reader may not create invites');
SET LOCAL ROLE buzz_writer;
SELECT pg_temp.invite_lives(format('%L, %L', :'c', pg_temp.pk(0)), 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
