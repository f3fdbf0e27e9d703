-- buzz_bip340 1.1 to 1.0: drops nip01_json, keep_list_tags and kept_list_tags.
\echo Use "ALTER EXTENSION buzz_bip340 UPDATE TO '1.0'" to load this file. \quit

DROP FUNCTION nip01_json(text);
DROP FUNCTION keep_list_tags(text, text);
DROP FUNCTION kept_list_tags(text);
