-- buzz.moderation_rules(p_community uuid DEFAULT NULL)
--   -> TABLE(community_id uuid, rule text, subject text)
-- What the relay loads: the banned events, kind rules and blocked addresses of one community,
-- or of every community (NULL), one row per rule, nothing else (no assigned method); none for
-- a community without rules or an unknown one; a community's go with it when it is deleted;
-- who may call it.
BEGIN;
\ir lib/fixtures.sql

-- The rules as 'host rule subject', sorted, of the communities made here (a, b, c).
CREATE FUNCTION pg_temp.rules(p_community uuid) RETURNS text[] LANGUAGE sql
RETURN (SELECT coalesce(array_agg(c.host || ' ' || r.rule || ' ' || r.subject
                                  ORDER BY c.host, r.rule, r.subject), '{}')
        FROM buzz.moderation_rules(p_community) r
        JOIN buzz.communities() c ON c.community_id = r.community_id
        WHERE c.host ~ '^[abc]\.example\.org$');

SELECT plan(10);

SELECT function_returns('buzz', 'moderation_rules', ARRAY['uuid'], 'setof record',
                        'moderation_rules returns rows');

SELECT pg_temp.community('a.example.org') AS a \gset
SELECT pg_temp.community('b.example.org') AS b \gset
SELECT pg_temp.community('c.example.org') AS c \gset
SELECT buzz.add_relay_member(:'a', pg_temp.pk(1)) AS setup_member \gset
SELECT pg_temp.flush() AS setup_published \gset
SELECT is(pg_temp.rules(NULL), '{}'::text[], 'no rules yet');

SELECT buzz.ban_event(:'a', repeat('e', 64), 'spam') AS r1, buzz.allow_kind(:'a', 1) AS r2,
       buzz.allow_kind(:'a', 30023) AS r3, buzz.disallow_kind(:'a', 4) AS r4,
       buzz.block_ip(:'a', '198.51.100.0/24') AS r5, buzz.block_ip(:'a', '::ffff:192.0.2.1') AS r6,
       buzz.block_ip(:'a', '2001:db8::/32') AS r7, buzz.assign_method(:'a', pg_temp.pk(1), 'banevent') AS r8,
       buzz.disallow_kind(:'b', 1) AS r9, buzz.archive_community(:'b') AS r10 \gset

SELECT is(pg_temp.rules(:'a'), ARRAY[
              'a.example.org allowed_kind 1', 'a.example.org allowed_kind 30023',
              'a.example.org banned_event ' || repeat('e', 64),
              'a.example.org blocked_ip 192.0.2.1/32', 'a.example.org blocked_ip 198.51.100.0/24',
              'a.example.org blocked_ip 2001:db8::/32', 'a.example.org disallowed_kind 4'],
          'one community''s rules, one row each, no assigned method');
SELECT is(pg_temp.rules(:'b'), ARRAY['b.example.org disallowed_kind 1'], 'an archived community''s rules');
SELECT is(pg_temp.rules(:'c'), '{}'::text[], 'a community without rules: none');
SELECT is_empty(format('SELECT * FROM buzz.moderation_rules(%L)', gen_random_uuid()), 'an unknown community: none');
SELECT is(pg_temp.rules(NULL), pg_temp.rules(:'a') || pg_temp.rules(:'b'), 'NULL: every community''s');
SELECT bag_eq('SELECT * FROM buzz.moderation_rules()', 'SELECT * FROM buzz.moderation_rules(NULL)',
              '... the default');

SELECT is(buzz.delete_community(:'a'), 'deleted', 'a community deleted ...');
SELECT is(pg_temp.rules(NULL), ARRAY['b.example.org disallowed_kind 1'], '... its rules go with it');

SELECT * FROM finish();
ROLLBACK;
