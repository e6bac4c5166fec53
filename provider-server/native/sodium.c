// N-API binding to the system's libsodium for the provider's ristretto255
// work (base OTs of each new session, the blocklist OPRF): the same functions,
// names and semantics as libsodium-wrappers-sumo (wasm/ts/ristretto.ts uses
// either), natively about 3x faster than libsodium's WebAssembly build.
// Glue only: every operation is libsodium's but two batched ones, whose group
// arithmetic is curve25519-dalek's (ot-base/, a Rust static library linked in
// here): the provider's half of a session's base OTs (pmf_ot_base_receive,
// the same loop as wasm/ts/ot.ts in one call, hashed with libsodium) and the
// blocklist OPRF over a request's elements (pmf_oprf_evaluate_all).
// Arguments are Uint8Arrays of the exact lengths expected (checked here);
// results are fresh Uint8Arrays; a failure throws, like the wrappers do.
#include <node_api.h>
#include <sodium.h>

#define MAX_ARGS 3
#define RISTRETTO crypto_core_ristretto255_BYTES
#define SCALAR crypto_core_ristretto255_SCALARBYTES
#define WIDE crypto_core_ristretto255_HASHBYTES

typedef struct {
  const uint8_t* data[MAX_ARGS];
  size_t len[MAX_ARGS];
} Args;

// One exported function: its arguments' lengths (0: any), its result's
// length and the libsodium call (0 on success).
typedef struct {
  const char* name;
  size_t argc;
  size_t want[MAX_ARGS];
  size_t out;
  int (*op)(uint8_t* out, const Args* a);
  const char* error;
} Fn;

// libsodium 1.0.18 (Debian 12) decodes an encoding with its top bit set as if
// the bit were clear; RFC 9496 and libsodium >= 1.0.19 (the WebAssembly build)
// refuse it as non-canonical. Refused here too, so both backends agree and a
// client cannot send one element under two encodings.
static int top_bit_clear(const uint8_t* p) { return (p[RISTRETTO - 1] & 0x80) == 0; }

static int scalarmult(uint8_t* q, const Args* a) {
  return top_bit_clear(a->data[1]) ? crypto_scalarmult_ristretto255(q, a->data[0], a->data[1]) : -1;
}
static int scalarmult_base(uint8_t* q, const Args* a) {
  return crypto_scalarmult_ristretto255_base(q, a->data[0]);
}
static int add(uint8_t* r, const Args* a) {
  return top_bit_clear(a->data[0]) && top_bit_clear(a->data[1])
             ? crypto_core_ristretto255_add(r, a->data[0], a->data[1])
             : -1;
}
static int sub(uint8_t* r, const Args* a) {
  return top_bit_clear(a->data[0]) && top_bit_clear(a->data[1])
             ? crypto_core_ristretto255_sub(r, a->data[0], a->data[1])
             : -1;
}
static int from_hash(uint8_t* r, const Args* a) {
  return crypto_core_ristretto255_from_hash(r, a->data[0]);
}
static int scalar_reduce(uint8_t* r, const Args* a) {
  crypto_core_ristretto255_scalar_reduce(r, a->data[0]);
  return 0;
}
static int scalar_invert(uint8_t* r, const Args* a) {
  return crypto_core_ristretto255_scalar_invert(r, a->data[0]);
}
static int hash_sha512(uint8_t* r, const Args* a) {
  return crypto_hash_sha512(r, a->data[0], a->len[0]);
}

#define BASE_OTS 128
#define BASE_OT_KEY crypto_hash_sha256_BYTES
static const char BASE_OT_DOMAIN[] = "pmf-ot-base-v1";

// The group arithmetic, from ot-base/ (curve25519-dalek): B_i and b_i·A for
// all 128 OTs, A decoded once (see ot-base/src/lib.rs for why).
int pmf_ot_base_points(const uint8_t* A, const uint8_t* s, const uint8_t* wide, uint8_t* points,
                       uint8_t* shared);
// The blocklist OPRF over a request's elements, from ot-base/ too: key·X_i, encoded in one batch.
int pmf_oprf_evaluate(const uint8_t* key, const uint8_t* blinded, size_t n, uint8_t* out);

