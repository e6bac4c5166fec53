// N-API binding to the system's libsodium for the provider's ristretto255
// work (base OTs of each new session, the blocklist OPRF): the same functions,
// names and semantics as libsodium-wrappers-sumo (wasm/ts/ristretto.ts uses
// either), natively about 4x faster than libsodium's WebAssembly build.
// Glue only: every operation is libsodium's. Arguments are Uint8Arrays of
// the exact lengths libsodium expects (checked here); results are fresh
// Uint8Arrays; a libsodium failure throws, like the wrappers do.
#include <node_api.h>
#include <sodium.h>
#include <string.h>

#define MAX_ARGS 2

typedef struct {
  const uint8_t* data[MAX_ARGS];
  size_t len[MAX_ARGS];
} Args;

// Reads `count` Uint8Array arguments of the given lengths (0: any length).
static int read_args(napi_env env, napi_callback_info info, size_t count, const size_t* want,
                     Args* out) {
  napi_value argv[MAX_ARGS];
  size_t argc = MAX_ARGS;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != count) {
    napi_throw_type_error(env, NULL, "wrong number of arguments");
    return 0;
  }
  for (size_t i = 0; i < count; i++) {
    bool is_typed;
    napi_typedarray_type type;
    void* data;
    if (napi_is_typedarray(env, argv[i], &is_typed) != napi_ok || !is_typed ||
        napi_get_typedarray_info(env, argv[i], &type, &out->len[i], &data, NULL, NULL) != napi_ok ||
        type != napi_uint8_array) {
      napi_throw_type_error(env, NULL, "argument must be a Uint8Array");
      return 0;
    }
    if (want[i] != 0 && out->len[i] != want[i]) {
      napi_throw_range_error(env, NULL, "invalid input length");
      return 0;
    }
    out->data[i] = data;
  }
  return 1;
}

// A fresh Uint8Array of `len` bytes; *bytes points at its storage.
static napi_value new_bytes(napi_env env, size_t len, uint8_t** bytes) {
  napi_value buffer, array;
  if (napi_create_arraybuffer(env, len, (void**)bytes, &buffer) != napi_ok ||
      napi_create_typedarray(env, napi_uint8_array, len, buffer, 0, &array) != napi_ok)
    return NULL;
  return array;
}

static napi_value fail(napi_env env, const char* what) {
  napi_throw_error(env, NULL, what);
  return NULL;
}

#define RISTRETTO crypto_core_ristretto255_BYTES

// libsodium 1.0.18 (Debian 12) decodes an encoding with its top bit set as if
// the bit were clear; RFC 9496 and libsodium >= 1.0.19 (the WebAssembly build)
// refuse it as non-canonical. Refused here too, so both backends agree and a
// client cannot send one element under two encodings.
static int top_bit_clear(const uint8_t* p) { return (p[RISTRETTO - 1] & 0x80) == 0; }
#define SCALAR crypto_core_ristretto255_SCALARBYTES
#define WIDE crypto_core_ristretto255_HASHBYTES

static napi_value scalarmult(napi_env env, napi_callback_info info) {
  static const size_t want[] = {SCALAR, RISTRETTO};
  Args a;
  uint8_t* q;
  if (!read_args(env, info, 2, want, &a)) return NULL;
  napi_value out = new_bytes(env, RISTRETTO, &q);
  if (!out) return NULL;
  if (!top_bit_clear(a.data[1]) || crypto_scalarmult_ristretto255(q, a.data[0], a.data[1]) != 0)
    return fail(env, "invalid point or scalar");
  return out;
}

static napi_value scalarmult_base(napi_env env, napi_callback_info info) {
  static const size_t want[] = {SCALAR};
  Args a;
  uint8_t* q;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  napi_value out = new_bytes(env, RISTRETTO, &q);
  if (!out) return NULL;
  if (crypto_scalarmult_ristretto255_base(q, a.data[0]) != 0) return fail(env, "invalid scalar");
  return out;
}

static napi_value is_valid_point(napi_env env, napi_callback_info info) {
  static const size_t want[] = {0};
  Args a;
  napi_value result;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  bool ok = a.len[0] == RISTRETTO && top_bit_clear(a.data[0]) &&
            crypto_core_ristretto255_is_valid_point(a.data[0]) == 1;
  napi_get_boolean(env, ok, &result);
  return result;
}

