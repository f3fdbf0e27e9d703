-- Shared fixtures for the pgTAP suites; each suite includes it after BEGIN with
--   \ir lib/fixtures.sql
-- Everything here is created in pg_temp and vanishes with the suite's ROLLBACK.
--
-- The database verifies every signature it stores, so a suite signs what it prepares, with
-- BIP-340 test-vector keys and the buzz_bip340_test_signer extension (db/extension/test_signer),
-- which make pgtap creates in the suites' database. Never with a real key.

-- A fixed relay key for every suite (the first prepare records it): the key of secret 3.
CREATE FUNCTION pg_temp.relay_pubkey() RETURNS text LANGUAGE sql IMMUTABLE
RETURN 'f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9';

-- The test secret of each test pubkey the suites sign with (secrets 3, 4, 5).
CREATE FUNCTION pg_temp.test_secret(p_pubkey text) RETURNS bytea LANGUAGE sql IMMUTABLE
RETURN pg_catalog.decode(pg_catalog.lpad(CASE p_pubkey
    WHEN 'f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9' THEN '3'
    WHEN 'e493dbf1c10d80f3581e4904930b1404cc6c13900ee0758474fa94abe8c4cd13' THEN '4'
    WHEN '2f8bde4d1a07209355b4a7250a5c5128e88b84bddc619ab7cba8d569b240efe4' THEN '5'
    END, 64, '0'), 'hex');

-- The BIP-340 signatures of ids (hex) by a test key, as insert_signed_events takes them.
CREATE FUNCTION pg_temp.signatures(p_ids text[],
                                   p_pubkey text DEFAULT pg_temp.relay_pubkey())
RETURNS text[] LANGUAGE sql IMMUTABLE
RETURN (SELECT coalesce(pg_catalog.array_agg(pg_catalog.encode(
            public.bip340_test_sign(pg_catalog.decode(i.id, 'hex'), pg_temp.test_secret(p_pubkey)),
            'hex') ORDER BY i.n), '{}')
        FROM pg_catalog.unnest(p_ids) WITH ORDINALITY AS i (id, n));

-- A deterministic pubkey for a small number: pk(1), pk(2), ...
CREATE FUNCTION pg_temp.pk(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('member ' || n, 'UTF8')), 'hex');

-- Prepare, "sign" and insert, then settle: the signed events, as insert_signed_events
-- returns them. See publish_with and settle below.
CREATE FUNCTION pg_temp.publish() RETURNS SETOF json LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT * FROM pg_temp.publish_with(pg_temp.relay_pubkey());
END
$$;

-- As if the transaction committed here. A suite runs in one transaction that it rolls back,
-- while the contract counts changes by their net effect per transaction (one list and one set
-- of 8000/8001 events per community; the 33534 or kind 5 of each role it changed). Forgetting
-- what this transaction recorded so far (member and role changes) lets a
-- suite publish step by step, each step counted like a transaction of its own. Suites that
-- test publishing twice within one transaction call prepare and insert without it.
CREATE FUNCTION pg_temp.settle() RETURNS void LANGUAGE sql SECURITY DEFINER
BEGIN ATOMIC
    DELETE FROM buzz_private.tx_member_changes ch WHERE ch.xid = pg_current_xact_id_if_assigned();
    DELETE FROM buzz_private.tx_role_changes r WHERE r.xid = pg_current_xact_id_if_assigned();
    DELETE FROM buzz_private.tx_published_events t WHERE t.xid = pg_current_xact_id_if_assigned();
END;