// wasm/ts/ot.ts receiveBaseHere, byte for byte (tested against it): for each
// choice bit s_i, the scalar b_i = wide_i mod L, B_i = b_i·G + s_i·A (selected
// in constant time) and k_i = SHA-256(domain ‖ i ‖ A ‖ B_i ‖ b_i·A).
// out = B_0..B_127 ‖ k_0..k_127. The caller draws the randomness.
static int ot_base_receive(uint8_t* out, const Args* a) {
  const uint8_t* A = a->data[0];
  uint8_t shared[RISTRETTO * BASE_OTS];
  crypto_hash_sha256_state h;
  int rc = top_bit_clear(A) ? pmf_ot_base_points(A, a->data[1], a->data[2], out, shared) : -1;
  for (size_t i = 0; rc == 0 && i < BASE_OTS; i++) {
    const uint8_t index[2] = {(uint8_t)(i & 0xff), (uint8_t)(i >> 8)};
    crypto_hash_sha256_init(&h);
    crypto_hash_sha256_update(&h, (const uint8_t*)BASE_OT_DOMAIN, sizeof BASE_OT_DOMAIN - 1);
    crypto_hash_sha256_update(&h, index, sizeof index);
    crypto_hash_sha256_update(&h, A, RISTRETTO);
    crypto_hash_sha256_update(&h, out + RISTRETTO * i, RISTRETTO);
    crypto_hash_sha256_update(&h, shared + RISTRETTO * i, RISTRETTO);
    crypto_hash_sha256_final(&h, out + RISTRETTO * BASE_OTS + BASE_OT_KEY * i);
  }
  sodium_memzero(shared, sizeof shared);
  sodium_memzero(&h, sizeof h);
  if (rc != 0) sodium_memzero(out, (RISTRETTO + BASE_OT_KEY) * BASE_OTS);
  return rc;
}

static const Fn FNS[] = {
    {"crypto_scalarmult_ristretto255",
     2,
     {SCALAR, RISTRETTO},
     RISTRETTO,
     scalarmult,
     "invalid point or scalar"},
    {"crypto_scalarmult_ristretto255_base",
     1,
     {SCALAR},
     RISTRETTO,
     scalarmult_base,
     "invalid scalar"},
    {"crypto_core_ristretto255_add", 2, {RISTRETTO, RISTRETTO}, RISTRETTO, add, "invalid point"},
    {"crypto_core_ristretto255_sub", 2, {RISTRETTO, RISTRETTO}, RISTRETTO, sub, "invalid point"},
    {"crypto_core_ristretto255_from_hash", 1, {WIDE}, RISTRETTO, from_hash, "invalid input"},
    {"crypto_core_ristretto255_scalar_reduce", 1, {WIDE}, SCALAR, scalar_reduce, "invalid input"},
    {"crypto_core_ristretto255_scalar_invert",
     1,
     {SCALAR},
     SCALAR,
     scalar_invert,
     "invalid scalar"},
    {"crypto_hash_sha512", 1, {0}, crypto_hash_sha512_BYTES, hash_sha512, "hash failed"},
    {"pmf_ot_base_receive",
     3,
     {RISTRETTO, BASE_OTS / 8, 64 * BASE_OTS},
     (RISTRETTO + BASE_OT_KEY) * BASE_OTS,
     ot_base_receive,
     "invalid point or scalar"},
};
#define FN_COUNT (sizeof FNS / sizeof FNS[0])

// Reads `count` Uint8Array arguments of the given lengths (0: any length).
static int read_args(napi_env env, napi_callback_info info, size_t count, const size_t* want,
                     Args* out, void** data) {
  napi_value argv[MAX_ARGS];
  size_t argc = MAX_ARGS;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, data) != napi_ok || argc != count) {
    napi_throw_type_error(env, NULL, "wrong number of arguments");
    return 0;
  }
  for (size_t i = 0; i < count; i++) {
    bool is_typed;
    napi_typedarray_type type;
    void* bytes;
    if (napi_is_typedarray(env, argv[i], &is_typed) != napi_ok || !is_typed ||
        napi_get_typedarray_info(env, argv[i], &type, &out->len[i], &bytes, NULL, NULL) !=
            napi_ok ||
        type != napi_uint8_array) {
      napi_throw_type_error(env, NULL, "argument must be a Uint8Array");
      return 0;
    }
    if (want[i] != 0 && out->len[i] != want[i]) {
      napi_throw_range_error(env, NULL, "invalid input length");
      return 0;
    }
    out->data[i] = bytes;
  }
  return 1;
}

