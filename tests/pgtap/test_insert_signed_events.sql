-- buzz.insert_signed_events(p_ids text[], p_sigs text[]) -> SETOF json
-- Phase two of a list write: one signature per prepared row in prepare's order, BZSTL for any
-- other set of ids (wrong count, unknown, reordered, NULL, prepared before a later change),
-- BZSIG for a malformed signature or one that does not verify (another key's, swapped, one bit
-- flipped) with nothing stored, empty arrays when nothing is prepared, the signed events it
-- returns and stores (each one's text byte for byte the compact NIP-01 object built from the
-- prepared fields and the signature given, its id the sha256 of the serialization of exactly
-- those tag bytes), the commit guard it clears, the same id prepared twice for two
-- communities with the same members, role events (a 33534, its kind 5 replacing it, byte for
-- byte, BZSIG storing nothing), and who may call it.
-- The NOTIFY it queues is delivered only at commit: covered by pytest.
BEGIN;
\ir lib/fixtures.sql

CREATE FUNCTION pg_temp.insert_throws(p_ids text, p_sigs text, p_code text, p_description text)
RETURNS text LANGUAGE sql
RETURN throws_ok(format('SELECT * FROM buzz.insert_signed_events(%s, %s)', p_ids, p_sigs),
                 p_code, NULL, p_description);

SELECT plan(78);

-- Nothing prepared
SELECT is_empty($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$,
                'nothing prepared, empty arrays: no rows');
SELECT pg_temp.insert_throws(quote_literal(ARRAY[repeat('0', 64)]),
                             quote_literal(pg_temp.sigs(1)), 'BZSTL',
                             'nothing prepared, one id: BZSTL');
SELECT pg_temp.insert_throws('NULL', 'NULL', 'BZSTL', 'NULL arrays: BZSTL');
SELECT pg_temp.insert_throws($$'{}'$$, 'NULL', 'BZSTL', 'NULL signatures: BZSTL');
SELECT pg_temp.insert_throws('NULL', $$'{}'$$, 'BZSTL', 'NULL ids: BZSTL');

SELECT pg_temp.community() AS c \gset
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'a member added');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT is(cardinality(:'ids'::text[]), 2, '... prepared as two events');

-- BZSTL: not the prepared ids
SELECT pg_temp.insert_throws(quote_literal(:'ids'), 'NULL', 'BZSTL', 'the ids and NULL signatures: BZSTL');
SELECT pg_temp.insert_throws('NULL', quote_literal(pg_temp.sigs(2)), 'BZSTL', 'NULL ids and two signatures: BZSTL');
SELECT pg_temp.insert_throws($$'{}'$$, $$'{}'$$, 'BZSTL', 'empty arrays while events are prepared: BZSTL');
SELECT pg_temp.insert_throws(quote_literal((:'ids'::text[])[1:1]), quote_literal(pg_temp.sigs(1)),
                             'BZSTL', 'one id missing: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(:'ids'::text[] || repeat('0', 64)),
                             quote_literal(pg_temp.sigs(3)), 'BZSTL', 'one id too many: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(1)),
                             'BZSTL', 'one signature missing: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(3)),
                             'BZSTL', 'one signature too many: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(ARRAY[(:'ids'::text[])[1], repeat('0', 64)]),
                             quote_literal(pg_temp.sigs(2)), 'BZSTL', 'an unknown id: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(ARRAY[(:'ids'::text[])[2], (:'ids'::text[])[1]]),
                             quote_literal(pg_temp.sigs(2)), 'BZSTL', 'the ids reordered: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(ARRAY[(:'ids'::text[])[1], NULL]),
                             quote_literal(pg_temp.sigs(2)), 'BZSTL', 'a NULL id: BZSTL');
SELECT pg_temp.insert_throws(quote_literal(ARRAY[:'ids'::text[], :'ids'::text[]]),
                             quote_literal(ARRAY[pg_temp.sigs(2), pg_temp.sigs(2)]),
                             'BZSTL', 'two-dimensional arrays: BZSTL');

