// Reads the WebExtension/MailExtension API schemas that the installed
// Thunderbird ships in its omni.ja (a zip), so tests can check the add-on's
// API calls against the real API instead of a hand-written fake.
import fs from 'node:fs';
import zlib from 'node:zlib';

export const THUNDERBIRD_OMNI = process.env.PMF_THUNDERBIRD_OMNI ?? '/usr/lib/thunderbird/omni.ja';
const SCHEMA_DIRS = /^chrome\/(messenger\/content\/messenger|toolkit\/content\/extensions)\/schemas\/[^/]+\.json$/;

/** The entries of a zip whose names match, inflated. Enough for omni.ja (stored or deflated). */
function readZip(file: string, wanted: RegExp): Map<string, Buffer> {
  const zip = fs.readFileSync(file);
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error(`${file} is not a zip file`);
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(p + 10);
    const size = zip.readUInt32LE(p + 20);
    const [nameLen, extraLen, commentLen] = [28, 30, 32].map((o) => zip.readUInt16LE(p + o));
    const local = zip.readUInt32LE(p + 42);
    const name = zip.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (!wanted.test(name)) continue;
    const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(start, start + size);
    out.set(name, method === 0 ? Buffer.from(data) : zlib.inflateRawSync(data));
  }
  return out;
}

interface Restricted {
  min_manifest_version?: number;
  max_manifest_version?: number;
  permissions?: string[];
  unsupported?: boolean;
}
interface SchemaNamespace extends Restricted {
  namespace: string;
  functions?: (Restricted & { name: string })[];
  events?: (Restricted & { name: string })[];
  properties?: Record<string, Restricted>;
}

/** A member of an API namespace, with what restricts it (its own and its namespace's). */
export interface ApiMember {
  path: string;
  kind: 'function' | 'event' | 'property';
  restrictions: Restricted[];
}

export class ApiSchemas {
  private constructor(
    readonly members: Map<string, ApiMember[]>,
    /** Namespace → its own restrictions (a nested one, e.g. scripting.messageDisplay, also gets its parents'). */
    readonly namespaces: Map<string, Restricted>,
  ) {}

  static fromOmni(file = THUNDERBIRD_OMNI): ApiSchemas {
    const members = new Map<string, ApiMember[]>();
    const namespaces = new Map<string, Restricted>();
    for (const buf of readZip(file, SCHEMA_DIRS).values()) {
      // Mozilla's schema files open with a licence in // comments.
      const json = buf.toString('utf8').replace(/^\s*\/\/.*$/gm, '');
      for (const ns of JSON.parse(json) as SchemaNamespace[]) {
        if (ns.namespace === 'manifest') continue;
        namespaces.set(ns.namespace, ns);
        const add = (name: string, kind: ApiMember['kind'], own: Restricted) => {
          const path = `${ns.namespace}.${name}`;
          // A name can appear once per manifest version (e.g. messages.list for MV2 and MV3).
          members.set(path, [...(members.get(path) ?? []), { path, kind, restrictions: [ns, own] }]);
        };
        for (const f of ns.functions ?? []) add(f.name, 'function', f);
        for (const e of ns.events ?? []) add(e.name, 'event', e);
        for (const [name, prop] of Object.entries(ns.properties ?? {})) add(name, 'property', prop);
      }
    }
    return new ApiSchemas(members, namespaces);
  }

  /**
   * Why `path` (e.g. "messageDisplay.getDisplayedMessages", "storage.session.get")
   * cannot be used by an add-on with this manifest, or undefined if it can.
   * The longest known namespace prefix names the namespace; the next part the member.
   */
  problem(path: string, manifest: { manifest_version: number; permissions?: string[] }): string | undefined {
    const parts = path.split('.');
    let n = parts.length - 1;
    while (n > 0 && !this.namespaces.has(parts.slice(0, n).join('.'))) n--;
    if (n === 0) return `no API namespace "${parts[0]}"`;
    const member = parts.slice(0, n + 1).join('.');
    const variants = this.members.get(member);
    if (!variants) return `"${member}" does not exist`;
    // browser.scripting.messageDisplay exists only with the permissions of browser.scripting too.
    const parents = parts
      .slice(0, n - 1)
      .map((_, i) => this.namespaces.get(parts.slice(0, i + 1).join('.')))
      .filter((r): r is Restricted => r !== undefined);
    const reasons = variants.map((v) => blocked([...parents, ...v.restrictions], manifest));
    return reasons.includes(undefined) ? undefined : `"${member}": ${reasons.join('; ')}`;
  }
}

function blocked(
  restrictions: Restricted[],
  manifest: { manifest_version: number; permissions?: string[] } & Record<string, unknown>,
): string | undefined {
  const mv = manifest.manifest_version;
  for (const r of restrictions) {
    if (r.unsupported) return 'unsupported';
    if (r.max_manifest_version !== undefined && mv > r.max_manifest_version)
      return `only up to manifest version ${r.max_manifest_version}`;
    if (r.min_manifest_version !== undefined && mv < r.min_manifest_version)
      return `only from manifest version ${r.min_manifest_version}`;
    // Strict reading: every listed permission; "manifest:key" means a manifest key.
    const has = (p: string) =>
      p.startsWith('manifest:') ? p.slice(9) in manifest : (manifest.permissions ?? []).includes(p);
    const missing = (r.permissions ?? []).filter((p) => !has(p));
    if (missing.length) return `needs the permission ${missing.join(' and ')}`;
  }
  return undefined;
}
