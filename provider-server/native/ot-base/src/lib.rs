//! The provider's batched ristretto255 work, called from ../sodium.c:
//! - the group arithmetic of its half of a session's 128 base OTs
//!   (docs/crypto.md#base-ot; sodium.c hashes the keys with libsodium and
//!   wipes what is secret): for each choice bit s_i, b_i = wide_i mod L,
//!   B_i = b_i·G + s_i·A and the shared point b_i·A;
//! - the blocklist OPRF's evaluation of a request's blinded elements, k·X_i
//!   (docs/blocklist.md).
//!
//! Why not libsodium's calls: every OT multiplies the same A, and libsodium
//! takes A only as bytes, so each call decodes A again and runs a generic
//! variable-base ladder. Here A is decoded once and gets a precomputed table,
//! so b_i·A costs what b_i·G costs (a constant-time table walk), and the
//! selection and sum stay in the group until all are encoded, in two batches.
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use subtle::{Choice, ConditionallySelectable};
use zeroize::Zeroize;

const BASE_OTS: usize = 128;
const POINT: usize = 32;
const WIDE: usize = 64;

/// `a`: 32 bytes, `s`: 16 bytes (bit i of byte i/8, least significant first),
/// `wide`: 64·128 random bytes; writes B_0..B_127 to `points` and
/// b_0·A..b_127·A to `shared` (32·128 bytes each, encoded). Returns 0, or -1
/// (both outputs zeroed) when A is not the canonical encoding of a point other
/// than the identity: the same refusals as libsodium's ristretto255 calls, so
/// every backend agrees.
///
/// # Safety
/// Each pointer must be valid for the length given above; the outputs must
/// not overlap each other or the inputs.
#[no_mangle]
pub unsafe extern "C" fn pmf_ot_base_points(
    a: *const u8,
    s: *const u8,
    wide: *const u8,
    points: *mut u8,
    shared: *mut u8,
) -> i32 {
    let a = core::slice::from_raw_parts(a, POINT);
    let s = core::slice::from_raw_parts(s, BASE_OTS / 8);
    let wide = core::slice::from_raw_parts(wide, WIDE * BASE_OTS);
    let points = core::slice::from_raw_parts_mut(points, POINT * BASE_OTS);
    let shared = core::slice::from_raw_parts_mut(shared, POINT * BASE_OTS);
    let rc = receive(a, s, wide, points, shared);
    if rc != 0 {
        points.zeroize();
        shared.zeroize();
    }
    rc
}

fn receive(a: &[u8], s: &[u8], wide: &[u8], points: &mut [u8], shared: &mut [u8]) -> i32 {
    let Some(point) = CompressedRistretto::from_slice(a)
        .ok()
        .and_then(|c| c.decompress())
    else {
        return -1;
    };
    let identity = RistrettoPoint::identity();
    if point == identity {
        return -1;
    }
    let table = RistrettoBasepointTable::create(&point);
    let half = half();
    let half_a = &half * &table;
    let mut b_halves = Vec::with_capacity(BASE_OTS);
    let mut shared_halves = Vec::with_capacity(BASE_OTS);
    let mut failed = false;
    for i in 0..BASE_OTS {
        let mut w = [0u8; WIDE];
        w.copy_from_slice(&wide[WIDE * i..WIDE * (i + 1)]);
        let mut b = Scalar::from_bytes_mod_order_wide(&w);
        w.zeroize();
        // libsodium refuses a multiplication whose result is the identity; b = 0
        // is the only way (A is not the identity, the group has prime order).
        failed |= b == Scalar::ZERO;
        let bit = Choice::from((s[i >> 3] >> (i & 7)) & 1);
        let mut b_half = b * half;
        let mut g_half = &b_half * RISTRETTO_BASEPOINT_TABLE;
        b_halves.push(g_half + RistrettoPoint::conditional_select(&identity, &half_a, bit));
        shared_halves.push(&b_half * &table);
        b.zeroize();
        b_half.zeroize();
        g_half.zeroize();
    }
    encode_doubles(&mut b_halves, points);
    encode_doubles(&mut shared_halves, shared);
    if failed {
        -1
    } else {
        0
    }
}

/// `key`: a canonical non-zero scalar (32 bytes), `blinded`: `n` encoded
/// points, `out`: `n` × 32 bytes for key·X_i, encoded. Returns 0, or -1 (and a
/// zeroed `out`) when the key is not canonical or zero, or an element does
/// not decode canonically or is the identity: the refusals of libsodium's
/// `crypto_scalarmult_ristretto255`, whose results these are byte for byte.
///
/// # Safety
/// Each pointer must be valid for the length given above; `out` must not
/// overlap the inputs.
#[no_mangle]
pub unsafe extern "C" fn pmf_oprf_evaluate(
    key: *const u8,
    blinded: *const u8,
    n: usize,
    out: *mut u8,
) -> i32 {
    let key = core::slice::from_raw_parts(key, 32);
    let blinded = core::slice::from_raw_parts(blinded, POINT * n);
    let out = core::slice::from_raw_parts_mut(out, POINT * n);
    let rc = evaluate(key, blinded, out);
    if rc != 0 {
        out.zeroize();
    }
    rc
}

fn evaluate(key: &[u8], blinded: &[u8], out: &mut [u8]) -> i32 {
    let mut bytes = [0u8; 32];
    bytes.copy_from_slice(key);
    let k: Option<Scalar> = Scalar::from_canonical_bytes(bytes).into();
    bytes.zeroize();
    let Some(mut k) = k else {
        return -1;
    };
    if k == Scalar::ZERO {
        return -1;
    }
    let mut k_half = k * half();
    k.zeroize();
    let identity = RistrettoPoint::identity();
    let mut halves = Vec::with_capacity(blinded.len() / POINT);
    let mut failed = false;
    for x in blinded.chunks_exact(POINT) {
        match CompressedRistretto::from_slice(x)
            .ok()
            .and_then(|c| c.decompress())
        {
            Some(p) if p != identity => halves.push(p * k_half),
            _ => failed = true,
        }
    }
    k_half.zeroize();
    if failed {
        halves.zeroize();
        return -1;
    }
    encode_doubles(&mut halves, out);
    0
}

/// 1/2 mod L. Each point is made as its half h, so that encode_doubles can
/// encode 2h for a whole batch with one field inversion (double_and_compress_batch)
/// instead of one per encoding (~6 µs each here).
fn half() -> Scalar {
    Scalar::from(2u8).invert()
}

/// Writes the encodings of 2h for each h in `halves` to `out`, then wipes the
/// halves and the encodings' copies.
fn encode_doubles(halves: &mut Vec<RistrettoPoint>, out: &mut [u8]) {
    let mut encoded = RistrettoPoint::double_and_compress_batch(halves.iter());
    for (i, e) in encoded.iter().enumerate() {
        out[POINT * i..POINT * (i + 1)].copy_from_slice(e.as_bytes());
    }
    encoded.zeroize();
    halves.zeroize();
}
