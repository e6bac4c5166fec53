// Guards against calling Thunderbird APIs that do not exist for the add-on's
// manifest version or permissions (messageDisplay.getDisplayedMessage, for one,
// is MV2-only and the unit tests' fake did not know). Checks, against the
// schemas in the installed Thunderbird's omni.ja: every browser.* / messenger.*
// use in the extension sources, the ThunderbirdApi interface every
// Thunderbird-only call goes through, and the fake messenger the tests use.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
// @ts-expect-error webpack.config.js is plain JS without types
import { targetManifest } from '../../webpack.config.js';
import { fakeMessenger } from './fake-messenger.js';
import { ApiSchemas, THUNDERBIRD_OMNI } from './tb-schemas.js';

const extDir = path.resolve(import.meta.dirname, '..');
const base = JSON.parse(fs.readFileSync(path.join(extDir, '../manifest.json'), 'utf8'));
const manifest = targetManifest(base, 'thunderbird');
const installed = fs.existsSync(THUNDERBIRD_OMNI);
const skip = installed ? false : `Thunderbird is not installed (${THUNDERBIRD_OMNI}): run scripts/setup.sh`;
const schemas = installed ? ApiSchemas.fromOmni() : undefined;

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'test' ? [] : sources(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

/** Dotted property chains rooted at `browser`, `messenger` or `chrome`, e.g. "tabs.query". */
function apiUses(file: string): { path: string; where: string }[] {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: { path: string; where: string }[] = [];
  const visit = (node: ts.Node) => {
    // Only the outermost chain: browser.storage.session.get, not its prefixes.
    if (ts.isPropertyAccessExpression(node) && !ts.isPropertyAccessExpression(node.parent)) {
      const parts: string[] = [];
      let e: ts.Expression = node;
      while (ts.isPropertyAccessExpression(e)) {
        parts.unshift(e.name.text);
        e = e.expression;
      }
      if (ts.isIdentifier(e) && ['browser', 'messenger', 'chrome'].includes(e.text) && parts.length >= 2) {
        const { line } = sf.getLineAndCharacterOfPosition(node.getStart());
        out.push({ path: parts.join('.'), where: `${path.relative(extDir, file)}:${line + 1}` });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Member paths declared by the ThunderbirdApi interface (nested type literals). */
function interfacePaths(file: string, name: string): string[] {
  const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const decl = sf.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === name,
  );
  assert.ok(decl, `${name} not found in ${file}`);
  const walk = (members: ts.NodeArray<ts.TypeElement>, prefix: string[]): string[] =>
    members.flatMap((m) => {
      const key = [...prefix, (m.name as ts.Identifier).text];
      const type = ts.isPropertySignature(m) ? m.type : undefined;
      return type && ts.isTypeLiteralNode(type) ? walk(type.members, key) : [key.join('.')];
    });
  return walk(decl.members, []);
}

/** Leaf paths of a plain object of namespaces and functions. */
function objectPaths(obj: object, prefix: string[] = []): string[] {
  return Object.entries(obj).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null && !('addListener' in v)
      ? objectPaths(v, [...prefix, k])
      : [[...prefix, k].join('.')],
  );
}

/**
 * Calls made only in a Chromium service worker, which cannot start a Worker:
 * privateWorker() (private/worker-host.ts) opens an offscreen document only
 * when `Worker` is missing, never in Thunderbird's background page.
 */
const CHROMIUM_ONLY = new Set(['offscreen.createDocument', 'offscreen.closeDocument']);

function problems(paths: { path: string; where: string }[]): string[] {
  return paths.flatMap(({ path: p, where }) => {
    const why = schemas!.problem(p, manifest);
    return why ? [`${where}: ${p}: ${why}`] : [];
  });
}

describe(`Thunderbird API schemas (${THUNDERBIRD_OMNI})`, { skip }, () => {
  it('reads the MailExtension schemas and knows what MV3 removed', () => {
    assert.equal(schemas!.problem('messageDisplay.getDisplayedMessages', manifest), undefined);
    assert.match(schemas!.problem('messageDisplay.getDisplayedMessage', manifest) ?? '', /up to manifest version 2/);
    assert.match(schemas!.problem('messages.noSuchThing', manifest) ?? '', /does not exist/);
    assert.equal(schemas!.problem('messages.move', manifest), undefined);
    const noMove = { ...manifest, permissions: manifest.permissions.filter((p: string) => p !== 'messagesMove') };
    assert.match(schemas!.problem('messages.move', noMove) ?? '', /permission/);
    const noScripting = { ...manifest, permissions: manifest.permissions.filter((p: string) => p !== 'scripting') };
    assert.match(
      schemas!.problem('scripting.messageDisplay.registerScripts', noScripting) ?? '',
      /permission scripting/,
      'a nested namespace needs its parent namespace',
    );
  });

  it('every browser.* / messenger.* call in the extension exists for its Thunderbird manifest', () => {
    const uses = sources(extDir).flatMap(apiUses);
    assert.ok(uses.length > 10, 'the scanner finds the API calls');
    const onThunderbird = uses.filter((u) => !CHROMIUM_ONLY.has(u.path));
    assert.equal(uses.length - onThunderbird.length, CHROMIUM_ONLY.size, 'each Chromium-only call is still made once');
    assert.deepEqual(problems(onThunderbird), []);
  });

  it('every member of ThunderbirdApi (the Thunderbird-only calls) exists for the manifest', () => {
    const file = path.join(extDir, 'thunderbird/api.ts');
    const paths = interfacePaths(file, 'ThunderbirdApi').map((p) => ({ path: p, where: 'thunderbird/api.ts' }));
    assert.ok(paths.some((p) => p.path === 'messageDisplay.getDisplayedMessages'));
    assert.deepEqual(problems(paths), []);
  });

  it("the tests' fake messenger offers only real APIs", () => {
    const paths = objectPaths(fakeMessenger({}).api).map((p) => ({ path: p, where: 'test/fake-messenger.ts' }));
    assert.deepEqual(problems(paths), []);
  });
});
