-- buzz_bip340 1.1 to 1.0: drops nip01_json.
\echo Use "ALTER EXTENSION buzz_bip340 UPDATE TO '1.0'" to load this file. \quit

DROP FUNCTION nip01_json(text);
