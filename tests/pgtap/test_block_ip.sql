-- buzz.block_ip(p_community uuid, p_address inet, p_reason text DEFAULT NULL,
--               p_blocked_by text DEFAULT NULL) -> text
-- buzz.unblock_ip(p_community uuid, p_address inet) -> text
-- buzz.blocked_ips(p_community uuid) -> TABLE(address cidr, reason, blocked_by, blocked_at)
-- Outcomes blocked / already_blocked and unblocked / not_blocked, for IPv4 and IPv6 addresses
-- and networks, an IPv4-mapped IPv6 address kept as its IPv4 one; per community, no list
-- owed; the bound of 1,000 (54000); bad input (22023, BZNCM, BZARC) changing nothing; NOTIFY
-- buzz_moderation at the commit of a change, never for a no-op or a rollback; who may call
-- them.
BEGIN;
\ir lib/fixtures.sql
\ir lib/moderation.sql

-- The blocks as 'address reason', by address.
CREATE FUNCTION pg_temp.blocked(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(b.address::text || ' ' || coalesce(b.reason, '-') ORDER BY b.address), '{}')
        FROM buzz.blocked_ips(p_community) b);
CREATE FUNCTION pg_temp.throws(p_function text, p_args text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT buzz.%s(%s)', p_function, p_args), p_code, NULL, p_description);

SELECT plan(46);

SELECT function_returns('buzz', 'block_ip', ARRAY['uuid', 'inet', 'text', 'text'], 'text',
                        'block_ip returns text');
SELECT function_returns('buzz', 'unblock_ip', ARRAY['uuid', 'inet'], 'text', 'unblock_ip returns text');
SELECT function_returns('buzz', 'blocked_ips', ARRAY['uuid'], 'setof record', 'blocked_ips returns rows');

SELECT pg_temp.community() AS c \gset
SELECT pg_temp.community('other.example.org') AS other \gset
SELECT pg_temp.community('archived.example.org') AS archived \gset
SELECT buzz.block_ip(:'archived', '192.0.2.9') AS setup_block \gset
SELECT buzz.archive_community(:'archived') AS setup_archive \gset

-- blocked
SELECT is(buzz.block_ip(:'c', '192.0.2.1', 'flood', pg_temp.pk(0)), 'blocked', 'an IPv4 address: blocked');
SELECT is(buzz.block_ip(:'c', '198.51.100.0/24'), 'blocked', 'an IPv4 network: blocked');
SELECT is(buzz.block_ip(:'c', '2001:db8::1'), 'blocked', 'an IPv6 address: blocked');
SELECT is(buzz.block_ip(:'c', '2001:db8:ff::/48', 'a range'), 'blocked', 'an IPv6 network: blocked');
SELECT is(buzz.block_ip(:'c', '::ffff:203.0.113.7'), 'blocked', 'an IPv4-mapped IPv6 address: blocked');
SELECT is(pg_temp.blocked(:'c'),
          ARRAY['192.0.2.1/32 flood', '198.51.100.0/24 -', '203.0.113.7/32 -',
                '2001:db8::1/128 -', '2001:db8:ff::/48 a range'],
          '... listed by address, IPv4 first, the mapped one as its IPv4 address');
SELECT is((SELECT b.blocked_by = pg_temp.pk(0) AND b.blocked_at = now() FROM buzz.blocked_ips(:'c') b
           WHERE b.address = '192.0.2.1/32'), true, '... with who blocked it and when');
SELECT ok(NOT pg_temp.marked(), '... no list owed: not a membership write');
SELECT is(buzz.block_ip(:'c', '192.0.2.1/32', 'again'), 'already_blocked', 'the same address as a /32: already_blocked');
SELECT is(buzz.block_ip(:'c', '203.0.113.7'), 'already_blocked', 'the mapped address as IPv4: already_blocked');
SELECT is(buzz.block_ip(:'c', '::ffff:198.51.100.0/120'), 'already_blocked',
          'the IPv4 network as a mapped IPv6 one: already_blocked');
SELECT is(buzz.block_ip(:'c', '198.51.100.7'), 'blocked', 'an address inside a blocked network: blocked, kept on its own');
SELECT is(buzz.block_ip(:'c', '192.0.2.1', ''), 'already_blocked', '... the first reason is kept');
SELECT is((SELECT b.reason FROM buzz.blocked_ips(:'c') b WHERE b.address = '192.0.2.1/32'), 'flood', '... flood');
SELECT is(pg_temp.blocked(:'other'), '{}'::text[], 'another community blocks none of it');
SELECT is(pg_temp.blocked(:'archived'), ARRAY['192.0.2.9/32 -'], 'an archived community''s blocks are listed');

-- unblocked
SELECT is(buzz.unblock_ip(:'c', '198.51.100.7'), 'unblocked', 'unblock the address: unblocked');
SELECT is(buzz.unblock_ip(:'c', '198.51.100.8'), 'not_blocked',
          'an address inside a blocked network, never blocked itself: not_blocked');
SELECT is(buzz.unblock_ip(:'c', '::ffff:203.0.113.7'), 'unblocked', 'unblock by the mapped form: unblocked');
SELECT is(buzz.unblock_ip(:'c', '2001:db8:ff::/48'), 'unblocked', 'an IPv6 network: unblocked');
SELECT is(buzz.unblock_ip(:'c', '2001:db8:ff::/48'), 'not_blocked', '... again: not_blocked');
SELECT is(pg_temp.blocked(:'c'), ARRAY['192.0.2.1/32 flood', '198.51.100.0/24 -', '2001:db8::1/128 -'],
          '... what remains');
SELECT ok(NOT pg_temp.marked(), '... no list owed');
SELECT is_empty(format('SELECT * FROM buzz.blocked_ips(%L)', gen_random_uuid()),
                'blocked_ips of an unknown community: no rows');

-- The bound: 1,000 per community
INSERT INTO buzz_private.blocked_ips (community_id, address)
SELECT :'c', ('10.0.' || (i / 256) || '.' || (i % 256))::cidr FROM generate_series(1, 996) i;
SELECT is(buzz.block_ip(:'c', '172.16.0.0/12'), 'blocked', 'the 1,000th: blocked');
SELECT pg_temp.throws('block_ip', format('%L, %L', :'c', '172.32.0.1'), '54000', 'the 1,001st: 54000');
SELECT is(buzz.block_ip(:'c', '172.16.0.0/12'), 'already_blocked', '... blocking one of them again: already_blocked');
DELETE FROM buzz_private.blocked_ips b WHERE b.community_id = :'c' AND b.address << '10.0.0.0/16';
SELECT is(buzz.unblock_ip(:'c', '172.16.0.0/12'), 'unblocked', 'setup: back to three');

-- Errors: nothing changes
SELECT pg_temp.throws('block_ip', format('%L, NULL', :'c'), '22023', 'a NULL address: 22023');
SELECT pg_temp.throws('block_ip', format('%L, %L', :'c', '10.0.0.1/8'), '22023',
                      'an address with bits set beyond its mask: 22023');
SELECT pg_temp.throws('unblock_ip', format('%L, %L', :'c', '2001:db8::1/32'), '22023', '... unblock_ip too');
SELECT pg_temp.throws('block_ip', format('%L, %L, %L', :'c', '10.0.0.1', repeat('r', 1001)), '22023',
                      'a reason of 1,001 characters: 22023');
SELECT pg_temp.throws('block_ip', format('%L, %L, NULL, %L', :'c', '10.0.0.1', E'tab\x01'), '22023',
                      'blocked_by with a control character: 22023');
SELECT pg_temp.throws('block_ip', format('%L, %L', gen_random_uuid(), '10.0.0.1'), 'BZNCM', 'an unknown community: BZNCM');
SELECT pg_temp.throws('block_ip', format('NULL, %L', '10.0.0.1'), 'BZNCM', 'a NULL community: BZNCM');
SELECT pg_temp.throws('block_ip', format('%L, %L', :'archived', '10.0.0.1'), 'BZARC', 'an archived community: BZARC');
SELECT pg_temp.throws('unblock_ip', format('%L, %L', :'archived', '192.0.2.9'), 'BZARC', '... unblock_ip there too');
SELECT ok(pg_temp.blocked(:'c') = ARRAY['192.0.2.1/32 flood', '198.51.100.0/24 -', '2001:db8::1/128 -']
          AND pg_temp.blocked(:'archived') = ARRAY['192.0.2.9/32 -'],
          'the refused calls changed nothing');

-- NOTIFY buzz_moderation, delivered at COMMIT
SELECT is(pg_temp.notified(ARRAY[
              pg_temp.step('PERFORM buzz.block_ip({c}, ''192.0.2.1'')'),
              pg_temp.step('PERFORM buzz.block_ip({c}, ''::ffff:192.0.2.1'')'),
              pg_temp.rolled_back('PERFORM buzz.block_ip({c}, ''192.0.2.2'')'),
              pg_temp.step('PERFORM buzz.unblock_ip({c}, ''192.0.2.2'')'),
              pg_temp.step('PERFORM buzz.block_ip({c}, ''2001:db8::/32'')',
                           'PERFORM buzz.unblock_ip({c}, ''192.0.2.1'')')]),
          ARRAY['C', 'C', 'marker C'],
          'a change that commits is announced with the community id; a no-op and a rollback are '
          'not; two changes in one transaction are one notification');

-- Who may call them
SET LOCAL ROLE buzz_writer;
SELECT is(buzz.block_ip(:'other', '192.0.2.1'), 'blocked', 'buzz_writer may block');
SELECT is(buzz.unblock_ip(:'other', '192.0.2.1'), 'unblocked', '... and unblock');
SET LOCAL ROLE buzz_reader;
SELECT pg_temp.throws('block_ip', format('%L, %L', :'other', '192.0.2.1'), '42501', 'buzz_reader may not block');
SELECT is(pg_temp.blocked(:'archived'), ARRAY['192.0.2.9/32 -'], '... but may read the blocks');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
