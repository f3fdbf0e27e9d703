-- buzz_private.use_generic_plans, as every membership write and prepare apply it: the write
-- path's statements run on their generic plans for the rest of the transaction, a mode the
-- session chose is kept, and nothing is left behind after the (sub)transaction.
BEGIN;
\ir lib/fixtures.sql

SELECT plan(8);

SELECT pg_temp.community() AS c \gset
SET LOCAL plan_cache_mode = auto;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(1)), 'added', 'a membership write');
SELECT is(current_setting('plan_cache_mode'), 'force_generic_plan',
          '... runs on generic plans for the rest of the transaction');
SET LOCAL plan_cache_mode = auto;
SELECT is(count(*), 2::bigint, 'publishing') FROM pg_temp.publish();
SELECT is(current_setting('plan_cache_mode'), 'force_generic_plan', '... does too (prepare)');

SET LOCAL plan_cache_mode = auto;
SAVEPOINT write;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(2)), 'added', 'a write in a savepoint');
ROLLBACK TO SAVEPOINT write;
SELECT is(current_setting('plan_cache_mode'), 'auto', '... rolled back, leaves the mode as it was');

SET LOCAL plan_cache_mode = force_custom_plan;
SELECT is(buzz.add_relay_member(:'c', pg_temp.pk(3)), 'added', 'a write');
SELECT is(current_setting('plan_cache_mode'), 'force_custom_plan',
          '... keeps a mode the session chose');

SELECT * FROM finish();
ROLLBACK;
