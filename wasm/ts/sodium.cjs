// libsodium (sumo build) for ristretto255, loaded through its CommonJS build:
// the ESM build of libsodium-wrappers-sumo 0.7.16 imports ./libsodium-sumo.mjs,
// a file the package does not ship (jedisct1/libsodium.js#386), so neither
// Node nor webpack can load it. Node and webpack both load this file as CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
module.exports = require('libsodium-wrappers-sumo');