-- BZSIG: malformed signatures
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(ARRAY[repeat('5', 128), repeat('5', 127)]),
                             'BZSIG', 'a signature of 127 hex characters: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(ARRAY[repeat('5', 128), repeat('5', 130)]),
                             'BZSIG', 'a signature of 130 hex characters: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(ARRAY[repeat('5', 128), repeat('z', 128)]),
                             'BZSIG', 'a signature that is not hex: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(ARRAY[repeat('5', 128), NULL]),
                             'BZSIG', 'a NULL signature: BZSIG');

-- BZSIG: well-formed signatures that do not verify, and nothing stored
SELECT pg_temp.signatures(:'ids'::text[]) AS good \gset
SELECT pg_temp.signatures(:'ids'::text[], 'e493dbf1c10d80f3581e4904930b1404cc6c13900ee0758474fa94abe8c4cd13') AS other \gset
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(2)),
                             'BZSIG', 'signatures that verify for nothing: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(:'other'),
                             'BZSIG', 'another key''s signatures of the same ids: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'),
                             quote_literal(ARRAY[(:'good'::text[])[2], (:'good'::text[])[1]]),
                             'BZSIG', 'the two signatures swapped: BZSIG');
SELECT pg_temp.insert_throws(quote_literal(:'ids'),
                             quote_literal(ARRAY[(:'good'::text[])[1],
                                                 overlay((:'good'::text[])[2] placing
                                                         translate(substr((:'good'::text[])[2], 128, 1),
                                                                   '0123456789abcdef', '1032547698badcfe')
                                                         from 128 for 1)]),
                             'BZSIG', 'one bit of the second signature flipped: BZSIG');
SELECT throws_ok(format('SELECT * FROM buzz.insert_signed_events(%L, %L)', :'ids',
                        ARRAY[(:'good'::text[])[1], (:'other'::text[])[2]]),
                 'BZSIG', format('p_sigs[2] does not verify for prepared event %s and the relay key',
                                 (:'ids'::text[])[2]),
                 '... the error names the position and the id, and nothing else');
SELECT is((SELECT count(*) FROM buzz_private.membership_events e WHERE e.community_id = :'c'), 1::bigint,
          '... no 8000 was stored (only the owner''s)');
SELECT is(pg_temp.guard(), 'BZUNS', 'after the refusals the list is still owed');

-- BZSTL: prepared before a later change
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2)), 'added', 'another member added after prepare');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(2)), 'BZSTL',
                             '... the earlier ids: BZSTL');
CREATE TEMP TABLE prepared_rows AS
SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY
              AS p (community_id, id, kind, created_at, serialized, ord);
SELECT array_agg(x.id ORDER BY x.ord) AS ids FROM prepared_rows x \gset
SELECT is(cardinality(:'ids'::text[]), 3, '... prepare again: the list and two 8000');

-- The signed events
SELECT pg_temp.signatures(:'ids'::text[]) AS sigs \gset
CREATE TEMP TABLE signed AS
SELECT s.event, s.ord
FROM buzz.insert_signed_events(:'ids'::text[], upper(:'sigs')::text[])
     WITH ORDINALITY AS s (event, ord);
SELECT is((SELECT array_agg(s.event ->> 'id' ORDER BY s.ord) FROM signed s), :'ids'::text[],
          'the signed events come back in prepare''s order');
SELECT is((SELECT array_agg((s.event ->> 'kind')::integer ORDER BY s.ord) FROM signed s),
          ARRAY[13534, 8000, 8000], '... the list, then the 8000s');
SELECT ok((SELECT bool_and(pg_temp.id_ok(s.event)) FROM signed s), '... each id hashes its event');
SELECT ok((SELECT bool_and(s.event ->> 'sig' = (:'sigs'::text[])[s.ord]) FROM signed s),
          '... each with its signature, stored in lowercase');
SELECT ok((SELECT bool_and(s.event ->> 'pubkey' = pg_temp.relay_pubkey() AND s.event ->> 'content' = ''
                           AND (SELECT array_agg(k) FROM json_object_keys(s.event) k)
                               = ARRAY['id', 'pubkey', 'created_at', 'kind', 'tags', 'content', 'sig'])
           FROM signed s),
          '... NIP-01 objects by the relay key, with empty content, keys in NIP-01''s order');
