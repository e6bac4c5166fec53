// Per-account bounds of the remote index (docs/remote-search.md#quotas): what one
// account may store and ask, so no account grows the store without bound or
// takes the provider's time from others. Request sizes are bounded by
// protocol/remote-search.ts (REQUEST_LIMITS, BODY_LIMITS).

export interface RemoteIndexLimits {
  /** Requests of any kind per account per minute (counted in the store, across instances). */
  requestsPerMinute: number;
  /** Indexed messages per account. */
  maxDocs: number;
  /** Stored entries per account, padding included (bytes each: bench remote-search, provider_bytes_per_entry). */
  maxEntries: number;
  /** Updates since the last snapshot; past it an update is refused until a device compacts. */
  maxDeltas: number;
  /** Bytes of sealed deltas since the last snapshot; likewise. */
  maxDeltaBytes: number;
  /** Deltas worth at least this many bytes (and half the snapshot) make the provider ask for a compaction. */
  compactAfterBytes: number;
}

export const REMOTE_INDEX_DEFAULTS: RemoteIndexLimits = {
  requestsPerMinute: 600,
  maxDocs: 1_000_000,
  // 1M messages at the median's 64 padded entries; a 200,000-message mailbox needs about 26M.
  maxEntries: 64_000_000,
  maxDeltas: 2048,
  maxDeltaBytes: 32 * 1024 * 1024,
  compactAfterBytes: 64 * 1024,
};

export const REMOTE_INDEX_RANGES: Record<keyof RemoteIndexLimits, readonly [number, number]> = {
  requestsPerMinute: [1, 1_000_000],
  maxDocs: [1, 100_000_000],
  maxEntries: [16, 10_000_000_000],
  maxDeltas: [1, 8192],
  maxDeltaBytes: [1024, 1 << 30],
  compactAfterBytes: [1024, 1 << 30],
};

/** The defaults with the configuration's `remoteIndex` object, each checked against its range; throws naming the first bad one. */
export function remoteIndexLimits(overrides: unknown = {}): RemoteIndexLimits {
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))
    throw new Error('config: remoteIndex must be an object of limits');
  const out = { ...REMOTE_INDEX_DEFAULTS };
  for (const [k, v] of Object.entries(overrides)) {
    const key = k as keyof RemoteIndexLimits;
    const range = REMOTE_INDEX_RANGES[key];
    if (!range) throw new Error(`config: remoteIndex.${k} is not a remote index limit`);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < range[0] || v > range[1])
      throw new Error(`config: remoteIndex.${k} must be an integer in ${range[0]}..${range[1]}`);
    out[key] = v;
  }
  return out;
}
