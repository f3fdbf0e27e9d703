/*
 * buzz_bip340: BIP-340 Schnorr signature verification for PostgreSQL, with libsecp256k1.
 *
 * One function, bip340_verify(sig bytea, msg bytea, pubkey bytea) -> boolean. Inputs have
 * fixed sizes (64, 32, 32 bytes); any other size is an ERROR before libsecp256k1 sees it, so
 * no input reaches the library outside its contract. A public key that is not an x coordinate
 * on the curve is simply not a valid signer: false, as BIP-340's test vectors require.
 *
 * bip340_first_invalid(sigs bytea[], msgs bytea[], pubkey bytea) -> integer checks many
 * signatures by one key at once (insert_signed_events: up to 100,001 in a transaction). With
 * more than BATCH_PER_THREAD of them it spreads the work over up to buzz_bip340.max_threads
 * threads (default: one per online CPU). The threads run libsecp256k1 alone, on memory the
 * backend prepared before they start and reads after they end, with every signal blocked: no
 * PostgreSQL function is ever called outside the backend's own thread.
 *
 * The verification context is created once per backend, on first use, and kept for the
 * backend's life, with the last public key parsed (verification needs no precomputed tables in libsecp256k1 >= 0.2, so the
 * context is small). Its illegal-argument callback raises an ERROR instead of aborting the
 * process; it cannot fire with the sizes checked here.
 *
 * Since 1.1 it also holds nip01_json(text) -> json, the one other piece of C the membership
 * functions need (see its comment).
 */
#include "postgres.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

PG_MODULE_MAGIC;

void		_PG_init(void);

/* Fewer signatures than this per thread are not worth a thread. */
#define BATCH_PER_THREAD 256
#define MAX_THREADS 64

static int	max_threads = 0;		/* buzz_bip340.max_threads; 0: one per online CPU */
static int	retained_memory_kb = 16384;	/* buzz_bip340.retained_memory */

/*
 * buzz_bip340.retained_memory: how much freed heap a backend keeps instead of giving it back.
 *
 * A write at 10,000 members builds its 870 kB list several times over (concatenated, hashed,
 * returned), in chunks large enough that glibc serves them with mmap or returns them to the
 * kernel when the transaction frees them: the next write then takes some 3,600 page faults,
 * about half the server's CPU for that write. Kept, the memory is reused. glibc only; 0
 * restores glibc's fixed defaults (128 kB each).
 */
static void
assign_retained_memory(int newval, void *extra)
{
#ifdef __GLIBC__
	size_t		keep = newval > 0 ? (size_t) newval * 1024 : 128 * 1024;
	/* glibc refuses an mmap threshold above 32 MB (64-bit). */
	size_t		heap_up_to = newval > 0 ? Min(keep / 4, (size_t) 32 * 1024 * 1024) : 128 * 1024;

	mallopt(M_TRIM_THRESHOLD, (int) Min(keep, (size_t) INT_MAX));
	mallopt(M_MMAP_THRESHOLD, (int) heap_up_to);
#endif
}

void
_PG_init(void)
{
	DefineCustomIntVariable("buzz_bip340.max_threads",
							"Threads bip340_first_invalid may use (0: one per online CPU, 1: none).",
							NULL, &max_threads, 0, 0, MAX_THREADS, PGC_USERSET, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("buzz_bip340.retained_memory",
							"Freed memory a backend keeps for reuse rather than return to the kernel (0: glibc's default).",
							"Allocations up to a quarter of it are served from that memory, not mmap.",
							&retained_memory_kb, 16384, 0, INT_MAX / 1024, PGC_SUSET, GUC_UNIT_KB,
							NULL, assign_retained_memory, NULL);
	/* Defining the variable ran its assign hook: the thresholds are set from here on. */
	MarkGUCPrefixReserved("buzz_bip340");
}

#define SIG_BYTES 64
#define MSG_BYTES 32
#define PUBKEY_BYTES 32

static secp256k1_context *verify_context = NULL;

/*
 * The last public key parsed, and its parsed form: nearly every call verifies for the same
 * key (the relay's), and parsing an x-only key costs a field square root.
 */
static unsigned char cached_pubkey_bytes[PUBKEY_BYTES];
static secp256k1_xonly_pubkey cached_pubkey;
static bool cached_pubkey_valid = false;

static void
illegal_argument(const char *message, void *data)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("libsecp256k1 refused an argument: %s", message)));
}