SELECT is((SELECT pg_typeof(s.event)::text FROM signed s WHERE s.ord = 1), 'json', '... returned as json');
-- Byte identity, against the object built from the prepared fields: tags built from the members
-- (the list) or the member (8000), the signature given (in lowercase).
SELECT results_eq(
    'SELECT s.event::text FROM signed s ORDER BY s.ord',
    format($$SELECT pg_temp.nip01_object(p.id, p.pubkey, p.created_at, p.kind, p.tags, lower(p.sig)) COLLATE "default"
             FROM (SELECT x.id, pg_temp.relay_pubkey() AS pubkey, x.created_at, x.kind,
                          CASE WHEN x.kind = 13534 THEN pg_temp.expected_tags(%L)
                               ELSE pg_temp.member_event_tags(x.serialized::jsonb #>> '{4,1,1}') END AS tags,
                          (%L::text[])[x.ord] AS sig, x.ord
                   FROM prepared_rows x) p
             ORDER BY p.ord$$, :'c', :'sigs'),
    '... each one''s text is byte for byte the compact NIP-01 object built from its fields');
SELECT is_empty($$SELECT x.ord FROM prepared_rows x
                  WHERE x.id IS DISTINCT FROM pg_temp.nip01_id(
                          pg_temp.relay_pubkey(), x.created_at, x.kind,
                          CASE WHEN x.kind = 13534 THEN pg_temp.expected_tags(x.community_id)
                               ELSE pg_temp.member_event_tags(x.serialized::jsonb #>> '{4,1,1}') END)$$,
                '... each id is the sha256 of [0,pubkey,created_at,kind,tags,content] with those tag bytes');
SELECT is_empty($$SELECT s.ord FROM signed s JOIN prepared_rows x ON x.ord = s.ord
                  WHERE x.serialized IS DISTINCT FROM
                        format('[0,%s,%s,%s,%s,""]', to_json(s.event ->> 'pubkey'), s.event ->> 'created_at',
                               s.event ->> 'kind', s.event -> 'tags')$$,
                '... and its tags are the very bytes prepare serialized and the signature covers');
SELECT is(buzz.member_list(:'c')::text, (SELECT s.event::text FROM signed s WHERE s.ord = 1),
          'the list is now the live one, the same bytes');
SELECT results_eq(format('SELECT * FROM pg_temp.listed(%L)', :'c'),
                  format('SELECT m.pubkey, m.role FROM buzz.relay_members(%L) m', :'c'),
                  '... naming the members');
SELECT is_empty(format('SELECT s.event::text FROM signed s WHERE s.ord > 1
                        EXCEPT SELECT e::text FROM buzz.membership_events(%L) e', :'c'),
                'the 8000s are stored, the same bytes');
SELECT ok(NOT pg_temp.marked(), 'nothing is owed any more');
SELECT is(pg_temp.guard(), NULL, '... the commit guard passes');
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(3)), 'BZSTL',
                             'the same signatures again: BZSTL');
SELECT is_empty($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$,
                'empty arrays after a publish: no rows');

-- The same id twice: two communities with the same members in the same second
SELECT community_id AS d1 FROM buzz.create_community('one.example.org', pg_temp.pk(20)) \gset
SELECT community_id AS d2 FROM buzz.create_community('two.example.org', pg_temp.pk(20)) \gset
SELECT is(pg_temp.flush(), 10, 'two communities of one owner published together: two lists, two 8000, six 33534');
SELECT ok(buzz.member_list(:'d1') IS NOT NULL AND buzz.member_list(:'d2') IS NOT NULL
          AND (buzz.member_list(:'d1') -> 'tags')::text = (buzz.member_list(:'d2') -> 'tags')::text,
          '... each stored for its community, with the same tags');
SELECT pg_temp.clock() + 10 AS ahead \gset
UPDATE buzz_private.member_lists SET created_at = :ahead WHERE community_id IN (:'d1', :'d2');
SELECT is(buzz.add_relay_member(:'d1', pg_temp.pk(21)) || buzz.add_relay_member(:'d2', pg_temp.pk(21)),
          'addedadded', 'the same member joins both');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT is((SELECT count(DISTINCT i) FROM unnest(:'ids'::text[]) i), 2::bigint,
          '... four events prepared, two ids: each prepared twice');
SELECT is((SELECT count(*) FROM buzz.insert_signed_events(:'ids'::text[], pg_temp.signatures(:'ids'::text[]))), 4::bigint,
          '... all four take their signature');
SELECT ok(buzz.member_list(:'d1') ->> 'id' = buzz.member_list(:'d2') ->> 'id'
          AND (buzz.member_list(:'d1') ->> 'created_at')::bigint = :ahead + 1,
          '... both communities have the list, with the same id');
SELECT ok((SELECT count(*) FROM buzz.membership_events(:'d1', :ahead + 1)) = 1
          AND (SELECT count(*) FROM buzz.membership_events(:'d2', :ahead + 1)) = 1
          AND (SELECT e ->> 'id' FROM buzz.membership_events(:'d1', :ahead + 1) e)
              = (SELECT e ->> 'id' FROM buzz.membership_events(:'d2', :ahead + 1) e),
          '... and each community its own copy of the same 8000');

-- Publishing twice in one transaction: one list and one set of events, by net effect
SELECT pg_temp.settle();
SELECT community_id AS t FROM buzz.create_community('twice.example.org', pg_temp.pk(30)) \gset
SELECT is(pg_temp.flush(), 5, 'a community published (as if committed)');
SELECT buzz.member_list(:'t') ->> 'id' AS before_id \gset
SELECT is(buzz.add_relay_member(:'t', pg_temp.pk(31)), 'added', 'in one transaction: pk(31) added');
SELECT is(buzz.add_relay_member(:'t', pg_temp.pk(32)), 'added', '... pk(32) added');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT is((SELECT count(*) FROM buzz.insert_signed_events(:'ids'::text[], pg_temp.signatures(:'ids'::text[]))),
          3::bigint, '... published: the list and two 8000');
SELECT is(buzz.remove_relay_member(:'t', pg_temp.pk(31)), 'removed', '... pk(31) removed again');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT results_eq(
    format($$SELECT e ->> 'kind', CASE WHEN e ->> 'kind' <> '13534' THEN e #>> '{tags,1,1}' END
             FROM buzz.insert_signed_events(%L, %L) e$$,
           :'ids', pg_temp.signatures(:'ids'::text[])),
    format($$VALUES ('13534', NULL), ('8000', %L)$$, pg_temp.pk(32)),
    '... published again: counted from the transaction''s start, only pk(32) joined');
SELECT results_eq(
    format($$SELECT e ->> 'kind', e #>> '{tags,1,1}' FROM buzz.membership_events(%L, %s) e$$,
           :'t', (buzz.member_list(:'t') ->> 'created_at')),
    format($$VALUES ('8000', %L)$$, pg_temp.pk(32)),
    '... and the first publish''s events were replaced: no 8000 for pk(31) is left');
SELECT pg_temp.settle();

-- Role events: a 33534 definition, then its kind 5 deletion, stored as the live event of the
-- role's address
SELECT is(buzz.define_role(:'c', 'mod', 'Mod "one"', 'a\b', 120, -3), 'defined', 'a role defined');
CREATE TEMP TABLE role_prepared AS
SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY
              AS p (community_id, id, kind, created_at, serialized, ord);
SELECT is((SELECT array_agg(x.kind ORDER BY x.ord) FROM role_prepared x), ARRAY[33534],
          '... prepared as its 33534 alone');
SELECT array_agg(x.id ORDER BY x.ord) AS ids FROM role_prepared x \gset
SELECT pg_temp.insert_throws(quote_literal(:'ids'), quote_literal(pg_temp.sigs(1)), 'BZSIG',
                             '... a signature that does not verify: BZSIG');
SELECT is_empty(format($$SELECT FROM buzz_private.role_events r WHERE r.community_id = %L AND r.role_id = 'mod'$$, :'c'),
                '... and nothing is stored');
SELECT pg_temp.signatures(:'ids'::text[]) AS sigs \gset
CREATE TEMP TABLE role_signed AS
SELECT s.event, s.ord FROM buzz.insert_signed_events(:'ids'::text[], :'sigs'::text[]) WITH ORDINALITY AS s (event, ord);
SELECT is((SELECT s.event::text FROM role_signed s),
          (SELECT pg_temp.nip01_object(x.id, pg_temp.relay_pubkey(), x.created_at, 33534,
                                       '[["-"],["d","mod"],["label","Mod \"one\""],["description","a\\b"],["color","120"],["order","-3"]]',
                                       (:'sigs'::text[])[1])
           FROM role_prepared x),
          'the signed 33534 comes back byte for byte the compact NIP-01 object');
SELECT ok(pg_temp.id_ok((SELECT s.event FROM role_signed s)), '... its id hashes its content');
SELECT results_eq(format($$SELECT r.kind, r.id::text COLLATE "default", r.pubkey::text COLLATE "default", r.created_at,
                                 r.tags COLLATE "default", r.sig::text COLLATE "default"
                          FROM buzz_private.role_events r WHERE r.community_id = %L AND r.role_id = 'mod'$$, :'c'),
                  format($$SELECT 33534, x.id, %L, x.created_at, %L, %L FROM role_prepared x$$,
                         pg_temp.relay_pubkey(), pg_temp.role_tags('mod', 'Mod "one"', 'a\b', 120, -3),
                         (:'sigs'::text[])[1]),
                  '... stored as the live event of the role (kind, id, pubkey, created_at, tags, sig)');
SELECT is((SELECT d::text FROM buzz.role_definitions(:'c') d WHERE d #>> '{tags,1,1}' = 'mod'),
          (SELECT s.event::text FROM role_signed s), '... role_definitions returns the same bytes');
SELECT ok(NOT pg_temp.marked(), '... nothing is owed');
SELECT pg_temp.settle();
SELECT is(buzz.delete_role(:'c', 'mod'), 'deleted', 'the role deleted');
SELECT pg_temp.prepared_ids() AS ids \gset
SELECT pg_temp.signatures(:'ids'::text[]) AS sigs \gset
CREATE TEMP TABLE deletion_signed AS
SELECT s.event FROM buzz.insert_signed_events(:'ids'::text[], :'sigs'::text[]) AS s (event);
SELECT is((SELECT array_agg(s.event::text) FROM deletion_signed s),
          ARRAY[pg_temp.nip01_object((:'ids'::text[])[1], pg_temp.relay_pubkey(),
                                     (SELECT (s.event ->> 'created_at')::bigint FROM deletion_signed s), 5,
                                     pg_temp.deletion_tags('mod'), (:'sigs'::text[])[1])],
          '... its kind 5 (no list: nobody held it) comes back byte for byte');
SELECT ok(pg_temp.id_ok((SELECT s.event FROM deletion_signed s)), '... its id hashes its content');
SELECT results_eq(format('SELECT * FROM pg_temp.role_events(%L)', :'c'),
                  $$VALUES ('admin', 33534), ('member', 33534), ('mod', 5), ('owner', 33534)$$,
                  '... it replaced the 33534 as the live event of the role''s address');
SELECT is((SELECT array_agg(d::text) FROM buzz.role_deletions(:'c') d),
          (SELECT array_agg(s.event::text) FROM deletion_signed s), '... role_deletions returns the same bytes');
SELECT pg_temp.settle();

-- Who may call it
SET LOCAL ROLE buzz_reader;
SELECT throws_ok($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$,
                 '42501', NULL, 'buzz_reader may not insert');
SET LOCAL ROLE buzz_writer;
SELECT is_empty($$SELECT * FROM buzz.insert_signed_events('{}', '{}')$$, 'buzz_writer may');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
