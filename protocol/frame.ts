// The binary frame of the session protocol (docs/wire-formats.md#frame). One WebSocket
// binary message carries exactly one frame:
//
//   offset 0  u8   protocol version (PROTOCOL_VERSION)
//   offset 1  u8   message type (MESSAGE_TYPES)
//   offset 2  u32  request id, big-endian (chosen by the client, echoed back)
//   offset 6  u32  body length, big-endian
//   offset 10      body (layout per message type, see messages.ts)
//
// Every length is checked against the configured limit and the bytes actually
// present before anything is sliced or allocated.
import { ProtocolError } from './errors.js';
import { DEFAULT_MAX_FRAME_BYTES } from './limits.js';

export const PROTOCOL_VERSION = 1;
export const FRAME_HEADER_BYTES = 10;

export interface Frame {
  version: number;
  type: number;
  requestId: number;
  body: Uint8Array;
}

/** Parses one frame; `body` is a view into `data` (no copy). */
export function decodeFrame(data: Uint8Array, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Frame {
  if (data.length > maxFrameBytes) {
    throw new ProtocolError('frame_too_large', `frame of ${data.length} bytes exceeds the limit of ${maxFrameBytes}`);
  }
  if (data.length < FRAME_HEADER_BYTES) {
    throw new ProtocolError(
      'malformed_frame',
      `frame of ${data.length} bytes is shorter than the ${FRAME_HEADER_BYTES}-byte header`,
    );
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = view.getUint8(0);
  if (version !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      'unsupported_version',
      `frame version ${version} is not supported (expected ${PROTOCOL_VERSION})`,
    );
  }
  const bodyLength = view.getUint32(6);
  if (bodyLength !== data.length - FRAME_HEADER_BYTES) {
    throw new ProtocolError(
      'malformed_frame',
      `frame declares a ${bodyLength}-byte body but carries ${data.length - FRAME_HEADER_BYTES} bytes`,
    );
  }
  return { version, type: view.getUint8(1), requestId: view.getUint32(2), body: data.subarray(FRAME_HEADER_BYTES) };
}

export function encodeFrame(type: number, requestId: number, body: Uint8Array): Uint8Array {
  const out = newFrame(type, requestId, body.length);
  out.set(body, FRAME_HEADER_BYTES);
  return out;
}

/** A frame with its header written and a zeroed body of `bodyLength` bytes, for the caller to fill. */
export function newFrame(type: number, requestId: number, bodyLength: number): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER_BYTES + bodyLength);
  const view = new DataView(out.buffer);
  view.setUint8(0, PROTOCOL_VERSION);
  view.setUint8(1, type);
  view.setUint32(2, requestId >>> 0);
  view.setUint32(6, bodyLength);
  return out;
}

/** Reads the request id of a frame that may be otherwise malformed (0 if absent). */
export function peekRequestId(data: Uint8Array): number {
  if (data.length < 6) return 0;
  return new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(2);
}