-- What prepare would return right now, without publishing (then the suite publishes or not).
CREATE FUNCTION pg_temp.prepared()
RETURNS TABLE (community_id uuid, id text, kind integer, created_at bigint, serialized text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT * FROM buzz.prepare_membership_events(pg_temp.relay_pubkey());
END;

-- A community with its owner pk(0) and its first list published.
CREATE FUNCTION pg_temp.community(p_host text DEFAULT 'relay.example.org') RETURNS uuid
LANGUAGE plpgsql AS $$
DECLARE
    v_id uuid;
BEGIN
    SELECT c.community_id INTO v_id FROM buzz.create_community(p_host, pg_temp.pk(0)) c;
    PERFORM pg_temp.publish();
    RETURN v_id;
END
$$;

-- Does this transaction owe a list (is anything marked for the commit guard)?
CREATE FUNCTION pg_temp.marked() RETURNS boolean LANGUAGE sql
RETURN EXISTS (SELECT FROM buzz_private.tx_pending_lists p
               WHERE p.xid = pg_current_xact_id_if_assigned());

-- The live list's member tags as (pubkey, role) rows.
CREATE FUNCTION pg_temp.listed(p_community uuid) RETURNS TABLE (pubkey text, role text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT t ->> 1, t ->> 2
    FROM jsonb_array_elements(buzz.member_list(p_community)::jsonb -> 'tags') WITH ORDINALITY AS e (t, i)
    WHERE i > 1
    ORDER BY i;
END;

-- Members, events and lists, as suites compare them. The assertions have quoted bodies so
-- that pgTAP's functions are found at call time (test_no_search_path includes this file too).
-- Suite helpers (pg_temp, gone at ROLLBACK).
-- The stored members of a community as (pubkey, role), in pubkey order.
CREATE FUNCTION pg_temp.members(p_community uuid) RETURNS TABLE (pubkey text, role text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT m.pubkey, m.role FROM buzz.relay_members(p_community) m;
END;
-- What prepare would return now, as (kind, member of an 8000/8001 or NULL).
CREATE FUNCTION pg_temp.events() RETURNS TABLE (kind integer, member text)
LANGUAGE sql
BEGIN ATOMIC
    SELECT p.kind, CASE WHEN p.kind <> 13534 THEN p.serialized::jsonb #>> '{4,1,1}' END
    FROM pg_temp.prepared() p;
END;
-- Prepare, sign and insert what this transaction owes; the number of events written.
CREATE FUNCTION pg_temp.flush() RETURNS integer
LANGUAGE sql
BEGIN ATOMIC
    SELECT count(*)::integer FROM pg_temp.publish();
END;
-- Assertions.
CREATE FUNCTION pg_temp.members_are(p_community uuid, p_expected text, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN set_eq(format('SELECT * FROM pg_temp.members(%L)', p_community), p_expected,
                  p_description); END $$;
CREATE FUNCTION pg_temp.events_are(p_expected text, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN bag_eq('SELECT * FROM pg_temp.events()', p_expected, p_description); END $$;
CREATE FUNCTION pg_temp.list_is_members(p_community uuid, p_description text)
RETURNS text LANGUAGE plpgsql
AS $$ BEGIN RETURN results_eq(format('SELECT * FROM pg_temp.listed(%L)', p_community),
                      format('SELECT * FROM pg_temp.members(%L)', p_community), p_description); END $$;
-- How many owners a community has.
CREATE FUNCTION pg_temp.owners(p_community uuid) RETURNS integer LANGUAGE sql
RETURN (SELECT count(*)::integer FROM buzz.relay_members(p_community) m WHERE m.role = 'owner');

-- Extra fixtures for the suites of the list write, invites, community life cycle, key rotation,
-- reads, drift and the commit guard; each includes it after lib/fixtures.sql with
--   \ir lib/fixtures_lists.sql
-- Everything here is created in pg_temp and vanishes with the suite's ROLLBACK.

-- The clock as prepare reads it: whole seconds, rounded down.
CREATE FUNCTION pg_temp.clock() RETURNS bigint LANGUAGE sql VOLATILE
RETURN floor(extract(epoch FROM clock_timestamp()))::bigint;

-- n well-formed signatures that verify for nothing: for the refusals checked before
-- verification (BZSTL), and for BZSIG itself.
CREATE FUNCTION pg_temp.sigs(n integer) RETURNS text[] LANGUAGE sql IMMUTABLE
RETURN array_fill(repeat('5', 128), ARRAY[n]);

-- The ids prepare returns now, in its order (prepares with the fixture key).
CREATE FUNCTION pg_temp.prepared_ids() RETURNS text[] LANGUAGE sql VOLATILE
BEGIN ATOMIC
    SELECT coalesce(array_agg(p.id ORDER BY p.ord), '{}')
    FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY
         AS p (community_id, id, kind, created_at, serialized, ord);
END;

-- pg_temp.publish() with another relay key (key rotation).
CREATE FUNCTION pg_temp.publish_with(p_key text) RETURNS SETOF json LANGUAGE plpgsql AS $$
DECLARE
    v_ids text[];
BEGIN
    SELECT coalesce(array_agg(p.id ORDER BY p.ord), '{}') INTO v_ids
    FROM buzz.prepare_membership_events(p_key) WITH ORDINALITY AS p (
        community_id, id, kind, created_at, serialized, ord);
    RETURN QUERY SELECT * FROM buzz.insert_signed_events(v_ids, pg_temp.signatures(v_ids, p_key));
    PERFORM pg_temp.settle();
END
$$;



-- The tags a community's list must carry, built independently from the stored members:
-- ["-"] first, then ["member", pubkey, role, defined roles held in ascending id order...] by
-- pubkey, as JSON.stringify writes them.
CREATE FUNCTION pg_temp.expected_tags(p_community uuid) RETURNS text LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT '[["-"]'
           || coalesce(string_agg(',[' || to_json('member'::text)::text || ','
                                  || to_json(m.pubkey)::text || ','
                                  || to_json(m.role)::text
                                  || coalesce((SELECT string_agg(',' || to_json(r.r)::text, ''
                                                                 ORDER BY r.r COLLATE "C")
                                               FROM unnest(m.roles) AS r (r)), '')
                                  || ']', '' ORDER BY m.pubkey COLLATE "C"),
                       '')
           || ']'
    FROM buzz_private.relay_members m
    WHERE m.community_id = p_community;
END;

-- A list of tags (JSON) as JSON.stringify writes it, re-serialized element by element
-- without whitespace, independently of the project's helpers.
CREATE FUNCTION pg_temp.canonical_tags(p_tags jsonb) RETURNS text LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT '[' || coalesce((SELECT string_agg(
                     '[' || (SELECT string_agg(to_json(v)::text, ',' ORDER BY j)
                             FROM jsonb_array_elements_text(t) WITH ORDINALITY AS x (v, j))
                     || ']', ',' ORDER BY i)
                   FROM jsonb_array_elements(p_tags) WITH ORDINALITY AS e (t, i)), '')
           || ']';
END;

-- The NIP-01 serialization [0,pubkey,created_at,kind,tags,content] of a signed event given as
-- json, with its tags and content exactly the bytes the event's text holds (json's -> returns
-- a value's text as it is written).
CREATE FUNCTION pg_temp.serialization(p_event json) RETURNS text LANGUAGE sql IMMUTABLE
BEGIN ATOMIC
    SELECT '[0,' || to_json(p_event ->> 'pubkey')::text || ',' || (p_event ->> 'created_at')
           || ',' || (p_event ->> 'kind') || ',' || (p_event -> 'tags')::text
           || ',' || (p_event -> 'content')::text || ']';
END;

-- Does the id of a signed event (json) hash its content, with the tag bytes it holds, and are
-- those bytes the compact form JSON.stringify writes?
CREATE FUNCTION pg_temp.id_ok(p_event json) RETURNS boolean LANGUAGE sql IMMUTABLE
RETURN p_event ->> 'id'
       = encode(sha256(convert_to(pg_temp.serialization(p_event), 'UTF8')), 'hex')
   AND (p_event -> 'tags')::text = pg_temp.canonical_tags((p_event -> 'tags')::jsonb);

-- The id NIP-01 gives an event with empty content: the sha256 of the UTF-8 bytes of
-- [0,pubkey,created_at,kind,tags,""], tags being exactly the text given.
CREATE FUNCTION pg_temp.nip01_id(p_pubkey text, p_created_at bigint, p_kind integer, p_tags text)
RETURNS text LANGUAGE sql IMMUTABLE
RETURN encode(sha256(convert_to('[0,' || to_json(p_pubkey)::text || ',' || p_created_at::text
                                || ',' || p_kind::text || ',' || p_tags || ',""]', 'UTF8')), 'hex');

-- The compact NIP-01 object of a signed event with empty content, built from its fields:
-- keys id, pubkey, created_at, kind, tags, content, sig in that order, no whitespace, tags
-- exactly the text given. What the API must return, byte for byte.
CREATE FUNCTION pg_temp.nip01_object(p_id text, p_pubkey text, p_created_at bigint, p_kind integer,
                                     p_tags text, p_sig text)
RETURNS text LANGUAGE sql IMMUTABLE
RETURN '{"id":' || to_json(p_id)::text || ',"pubkey":' || to_json(p_pubkey)::text
       || ',"created_at":' || p_created_at::text || ',"kind":' || p_kind::text
       || ',"tags":' || p_tags || ',"content":"","sig":' || to_json(p_sig)::text || '}';

-- The tags of an 8000/8001 event naming a member, built independently.
CREATE FUNCTION pg_temp.member_event_tags(p_member text) RETURNS text LANGUAGE sql IMMUTABLE
RETURN '[["-"],["p",' || to_json(p_member)::text || ']]';

-- The commit guard, now: the SQLSTATE that SET CONSTRAINTS ALL IMMEDIATE raises (what COMMIT
-- would raise), or NULL when it passes. Constraints are deferred again afterwards.
CREATE FUNCTION pg_temp.guard() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        SET CONSTRAINTS ALL IMMEDIATE;
        SET CONSTRAINTS ALL DEFERRED;
    EXCEPTION WHEN OTHERS THEN
        RETURN SQLSTATE;
    END;
    RETURN NULL;
END
$$;

-- The SQLSTATE a statement raises, or NULL; its effects are rolled back either way.
CREATE FUNCTION pg_temp.sqlstate_of(p_sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE p_sql;
        RAISE SQLSTATE 'ZZROL';
    EXCEPTION WHEN OTHERS THEN
        RETURN nullif(SQLSTATE, 'ZZROL');
    END;
END
$$;

-- Role definitions (SPEC §6), built independently of the project's helpers.
-- The tags of a 33534 as JSON.stringify writes them: ["-"], ["d", id], then label,
-- description, color and order for those that are set, text through to_json.
CREATE FUNCTION pg_temp.role_tags(p_role text, p_label text, p_description text DEFAULT NULL,
                                  p_color integer DEFAULT NULL, p_order integer DEFAULT NULL)
RETURNS text LANGUAGE sql STABLE
RETURN '[' || array_to_string(ARRAY['["-"]', '["d",' || to_json(p_role)::text || ']']
                              || CASE WHEN p_label IS NULL THEN '{}'::text[]
                                      ELSE ARRAY['["label",' || to_json(p_label)::text || ']'] END
                              || CASE WHEN p_description IS NULL THEN '{}'::text[]
                                      ELSE ARRAY['["description",' || to_json(p_description)::text || ']'] END
                              || CASE WHEN p_color IS NULL THEN '{}'::text[]
                                      ELSE ARRAY['["color","' || p_color::text || '"]'] END
                              || CASE WHEN p_order IS NULL THEN '{}'::text[]
                                      ELSE ARRAY['["order","' || p_order::text || '"]'] END,
                              ',') || ']';

-- The tags of the kind 5 deletion of a role's 33534 (NIP-09), by the relay key.
CREATE FUNCTION pg_temp.deletion_tags(p_role text, p_pubkey text DEFAULT pg_temp.relay_pubkey())
RETURNS text LANGUAGE sql IMMUTABLE
RETURN '[["-"],["a","33534:' || p_pubkey || ':' || p_role || '"],["k","33534"]]';

-- The live role events of a community as (role id, kind), by role id.
CREATE FUNCTION pg_temp.role_events(p_community uuid) RETURNS TABLE (role_id text, kind integer)
LANGUAGE sql
BEGIN ATOMIC
    SELECT r.role_id::text COLLATE "default", r.kind FROM buzz_private.role_events r
    WHERE r.community_id = p_community ORDER BY r.role_id;
END;

-- What prepare returns now (one call), each row as its serialized text with the created_at
-- written T: '[0,"<key>",T,<kind>,<tags>,""]', in prepare's order; a row whose id is not the
-- sha256 of its serialized, or whose created_at differs from the first row's, is marked so.
CREATE FUNCTION pg_temp.shapes() RETURNS text[] LANGUAGE sql VOLATILE
BEGIN ATOMIC
    WITH p AS (
        SELECT x.*, first_value(x.created_at) OVER (ORDER BY x.ord) AS first_at
        FROM buzz.prepare_membership_events(pg_temp.relay_pubkey()) WITH ORDINALITY
             AS x (community_id, id, kind, created_at, serialized, ord)
    )
    SELECT coalesce(array_agg(
               CASE WHEN p.id <> encode(sha256(convert_to(p.serialized, 'UTF8')), 'hex')
                    THEN 'id mismatch: ' || p.serialized
                    WHEN p.created_at <> p.first_at THEN 'created_at differs: ' || p.serialized
                    WHEN left(p.serialized, 71 + length(p.created_at::text))
                         <> '[0,' || to_json(pg_temp.relay_pubkey())::text || ',' || p.created_at::text || ','
                    THEN 'not by the relay key: ' || p.serialized
                    ELSE '[0,' || to_json(pg_temp.relay_pubkey())::text || ',T,'
                         || substr(p.serialized, 72 + length(p.created_at::text)) END
               ORDER BY p.ord), '{}')
    FROM p;
END;

-- The expected shape of an event with empty content (see shapes): tags exactly the text given.
CREATE FUNCTION pg_temp.shape(p_kind integer, p_tags text) RETURNS text LANGUAGE sql IMMUTABLE
RETURN '[0,' || to_json(pg_temp.relay_pubkey())::text || ',T,' || p_kind::text || ',' || p_tags || ',""]';
-- Adds the member pk(p_n), brought in by p_added_by, and publishes: 1.
CREATE FUNCTION pg_temp.brought(p_community uuid, p_n integer, p_added_by text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM buzz.add_relay_member(p_community, pg_temp.pk(p_n), 'member', p_added_by);
    PERFORM pg_temp.flush();
    RETURN 1;
END
$$;
