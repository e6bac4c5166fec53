// One build, three unpacked extensions: dist/chromium (MV3, service worker),
// dist/firefox (MV3, event page) and dist/thunderbird (MailExtension, plus
// dist/pmf-thunderbird.xpi). The bundles are identical; only manifest.json
// differs per target, derived from the root manifest.json by targetManifest().
// The release (scripts/release.ts) runs this same build with
// --env outDir=DIR --env witnessPolicy=FILE and packages DIR's targets itself.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import CopyPlugin from 'copy-webpack-plugin';
import MinimizerPlugin from 'minimizer-webpack-plugin';
import webpack from 'webpack';

const root = path.dirname(fileURLToPath(import.meta.url));
// The one version number: package.json's, written into every manifest.
const { version: VERSION } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const GECKO_ID = 'private-mail-functions@pmf.example';

const entries = {
  background: './extension/background/background.ts',
  content: './extension/content/content.ts',
  options: './extension/options/options.ts',
  popup: './extension/popup/popup.ts',
  'tb-message': './extension/thunderbird/message-popup.ts',
  'tb-banner': './extension/thunderbird/message-banner.ts',
  viewer: './extension/viewer/viewer.ts',
  welcome: './extension/welcome/welcome.ts',
  search: './extension/search/search.ts',
  // Chromium only: hosts the WASM worker its service worker cannot start.
  offscreen: './extension/private/offscreen.ts',
};

/** Rewrites the base (Chromium MV3) manifest for one target. */
export function targetManifest(base, target) {
  const { manifest_version, name, ...rest } = structuredClone(base);
  const m = { manifest_version, name, version: VERSION, ...rest };
  if (target === 'chromium') return m;
  // Gecko has no offscreen documents: its background page starts the worker.
  m.permissions = m.permissions.filter((p) => p !== 'offscreen');
  // Firefox and Thunderbird have no extension service workers: event page.
  m.background = { scripts: ['background.js'] };
  m.browser_specific_settings =
    target === 'firefox'
      ? {
          // 140 ESR: first with the data-collection consent AMO asks for.
          gecko: { id: GECKO_ID, strict_min_version: '140.0', data_collection_permissions: { required: ['none'] } },
          gecko_android: { strict_min_version: '142.0' },
        }
      : // Thunderbird 128 ESR: messages.getFull/getRaw decrypt since 125.
        { gecko: { id: GECKO_ID, strict_min_version: '128.0' } };
  if (target === 'thunderbird') {
    // No webmail pages in Thunderbird (so no viewer frame in them): its own message pane is read through
    // messages/messageDisplay (messagesRead) and shown in a display-action popup.
    // host_permissions stay: the private spam check's worker fetches the provider's packages cross-origin
    // (loopback only, as in the other builds).
    delete m.web_accessible_resources;
    // accountsRead: the new-mail, move and delete events (index mail as it changes);
    // scripting (in every build, for the webmail sites' content script): in Thunderbird,
    // browser.scripting.messageDisplay exists only with it (the banner in the message pane);
    // messagesUpdate, messagesMove: a spam verdict flags the message junk and moves it to Junk (thunderbird/junk.ts).
    m.permissions = [
      ...m.permissions.filter((p) => p !== 'unlimitedStorage'),
      'messagesRead',
      'accountsRead',
      'messagesUpdate',
      'messagesMove',
    ];
    m.message_display_action = { default_title: '__MSG_tb_status_title__', default_popup: 'tb-message.html' };
  }
  return m;
}

/** After each emit: write the per-target manifests and (unless a release packages them itself) the Thunderbird XPI. */
class TargetsPlugin {
  constructor(dist, { xpi }) {
    this.dist = dist;
    this.xpi = xpi;
  }

