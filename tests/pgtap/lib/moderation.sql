-- Fixtures for the moderation suites (banned events, kind rules, blocked addresses, assigned
-- methods); each includes it after lib/fixtures.sql with
--   \ir lib/moderation.sql
-- Everything here is created in pg_temp (and dblink in public) and vanishes with the suite's
-- ROLLBACK.
--
-- A moderation write announces itself with NOTIFY buzz_moderation, which PostgreSQL delivers
-- only when its transaction commits, and a suite never commits. So pg_temp.notified runs the
-- writes in other sessions (dblink): a writer that commits each step, and a listener.

CREATE EXTENSION IF NOT EXISTS dblink WITH SCHEMA public;

-- The payloads on channel buzz_moderation that a listener got while a writer session ran each
-- of p_steps, PL/pgSQL statements run as a DO block, each a transaction of its own (one that
-- raises rolls back), in the order they arrived, the community's id written 'C'. The steps run
-- against a community
-- committed for the purpose ('{c}' in a step is its id, quoted), without members or list, which
-- is deleted afterwards. To tell "nothing" from "not yet", the writer then sends a marker,
-- 'marker C', which is always the last payload: the listener gets a session's notifications in
-- commit order, so what a step sent arrives before it.
CREATE FUNCTION pg_temp.notified(p_steps text[]) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v_conninfo text := format('dbname=%s host=%s port=%s user=%s', current_database(),
                              split_part(current_setting('unix_socket_directories'), ',', 1),
                              current_setting('port'), current_user);
    v_community uuid := gen_random_uuid();
    v_got text[] := '{}';
    v_step text;
    v_deadline timestamptz;
    v_note record;
    v_messages text := current_setting('client_min_messages');
BEGIN
    -- dblink says a rolled-back step's error as a NOTICE: not for the TAP output.
    PERFORM set_config('client_min_messages', 'warning', true);
    PERFORM public.dblink_connect('buzz_pgtap_listener', v_conninfo);
    PERFORM public.dblink_connect('buzz_pgtap_writer', v_conninfo);
    PERFORM public.dblink_exec('buzz_pgtap_listener', 'LISTEN buzz_moderation');
    PERFORM public.dblink_exec('buzz_pgtap_writer', format(
        'INSERT INTO buzz_private.communities (community_id, host) VALUES (%L, %L)',
        v_community, 'notify-' || v_community || '.example.org'));
    BEGIN
        FOREACH v_step IN ARRAY p_steps LOOP
            PERFORM public.dblink_exec('buzz_pgtap_writer',
                                       format('DO %L', replace(v_step, '{c}', quote_literal(v_community))),
                                       false);
        END LOOP;
        PERFORM public.dblink_exec('buzz_pgtap_writer',
                                   format('NOTIFY buzz_moderation, %L', 'marker ' || v_community));
        v_deadline := clock_timestamp() + interval '10 seconds';
        WHILE NOT 'marker C' = ANY (v_got) AND clock_timestamp() < v_deadline LOOP
            FOR v_note IN SELECT * FROM public.dblink_get_notify('buzz_pgtap_listener') LOOP
                IF v_note.notify_name = 'buzz_moderation' THEN
                    v_got := v_got || replace(v_note.extra, v_community::text, 'C');
                END IF;
            END LOOP;
            PERFORM pg_sleep(0.01);
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        v_got := v_got || ('error: ' || SQLERRM);
    END;
    -- The community made here goes, whatever happened: it was committed.
    PERFORM public.dblink_exec('buzz_pgtap_writer',
                               format('DO %L', format('BEGIN PERFORM buzz.delete_community(%L); END',
                                                      v_community)));
    PERFORM public.dblink_disconnect('buzz_pgtap_writer');
    PERFORM public.dblink_disconnect('buzz_pgtap_listener');
    PERFORM set_config('client_min_messages', v_messages, true);
    RETURN v_got;
END
$$;

-- A step of pg_temp.notified that makes pk(n) a member of the community without its list
-- (triggers off, as a restore does; a superuser's): for assign_method, which takes members only.
CREATE FUNCTION pg_temp.member_step(n integer) RETURNS text LANGUAGE sql IMMUTABLE
RETURN format('BEGIN PERFORM set_config(''session_replication_role'', ''replica'', true); '
              'INSERT INTO buzz_private.relay_members (community_id, pubkey, role) '
              'VALUES ({c}, %L, %L); END', pg_temp.pk(n), 'member');

-- A step of pg_temp.notified: the statements given, in one transaction that commits.
CREATE FUNCTION pg_temp.step(VARIADIC p_statements text[]) RETURNS text LANGUAGE sql IMMUTABLE
RETURN 'BEGIN ' || array_to_string(p_statements, '; ') || '; END';

-- ... and in one that rolls back.
CREATE FUNCTION pg_temp.rolled_back(VARIADIC p_statements text[]) RETURNS text LANGUAGE sql IMMUTABLE
RETURN 'BEGIN ' || array_to_string(p_statements, '; ') || '; RAISE EXCEPTION ''rolled back''; END';
