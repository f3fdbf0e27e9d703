-- buzz_private.bound_waits() -> void, as every membership write and prepare apply it:
-- idle_in_transaction_session_timeout and lock_timeout from the settings for the rest of the
-- transaction, a tighter value the session set kept, nothing left behind after the
-- transaction. The behaviour with a real hung client is tested in pytest (several sessions).
BEGIN;
\ir lib/fixtures.sql

SELECT plan(8);

SET LOCAL idle_in_transaction_session_timeout = 0;
SET LOCAL lock_timeout = 0;
SELECT pg_temp.community() AS c \gset
SELECT is(current_setting('idle_in_transaction_session_timeout'), '10s',
          'after a membership write: idle timeout from settings.idle_timeout_ms (10 s)');
SELECT is(current_setting('lock_timeout'), '30s',
          '... and lock_timeout from settings.lock_timeout_ms (30 s)');

UPDATE buzz_private.settings SET idle_timeout_ms = 2500, lock_timeout_ms = 4000;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'with the settings changed, a write');
SELECT is(current_setting('idle_in_transaction_session_timeout'), '2500ms', '... applies the new idle bound');
SELECT is(current_setting('lock_timeout'), '4s', '... and the new lock bound');

SET LOCAL lock_timeout = '1s';
SET LOCAL idle_in_transaction_session_timeout = '1min';
SELECT is(count(*), 2::bigint, 'publishing (prepare applies the bounds too)') FROM pg_temp.publish();
SELECT is(current_setting('lock_timeout'), '1s', '... keeps the tighter lock_timeout the session set');
SELECT is(current_setting('idle_in_transaction_session_timeout'), '2500ms',
          '... and tightens a looser idle timeout');

SELECT * FROM finish();
ROLLBACK;
