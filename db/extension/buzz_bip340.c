/*
 * buzz_bip340: BIP-340 Schnorr signature verification for PostgreSQL, with libsecp256k1.
 *
 * One function, bip340_verify(sig bytea, msg bytea, pubkey bytea) -> boolean. Inputs have
 * fixed sizes (64, 32, 32 bytes); any other size is an ERROR before libsecp256k1 sees it, so
 * no input reaches the library outside its contract. A public key that is not an x coordinate
 * on the curve is simply not a valid signer: false, as BIP-340's test vectors require.
 *
 * The verification context is created once per backend, on first use, and kept for the
 * backend's life (verification needs no precomputed tables in libsecp256k1 >= 0.2, so the
 * context is small). Its illegal-argument callback raises an ERROR instead of aborting the
 * process; it cannot fire with the sizes checked here.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

PG_MODULE_MAGIC;

#define SIG_BYTES 64
#define MSG_BYTES 32
#define PUBKEY_BYTES 32

static secp256k1_context *verify_context = NULL;

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

	if (!secp256k1_xonly_pubkey_parse(ctx, &pubkey, pubkey_bytes))
		valid = false;
	else
		valid = secp256k1_schnorrsig_verify(ctx, sig, msg, MSG_BYTES, &pubkey) == 1;

	PG_FREE_IF_COPY(sig_arg, 0);
	PG_FREE_IF_COPY(msg_arg, 1);
	PG_FREE_IF_COPY(pubkey_arg, 2);
	PG_RETURN_BOOL(valid);
}
