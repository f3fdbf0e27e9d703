-- buzz.invite_branch(p_community uuid, p_pubkey text) -> TABLE(pubkey text, role text)
-- A member and everyone they brought in, recursively, with their roles, by pubkey: the branch
-- remove_relay_member takes (test_invite_branches.sql removes them). Never the owner nor anyone
-- below the owner; nothing for the owner, a non-member, NULL or an unknown community; a loop
-- of added_by ends; BZIPK for a malformed pubkey; readable by buzz_reader.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.branch(p_community uuid, p_n integer) RETURNS text[] LANGUAGE sql
RETURN ARRAY(SELECT b.pubkey FROM buzz.invite_branch(p_community, pg_temp.pk(p_n)) b);
CREATE FUNCTION pg_temp.pks(VARIADIC p_n integer[]) RETURNS text[] LANGUAGE sql
RETURN ARRAY(SELECT pg_temp.pk(n) FROM unnest(p_n) n ORDER BY 1);

SELECT plan(10);

SELECT pg_temp.community() AS c \gset
-- owner 0 -> 1 -> 2 -> 3, 2 -> 5, 1 -> 4; buzz-admin -> 6 -> 7
SELECT pg_temp.brought(:'c', 1, pg_temp.pk(0)) + pg_temp.brought(:'c', 2, pg_temp.pk(1))
       + pg_temp.brought(:'c', 3, pg_temp.pk(2)) + pg_temp.brought(:'c', 4, pg_temp.pk(1))
       + pg_temp.brought(:'c', 5, pg_temp.pk(2)) + pg_temp.brought(:'c', 6, 'buzz-admin')
       + pg_temp.brought(:'c', 7, pg_temp.pk(6)) AS setup \gset

SELECT is(pg_temp.branch(:'c', 1), pg_temp.pks(1, 2, 3, 4, 5), 'a member, and all below, by pubkey');
SELECT is(pg_temp.branch(:'c', 3), pg_temp.pks(3), 'a leaf: itself');
SELECT is(pg_temp.branch(:'c', 6), pg_temp.pks(6, 7), 'brought in by a label: a branch of its own');
SELECT is(pg_temp.branch(:'c', 0), '{}'::text[], 'the owner: none');
SELECT is(pg_temp.branch(:'c', 42), '{}'::text[], 'a non-member: none');
SELECT is_empty(format('SELECT * FROM buzz.invite_branch(%L, NULL)', :'c'), 'NULL: none');
SELECT buzz.update_relay_member_role(:'c', pg_temp.pk(4), 'admin') AS promoted \gset
SELECT pg_temp.flush();
SELECT results_eq(format('SELECT role, count(*) FROM buzz.invite_branch(%L, %L) GROUP BY 1 ORDER BY 1',
                         :'c', pg_temp.pk(1)),
                  $$VALUES ('admin', 1::bigint), ('member', 4::bigint)$$, 'with their base roles');

-- The owner's place goes to 2 (it brought in 3 and 5): 1's branch stops at the owner, and a
-- loop of added_by (the old owner, now a member brought in by 2... by 1) ends.
SELECT buzz.transfer_ownership(:'c', pg_temp.pk(2), pg_temp.pk(0)) AS moved \gset
SELECT pg_temp.flush();
SELECT is(pg_temp.branch(:'c', 1), pg_temp.pks(1, 4), 'never the owner, nor those below it');

SELECT throws_ok(format('SELECT * FROM buzz.invite_branch(%L, %L)', :'c', 'not-a-key'),
                 'BZIPK', NULL, 'a malformed pubkey: BZIPK');
SET LOCAL ROLE buzz_reader;
SELECT is(pg_temp.branch(:'c', 6), pg_temp.pks(6, 7), 'buzz_reader may read it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