static secp256k1_context *
get_context(void)
{
	if (verify_context == NULL)
	{
		secp256k1_context *ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);

		if (ctx == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not create a libsecp256k1 context")));
		secp256k1_context_set_illegal_callback(ctx, illegal_argument, NULL);
		secp256k1_context_set_error_callback(ctx, illegal_argument, NULL);
		verify_context = ctx;
	}
	return verify_context;
}

static const unsigned char *
fixed_size(bytea *value, int size, const char *name)
{
	if (VARSIZE_ANY_EXHDR(value) != size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bip340_verify: %s must be %d bytes, not %d",
						name, size, (int) VARSIZE_ANY_EXHDR(value))));
	return (const unsigned char *) VARDATA_ANY(value);
}

/*
 * The x-only key of pubkey_bytes, from the cache when it is the last key parsed: false when
 * the bytes are not an x coordinate on the curve.
 */
static bool
parsed_pubkey(const secp256k1_context *ctx, const unsigned char *pubkey_bytes,
			  secp256k1_xonly_pubkey *pubkey)
{
	if (!cached_pubkey_valid || memcmp(cached_pubkey_bytes, pubkey_bytes, PUBKEY_BYTES) != 0)
	{
		cached_pubkey_valid = false;
		if (!secp256k1_xonly_pubkey_parse(ctx, &cached_pubkey, pubkey_bytes))
			return false;
		memcpy(cached_pubkey_bytes, pubkey_bytes, PUBKEY_BYTES);
		cached_pubkey_valid = true;
	}
	*pubkey = cached_pubkey;
	return true;
}

PG_FUNCTION_INFO_V1(buzz_bip340_verify);

Datum
buzz_bip340_verify(PG_FUNCTION_ARGS)
{
	bytea	   *sig_arg = PG_GETARG_BYTEA_PP(0);
	bytea	   *msg_arg = PG_GETARG_BYTEA_PP(1);
	bytea	   *pubkey_arg = PG_GETARG_BYTEA_PP(2);
	const unsigned char *sig = fixed_size(sig_arg, SIG_BYTES, "sig");
	const unsigned char *msg = fixed_size(msg_arg, MSG_BYTES, "msg");
	const unsigned char *pubkey_bytes = fixed_size(pubkey_arg, PUBKEY_BYTES, "pubkey");
	secp256k1_context *ctx = get_context();
	secp256k1_xonly_pubkey pubkey;
	bool		valid;

	/* A key that is not an x coordinate on the curve signs nothing. */
	valid = parsed_pubkey(ctx, pubkey_bytes, &pubkey) &&
		secp256k1_schnorrsig_verify(ctx, sig, msg, MSG_BYTES, &pubkey) == 1;

	PG_FREE_IF_COPY(sig_arg, 0);
	PG_FREE_IF_COPY(msg_arg, 1);
	PG_FREE_IF_COPY(pubkey_arg, 2);
	PG_RETURN_BOOL(valid);
}

/* One thread's share of bip340_first_invalid: verify [from, to), note each result. */
typedef struct VerifyRange
{
	const secp256k1_context *ctx;
	const secp256k1_xonly_pubkey *pubkey;
	const unsigned char *sigs;	/* SIG_BYTES each */
	const unsigned char *msgs;	/* MSG_BYTES each */
	bool	   *valid;
	int			from;
	int			to;
} VerifyRange;

static void *
verify_range(void *arg)
{
	VerifyRange *r = (VerifyRange *) arg;

	for (int i = r->from; i < r->to; i++)
		r->valid[i] = secp256k1_schnorrsig_verify(r->ctx, r->sigs + (size_t) i * SIG_BYTES,
												  r->msgs + (size_t) i * MSG_BYTES, MSG_BYTES,
												  r->pubkey) == 1;
	return NULL;
}