  apply(compiler) {
    const { dist } = this;
    compiler.hooks.afterEmit.tapPromise('TargetsPlugin', async () => {
      const base = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8'));
      const built = path.join(dist, 'chromium');
      for (const target of ['chromium', 'firefox', 'thunderbird']) {
        const dir = path.join(dist, target);
        if (target !== 'chromium') {
          fs.rmSync(dir, { recursive: true, force: true });
          fs.cpSync(built, dir, { recursive: true });
        }
        fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(targetManifest(base, target), null, 2));
      }
      if (!this.xpi) return;
      const { cmd } = (await import('web-ext')).default;
      await cmd.build(
        {
          sourceDir: path.join(dist, 'thunderbird'),
          artifactsDir: dist,
          filename: 'pmf-thunderbird.xpi',
          overwriteDest: true,
        },
        { shouldExitProgram: false },
      );
    });
  }
}

/**
 * The witness policy a release builds in (protocol/witness-policy.ts reads
 * PMF_RELEASE_WITNESS_POLICY); scripts/release.ts has checked the file.
 */
function witnessPolicyDefine(file) {
  if (!file) return [];
  const policy = JSON.parse(fs.readFileSync(file, 'utf8'));
  return [new webpack.DefinePlugin({ PMF_RELEASE_WITNESS_POLICY: JSON.stringify(policy) })];
}

const distDir = (env) => (env.outDir ? path.resolve(env.outDir) : path.join(root, 'dist'));

export default (env = {}, argv = {}) => ({
  mode: argv.mode ?? 'production',
  context: root,
  entry: entries,
  // Source maps as separate files: MV3 CSP forbids eval-based ones.
  devtool: argv.mode === 'development' ? 'source-map' : false,
  output: {
    path: path.join(distDir(env), 'chromium'),
    filename: '[name].js',
    publicPath: '/',
    // The service worker cannot import() or importScripts() after start-up,
    // so every entry is one self-contained file.
    asyncChunks: false,
    clean: true,
    // libsodium's UMD wrappers need the global object: take globalThis (every
    // target has it) rather than webpack's fallback shim, a `new Function`
    // that the add-on stores' lint refuses.
    environment: { globalThis: true },
  },
  target: 'web',
  resolve: {
    extensions: ['.ts', '.js'],
    // Module ids are hashes of paths relative to this folder: a symlinked
    // node_modules (worktrees share one) must not put its real location, and
    // with it the build directory, into the bundles.
    symlinks: false,
    // Our TypeScript imports local files with a .js suffix (ESM style).
    extensionAlias: { '.js': ['.ts', '.js'] },
    // pmf_core.js carries Node branches (require('fs') etc.) that never run here.
    fallback: { fs: false, path: false, crypto: false },
  },
  module: {
    rules: [
      {
        test: /\.ts$/,
        loader: 'ts-loader',
        exclude: /node_modules/,
        options: { transpileOnly: true, compilerOptions: { noEmit: false, sourceMap: true } },
      },
    ],
  },
  node: { __filename: false, __dirname: false, global: false },
  performance: { hints: false },
  optimization: {
    splitChunks: false,
    runtimeChunk: false,
    // Module ids are their paths relative to the root (no machine path; see
    // resolve.symlinks). Hashed ('deterministic') ids resolve collisions in
    // an order that differed between a clone and the unpacked source archive
    // of the same tree, so the release was not reproducible byte for byte.
    moduleIds: 'named',
    // esbuild minifies these 8 MB of bundles in seconds where terser takes
    // minutes, which keeps the release's twice-built reproducibility test short.
    minimizer: [new MinimizerPlugin({ minify: MinimizerPlugin.esbuildMinify })],
  },
  plugins: [
    new CopyPlugin({
      patterns: [
        { from: 'extension/**/*.html', to: '[name][ext]' },
        { from: 'extension/**/*.css', to: '[name][ext]' },
        // Every page's and the manifest's text, by language (extension/README.md, Translations).
        { from: 'extension/_locales', to: '_locales' },
        // The PNGs only: icon.svg is their source (scripts/release/icons.sh).
        { from: 'extension/icons/*.png', to: 'icons/[name][ext]' },
      ],
    }),
    new TargetsPlugin(distDir(env), { xpi: !env.outDir }),
    ...witnessPolicyDefine(env.witnessPolicy),
  ],
});
