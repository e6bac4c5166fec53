// The plaintext modulus choice (mirrors models/pmf_models/quantize.py). The
// private protocol computes d = bias + Σ x_f·w_f modulo 2^T; with at most
// L_max rows per email, every x_f ≤ cap and every |w| ≤ 2^(b_in-1) - 1,
// |d| ≤ L_max·cap·qmax + qmax, so T is the smallest value with
// 2^(T-1) above that bound and the decrypted two's-complement value is d.

export const qmax = (bIn: number): number => 2 ** (bIn - 1) - 1;

export function dotBound(bIn: number, cap: number, lMax: number): number {
  return lMax * cap * qmax(bIn) + qmax(bIn);
}

export function chooseT(bIn: number, cap: number, lMax: number): number {
  return dotBound(bIn, cap, lMax).toString(2).length + 1;
}