static int
threads_for(int n)
{
	int			wanted = n / BATCH_PER_THREAD;
	long		cpus;

	if (wanted <= 1)
		return 1;				/* a small batch asks the system nothing (sysconf reads /sys) */
	cpus = max_threads > 0 ? max_threads : sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 1)
		cpus = 1;
	if (cpus > MAX_THREADS)
		cpus = MAX_THREADS;
	return Max(1, Min(wanted, (int) cpus));
}

/* Verify every range, the first in this thread and the others in threads of their own. */
static void
verify_ranges(VerifyRange *ranges, int nranges)
{
	pthread_t	threads[MAX_THREADS];
	bool		started[MAX_THREADS] = {false};
	sigset_t	all,
				old;

	if (nranges == 1)
	{
		verify_range(&ranges[0]);	/* no thread: no signal mask to change */
		return;
	}
	/* New threads inherit the mask: none of them may ever run a signal handler. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (int t = 1; t < nranges; t++)
		started[t] = pthread_create(&threads[t], NULL, verify_range, &ranges[t]) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	verify_range(&ranges[0]);
	for (int t = 1; t < nranges; t++)
	{
		if (started[t])
			pthread_join(threads[t], NULL);
		else
			verify_range(&ranges[t]);	/* no thread could be made: do it here */
	}
}

/* The elements of a bytea[] argument, each exactly `size` bytes, copied end to end. */
static unsigned char *
fixed_size_elements(ArrayType *array, int size, const char *name, int *count)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	unsigned char *out;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("bip340_first_invalid: %s must be a one-dimensional array", name)));
	deconstruct_array(array, BYTEAOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	out = palloc((Size) Max(n, 1) * size);
	for (int i = 0; i < n; i++)
	{
		bytea	   *value;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bip340_first_invalid: %s[%d] is NULL", name, i + 1)));
		value = DatumGetByteaPP(elems[i]);
		if (VARSIZE_ANY_EXHDR(value) != size)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("bip340_first_invalid: %s[%d] must be %d bytes, not %d",
							name, i + 1, size, (int) VARSIZE_ANY_EXHDR(value))));
		memcpy(out + (size_t) i * size, VARDATA_ANY(value), size);
	}
	*count = n;
	return out;
}

PG_FUNCTION_INFO_V1(buzz_bip340_first_invalid);

Datum
buzz_bip340_first_invalid(PG_FUNCTION_ARGS)
{
	int			nsigs,
				nmsgs;
	unsigned char *sigs = fixed_size_elements(PG_GETARG_ARRAYTYPE_P(0), SIG_BYTES, "sigs", &nsigs);
	unsigned char *msgs = fixed_size_elements(PG_GETARG_ARRAYTYPE_P(1), MSG_BYTES, "msgs", &nmsgs);
	const unsigned char *pubkey_bytes = fixed_size(PG_GETARG_BYTEA_PP(2), PUBKEY_BYTES, "pubkey");
	secp256k1_context *ctx = get_context();
	secp256k1_xonly_pubkey pubkey;
	VerifyRange ranges[MAX_THREADS];
	int			nranges;
	bool	   *valid;

	if (nsigs != nmsgs)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("bip340_first_invalid: %d signatures for %d messages", nsigs, nmsgs)));
	if (nsigs == 0)
		PG_RETURN_INT32(0);
	if (!parsed_pubkey(ctx, pubkey_bytes, &pubkey))
		PG_RETURN_INT32(1);		/* a key not on the curve signs nothing */

	valid = palloc(sizeof(bool) * nsigs);
	nranges = threads_for(nsigs);
	for (int t = 0; t < nranges; t++)
	{
		ranges[t].ctx = ctx;
		ranges[t].pubkey = &pubkey;
		ranges[t].sigs = sigs;
		ranges[t].msgs = msgs;
		ranges[t].valid = valid;
		ranges[t].from = (int) ((int64) nsigs * t / nranges);
		ranges[t].to = (int) ((int64) nsigs * (t + 1) / nranges);
	}
	verify_ranges(ranges, nranges);
	for (int i = 0; i < nsigs; i++)
		if (!valid[i])
			PG_RETURN_INT32(i + 1);
	PG_RETURN_INT32(0);
}