// Every FNS entry: checks its arguments, runs its libsodium call into a fresh Uint8Array.
static napi_value call(napi_env env, napi_callback_info info) {
  void* data;
  napi_get_cb_info(env, info, NULL, NULL, NULL, &data);
  const Fn* fn = data;
  Args a;
  uint8_t* bytes;
  napi_value buffer, result;
  if (!read_args(env, info, fn->argc, fn->want, &a, &data)) return NULL;
  if (napi_create_arraybuffer(env, fn->out, (void**)&bytes, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_uint8_array, fn->out, buffer, 0, &result) != napi_ok)
    return NULL;
  if (fn->op(bytes, &a) != 0) {
    napi_throw_error(env, NULL, fn->error);
    return NULL;
  }
  return result;
}

// key·X_i for each 32-byte element X_i of `blinded`, in one call (1..MAX_ELEMENTS of them): the
// result of crypto_scalarmult_ristretto255 for each, byte for byte, with the same refusals.
#define MAX_ELEMENTS 4096
static napi_value oprf_evaluate_all(napi_env env, napi_callback_info info) {
  static const size_t want[] = {SCALAR, 0};
  Args a;
  uint8_t* bytes;
  napi_value buffer, result;
  if (!read_args(env, info, 2, want, &a, NULL)) return NULL;
  size_t n = a.len[1] / RISTRETTO;
  if (a.len[1] % RISTRETTO != 0 || n == 0 || n > MAX_ELEMENTS) {
    napi_throw_range_error(env, NULL, "invalid input length");
    return NULL;
  }
  int rc = 0;
  for (size_t i = 0; i < n; i++) rc |= !top_bit_clear(a.data[1] + RISTRETTO * i);
  if (napi_create_arraybuffer(env, a.len[1], (void**)&bytes, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_uint8_array, a.len[1], buffer, 0, &result) != napi_ok)
    return NULL;
  if (rc != 0 || pmf_oprf_evaluate(a.data[0], a.data[1], n, bytes) != 0) {
    napi_throw_error(env, NULL, "invalid point or scalar");
    return NULL;
  }
  return result;
}

// The one function with a boolean result; any length is answered (false unless 32 bytes).
static napi_value is_valid_point(napi_env env, napi_callback_info info) {
  static const size_t any[] = {0};
  Args a;
  napi_value result;
  if (!read_args(env, info, 1, any, &a, NULL)) return NULL;
  bool ok = a.len[0] == RISTRETTO && top_bit_clear(a.data[0]) &&
            crypto_core_ristretto255_is_valid_point(a.data[0]) == 1;
  napi_get_boolean(env, ok, &result);
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  if (sodium_init() < 0) {
    napi_throw_error(env, NULL, "libsodium failed to initialize");
    return NULL;
  }
  napi_property_descriptor props[FN_COUNT + 2];
  for (size_t i = 0; i < FN_COUNT; i++)
    props[i] = (napi_property_descriptor){FNS[i].name,     NULL,          call, NULL, NULL, NULL,
                                          napi_enumerable, (void*)&FNS[i]};
  props[FN_COUNT] = (napi_property_descriptor){"crypto_core_ristretto255_is_valid_point",
                                               NULL,
                                               is_valid_point,
                                               NULL,
                                               NULL,
                                               NULL,
                                               napi_enumerable,
                                               NULL};
  props[FN_COUNT + 1] = (napi_property_descriptor){
      "pmf_oprf_evaluate_all", NULL, oprf_evaluate_all, NULL, NULL, NULL, napi_enumerable, NULL};
  if (napi_define_properties(env, exports, FN_COUNT + 2, props) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