static napi_value add(napi_env env, napi_callback_info info) {
  static const size_t want[] = {RISTRETTO, RISTRETTO};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 2, want, &a)) return NULL;
  napi_value out = new_bytes(env, RISTRETTO, &r);
  if (!out) return NULL;
  if (!top_bit_clear(a.data[0]) || !top_bit_clear(a.data[1]) ||
      crypto_core_ristretto255_add(r, a.data[0], a.data[1]) != 0)
    return fail(env, "invalid point");
  return out;
}

static napi_value sub(napi_env env, napi_callback_info info) {
  static const size_t want[] = {RISTRETTO, RISTRETTO};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 2, want, &a)) return NULL;
  napi_value out = new_bytes(env, RISTRETTO, &r);
  if (!out) return NULL;
  if (!top_bit_clear(a.data[0]) || !top_bit_clear(a.data[1]) ||
      crypto_core_ristretto255_sub(r, a.data[0], a.data[1]) != 0)
    return fail(env, "invalid point");
  return out;
}

static napi_value from_hash(napi_env env, napi_callback_info info) {
  static const size_t want[] = {WIDE};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  napi_value out = new_bytes(env, RISTRETTO, &r);
  if (!out) return NULL;
  crypto_core_ristretto255_from_hash(r, a.data[0]);
  return out;
}

static napi_value scalar_reduce(napi_env env, napi_callback_info info) {
  static const size_t want[] = {WIDE};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  napi_value out = new_bytes(env, SCALAR, &r);
  if (!out) return NULL;
  crypto_core_ristretto255_scalar_reduce(r, a.data[0]);
  return out;
}

static napi_value scalar_invert(napi_env env, napi_callback_info info) {
  static const size_t want[] = {SCALAR};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  napi_value out = new_bytes(env, SCALAR, &r);
  if (!out) return NULL;
  if (crypto_core_ristretto255_scalar_invert(r, a.data[0]) != 0) return fail(env, "invalid scalar");
  return out;
}

static napi_value scalar_mul(napi_env env, napi_callback_info info) {
  static const size_t want[] = {SCALAR, SCALAR};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 2, want, &a)) return NULL;
  napi_value out = new_bytes(env, SCALAR, &r);
  if (!out) return NULL;
  crypto_core_ristretto255_scalar_mul(r, a.data[0], a.data[1]);
  return out;
}

static napi_value hash_sha512(napi_env env, napi_callback_info info) {
  static const size_t want[] = {0};
  Args a;
  uint8_t* r;
  if (!read_args(env, info, 1, want, &a)) return NULL;
  napi_value out = new_bytes(env, crypto_hash_sha512_BYTES, &r);
  if (!out) return NULL;
  crypto_hash_sha512(r, a.data[0], a.len[0]);
  return out;
}

static napi_value init(napi_env env, napi_value exports) {
  if (sodium_init() < 0) {
    napi_throw_error(env, NULL, "libsodium failed to initialize");
    return NULL;
  }
  const napi_property_descriptor fns[] = {
      {"crypto_scalarmult_ristretto255", NULL, scalarmult, NULL, NULL, NULL, napi_enumerable, NULL},
      {"crypto_scalarmult_ristretto255_base", NULL, scalarmult_base, NULL, NULL, NULL,
       napi_enumerable, NULL},
      {"crypto_core_ristretto255_is_valid_point", NULL, is_valid_point, NULL, NULL, NULL,
       napi_enumerable, NULL},
      {"crypto_core_ristretto255_add", NULL, add, NULL, NULL, NULL, napi_enumerable, NULL},
      {"crypto_core_ristretto255_sub", NULL, sub, NULL, NULL, NULL, napi_enumerable, NULL},
      {"crypto_core_ristretto255_from_hash", NULL, from_hash, NULL, NULL, NULL, napi_enumerable,
       NULL},
      {"crypto_core_ristretto255_scalar_reduce", NULL, scalar_reduce, NULL, NULL, NULL,
       napi_enumerable, NULL},
      {"crypto_core_ristretto255_scalar_invert", NULL, scalar_invert, NULL, NULL, NULL,
       napi_enumerable, NULL},
      {"crypto_core_ristretto255_scalar_mul", NULL, scalar_mul, NULL, NULL, NULL, napi_enumerable,
       NULL},
      {"crypto_hash_sha512", NULL, hash_sha512, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, sizeof fns / sizeof fns[0], fns) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
