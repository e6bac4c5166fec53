// A key's algorithm as people know it ("Ed25519", "RSA 4096"), from the
// name OpenPGP.js gives it ("eddsaLegacy (ed25519Legacy)", "rsaEncryptSign
// 4096"), which the key list stores. Unknown names are shown as they are.

const CURVES: Record<string, string> = {
  ed25519Legacy: 'Ed25519',
  curve25519Legacy: 'Curve25519',
  ed25519: 'Ed25519',
  curve25519: 'Curve25519',
  ed448: 'Ed448',
  curve448: 'Curve448',
  nistP256: 'NIST P-256',
  nistP384: 'NIST P-384',
  nistP521: 'NIST P-521',
  brainpoolP256r1: 'Brainpool P-256',
  brainpoolP384r1: 'Brainpool P-384',
  brainpoolP512r1: 'Brainpool P-512',
  secp256k1: 'secp256k1',
};
const ALGORITHMS: Record<string, string> = {
  rsaEncryptSign: 'RSA',
  rsaEncrypt: 'RSA',
  rsaSign: 'RSA',
  dsa: 'DSA',
  elgamal: 'ElGamal',
  ed25519: 'Ed25519',
  ed448: 'Ed448',
  x25519: 'X25519',
  x448: 'X448',
};

export function keyTypeName(algorithm: string): string {
  const curve = /\(([^)]+)\)$/.exec(algorithm)?.[1];
  if (curve) return CURVES[curve] ?? curve;
  const [name, bits] = algorithm.split(' ');
  const known = ALGORITHMS[name];
  if (!known) return algorithm;
  return bits ? `${known} ${bits}` : known;
}
