"""The plaintext model file (provider-secret), format version 1.

Layout (all integers little-endian):

    magic      8 bytes  b"PMFPLAIN"
    version    u32      1
    hlen       u32      length of the header in bytes
    header     hlen     UTF-8 JSON object (see README.md, "Plaintext model format")
    padding    0..7     zero bytes up to a multiple of 8
    weights    (N+1)*B  int32, row-major; row 0 is the bias row (threshold folded in)
    float      (N+1)*B  float32, same layout, only if header["floatWeights"] is true

header["bodySha256"] is the SHA-256 of everything after the padding.
"""

import hashlib
import json
import os

import numpy as np

MAGIC = b"PMFPLAIN"
VERSION = 1


def write_model(path, header, weights, float_weights=None):
    weights = np.ascontiguousarray(weights, dtype="<i4")
    n_rows, b = weights.shape
    if n_rows != header["N"] + 1 or b != header["B"]:
        raise ValueError(f"weights are {n_rows}x{b}, header says {header['N'] + 1}x{header['B']}")
    body = weights.tobytes()
    if float_weights is not None:
        body += np.ascontiguousarray(float_weights, dtype="<f4").tobytes()
    header = {
        **header,
        "format": "pmf-plain-model",
        "formatVersion": VERSION,
        "floatWeights": float_weights is not None,
        "bodySha256": hashlib.sha256(body).hexdigest(),
    }
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    pad = b"\0" * (-(16 + len(head)) % 8)
    # Owner-only (the weights are the provider's secret), written to a temporary
    # file and renamed so a failed run never leaves a truncated model behind.
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + VERSION.to_bytes(4, "little") + len(head).to_bytes(4, "little"))
            f.write(head + pad + body)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def read_model(path):
    """Returns (header, int32 weights (N+1)xB, float32 weights or None)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a plaintext model (bad magic)")
    version = int.from_bytes(data[8:12], "little")
    if version != VERSION:
        raise ValueError(f"{path}: unsupported format version {version}")
    hlen = int.from_bytes(data[12:16], "little")
    header = json.loads(data[16 : 16 + hlen])
    start = 16 + hlen + (-(16 + hlen) % 8)
    body = data[start:]
    if hashlib.sha256(body).hexdigest() != header["bodySha256"]:
        raise ValueError(f"{path}: body does not match its SHA-256 (corrupt file)")
    shape = (header["N"] + 1, header["B"])
    count = shape[0] * shape[1]
    expected = count * (8 if header["floatWeights"] else 4)
    if len(body) != expected:
        raise ValueError(f"{path}: body is {len(body)} bytes, expected {expected}")
    weights = np.frombuffer(body, dtype="<i4", count=count).reshape(shape)
    floats = None
    if header["floatWeights"]:
        floats = np.frombuffer(body, dtype="<f4", count=count, offset=count * 4).reshape(shape)
    return header, weights, floats
