// Import boundaries between areas, as ESLint flat-config blocks: what code
// may import depends on where it runs (browser, provider, Node client, or
// anywhere). Node built-ins go through no-restricted-imports; imports of
// another area are checked on the resolved path, so `../data/x.js` from
// models/features counts as models/data whatever the ../ depth.
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const NO_NODE = {
  paths: builtinModules.map((name) => ({ name, message: 'Node built-ins are not available here.' })),
  patterns: [{ group: ['node:*'], message: 'Node built-ins are not available here.' }],
};

/** boundaries/no-area-import: options { areas: [{ dir, message }] }, dir relative to the repository root. */
const noAreaImport = {
  meta: {
    type: 'problem',
    docs: { description: 'forbid relative imports that reach into the given folders' },
    schema: [{ type: 'object', properties: { areas: { type: 'array' } }, additionalProperties: false }],
    messages: { forbidden: '{{message}}' },
  },
  create(context) {
    const areas = context.options[0]?.areas ?? [];
    const check = (node) => {
      const spec = node.source?.value;
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path
        .relative(root, path.resolve(path.dirname(context.filename), spec))
        .split(path.sep)
        .join('/');
      const hit = areas.find((a) => target === a.dir || target.startsWith(`${a.dir}/`));
      if (hit) context.report({ node: node.source, messageId: 'forbidden', data: { message: hit.message } });
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

const TESTS = ['**/test/**'];
/** Code that runs in browsers, workers and Node alike. */
const ENV_FREE = ['protocol', 'wasm/ts', 'models/features', 'models/plain', 'mail', 'client/core'];

/** One block per group of files; a later block naming the same rule for the same files would replace it. */
function block(dirs, { ignores = [], node = false, areas = [] }) {
  return {
    files: dirs.map((d) => `${d}/**`),
    ignores,
    plugins: { boundaries: { rules: { 'no-area-import': noAreaImport } } },
    rules: {
      ...(node ? { 'no-restricted-imports': ['error', NO_NODE] } : {}),
      'boundaries/no-area-import': ['error', { areas: areas.map(([dir, message]) => ({ dir, message })) }],
    },
  };
}

export default [
  block(['extension'], {
    ignores: TESTS, // extension tests run in Node
    node: true,
    areas: [
      ['provider-server', 'The extension cannot import provider-server code.'],
      ['client/node', 'The extension cannot import the Node client (shared client code is in client/core).'],
    ],
  }),
  // The provider must never run code that sees what clients see.
  block(['provider-server'], {
    areas: [
      ['extension', 'provider-server cannot import extension code.'],
      ['client', 'provider-server cannot import client code (shared code is in mail/ or protocol/).'],
    ],
  }),
  block(ENV_FREE, {
    ignores: TESTS,
    node: true,
    areas: ['extension', 'provider-server', 'client/node', 'models/data'].map((dir) => [
      dir,
      `Environment-free code cannot import ${dir}/ (Node- or browser-only).`,
    ]),
  }),
];