/*
 * nip01_json(event text) -> json: the text, as json, without parsing it.
 *
 * json is stored as its text, so this is a type change only. The membership functions build
 * each event's compact NIP-01 text themselves (the signed serialization, with its header), and
 * json's input function would lex all of it again: 4-5 ms for a 10,000-member list, more than
 * building it. Only for text built that way: executable by buzz_owner alone.
 */
PG_FUNCTION_INFO_V1(buzz_nip01_json);

Datum
buzz_nip01_json(PG_FUNCTION_ARGS)
{
	PG_RETURN_DATUM(PG_GETARG_DATUM(0));
}

/*
 * keep_list_tags(id text, tags text) -> void and kept_list_tags(id text) -> text: the tags of
 * a list prepare built, kept to the end of the transaction.
 *
 * insert_signed_events returns each new list, whose tags prepare concatenated from the stored
 * pieces moments before; at 10,000 members doing it again costs about a millisecond. Kept by
 * the list's id, the sha256 of a serialization that holds these very tags, so what is found
 * for an id is that id's text whoever kept it. In TopTransactionContext, forgotten when the
 * transaction ends; at most KEEP_LIMIT bytes a transaction (a rotation re-signs many lists):
 * beyond it nothing more is kept and the caller builds the tags again.
 */
#define KEEP_LIMIT (32 * 1024 * 1024)
#define ID_CHARS 64

typedef struct KeptTags
{
	struct KeptTags *next;
	char		id[ID_CHARS];
	text	   *tags;
} KeptTags;

static KeptTags *kept_tags = NULL;
static Size kept_bytes = 0;
static bool kept_callback_registered = false;

static void
forget_kept_tags(XactEvent event, void *arg)
{
	/* Every end of a transaction frees TopTransactionContext; the list goes with it. */
	kept_tags = NULL;
	kept_bytes = 0;
}

static const char *
list_id(text *id)
{
	if (VARSIZE_ANY_EXHDR(id) != ID_CHARS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a list id is %d hexadecimal characters, not %d",
						ID_CHARS, (int) VARSIZE_ANY_EXHDR(id))));
	return VARDATA_ANY(id);
}

PG_FUNCTION_INFO_V1(buzz_keep_list_tags);

Datum
buzz_keep_list_tags(PG_FUNCTION_ARGS)
{
	const char *id = list_id(PG_GETARG_TEXT_PP(0));
	text	   *tags = PG_GETARG_TEXT_PP(1);
	Size		size = VARSIZE_ANY(tags);
	KeptTags   *entry;

	if (kept_bytes + size > KEEP_LIMIT)
		PG_RETURN_VOID();
	if (!kept_callback_registered)
	{
		RegisterXactCallback(forget_kept_tags, NULL);
		kept_callback_registered = true;
	}
	entry = MemoryContextAlloc(TopTransactionContext, sizeof(KeptTags));
	memcpy(entry->id, id, ID_CHARS);
	entry->tags = MemoryContextAlloc(TopTransactionContext, size);
	memcpy(entry->tags, tags, size);
	entry->next = kept_tags;
	kept_tags = entry;
	kept_bytes += size;
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(buzz_kept_list_tags);

Datum
buzz_kept_list_tags(PG_FUNCTION_ARGS)
{
	const char *id = list_id(PG_GETARG_TEXT_PP(0));

	for (KeptTags *entry = kept_tags; entry != NULL; entry = entry->next)
		if (memcmp(entry->id, id, ID_CHARS) == 0)
			PG_RETURN_TEXT_P(entry->tags);
	PG_RETURN_NULL();
}
