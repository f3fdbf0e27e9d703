-- buzz.relay_key() -> text
-- The recorded relay key: NULL before the first write, the first write's key after it, the
-- new key once a rotation commits; readable by buzz_reader. (The rotation's NOTIFY
-- buzz_relay_key, heard only after a COMMIT, is checked by the relay's tests.)
BEGIN;
\ir lib/fixtures.sql

SELECT plan(6);

DELETE FROM buzz_private.relay_key;
SELECT is(buzz.relay_key(), NULL, 'no write yet: NULL');
SELECT pg_temp.community() AS c \gset
SELECT buzz.add_relay_member(:'c', pg_temp.pk(1));
SELECT * FROM pg_temp.publish();
SELECT is(buzz.relay_key(), pg_temp.relay_pubkey(), 'the first write records its key');

SELECT is(buzz.rotate_relay_key(pg_temp.pk(9)), 1, 'a rotation marks the community');
SELECT is(buzz.relay_key(), pg_temp.pk(9), 'the rotated key, in the rotating transaction');
SELECT volatility_is('buzz', 'relay_key', ARRAY[]::text[], 'stable', 'STABLE');

SET LOCAL ROLE buzz_reader;
SELECT is(buzz.relay_key(), pg_temp.pk(9), 'buzz_reader may read it');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
