/*
 * buzz_bip340_test_signer: BIP-340 signing inside the server, for the pgTAP suites only.
 *
 * The database verifies every signature it stores (buzz_bip340), so a suite that writes a list
 * in SQL must sign it. This module signs with a secret passed as an argument; the suites use
 * BIP-340 test-vector keys (1, 2, 3, ...). It is never created by the migrations and must never
 * be installed where real keys could be passed to it.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

PG_MODULE_MAGIC;

static secp256k1_context *sign_context = NULL;

static secp256k1_context *
get_context(void)
{
	if (sign_context == NULL)
	{
		sign_context = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
		if (sign_context == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not create a libsecp256k1 context")));
	}
	return sign_context;
}

static void
keypair_of(bytea *seckey, secp256k1_keypair *keypair)
{
	if (VARSIZE_ANY_EXHDR(seckey) != 32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a secret key must be 32 bytes")));
	if (!secp256k1_keypair_create(get_context(), keypair,
								  (const unsigned char *) VARDATA_ANY(seckey)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the secret key is out of range")));
}

static bytea *
bytes(const unsigned char *data, int size)
{
	bytea	   *out = (bytea *) palloc(VARHDRSZ + size);

	SET_VARSIZE(out, VARHDRSZ + size);
	memcpy(VARDATA(out), data, size);
	return out;
}

PG_FUNCTION_INFO_V1(buzz_bip340_test_sign);

Datum
buzz_bip340_test_sign(PG_FUNCTION_ARGS)
{
	bytea	   *msg = PG_GETARG_BYTEA_PP(0);
	secp256k1_keypair keypair;
	unsigned char sig[64];

	if (VARSIZE_ANY_EXHDR(msg) != 32)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a message must be 32 bytes")));
	keypair_of(PG_GETARG_BYTEA_PP(1), &keypair);
	if (!secp256k1_schnorrsig_sign32(get_context(), sig,
									 (const unsigned char *) VARDATA_ANY(msg), &keypair, NULL))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("signing failed")));
	PG_RETURN_BYTEA_P(bytes(sig, 64));
}

PG_FUNCTION_INFO_V1(buzz_bip340_test_pubkey);

Datum
buzz_bip340_test_pubkey(PG_FUNCTION_ARGS)
{
	secp256k1_keypair keypair;
	secp256k1_xonly_pubkey pubkey;
	unsigned char out[32];

	keypair_of(PG_GETARG_BYTEA_PP(0), &keypair);
	if (!secp256k1_keypair_xonly_pub(get_context(), &pubkey, NULL, &keypair) ||
		!secp256k1_xonly_pubkey_serialize(get_context(), out, &pubkey))
		ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("no public key")));
	PG_RETURN_BYTEA_P(bytes(out, 32));
}
