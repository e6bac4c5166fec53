// nodeSocket with hooks on the frames that pass, for tests that break
// connections at chosen protocol moments (fault-scenario.ts, topics-e2e).
import type { SocketFactory } from '../core/provider-session.js';
import { nodeSocket } from '../node/cli.js';

/** The message type of a frame (its second byte), or undefined for a non-binary one. */
export const frameType = (data: unknown): number | undefined =>
  data instanceof ArrayBuffer
    ? new Uint8Array(data)[1]
    : ArrayBuffer.isView(data)
      ? (data as Uint8Array)[1]
      : undefined;

export interface Taps {
  /** After a frame of this type left; `close` breaks the connection. */
  sent?(type: number | undefined, close: () => void): void;
  /** Before a frame of this type is delivered: true drops it and breaks the connection. */
  drop?(type: number | undefined): boolean;
}

export function tappedSocket(taps: Taps): SocketFactory {
  return (url) => {
    const ws = nodeSocket(url);
    const close = () => ws.close();
    return {
      get binaryType() {
        return ws.binaryType;
      },
      set binaryType(v: string) {
        ws.binaryType = v;
      },
      get readyState() {
        return ws.readyState;
      },
      send(data) {
        ws.send(data);
        taps.sent?.(frameType(data), close);
      },
      close: (code, reason) => ws.close(code, reason),
      addEventListener(type, listener) {
        if (type !== 'message') return ws.addEventListener(type, listener);
        ws.addEventListener('message', (ev) => {
          if (taps.drop?.(frameType(ev.data))) return close();
          listener(ev);
        });
      },
    };
  };
}
