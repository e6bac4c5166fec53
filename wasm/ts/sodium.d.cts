// Types of sodium.cjs: libsodium-wrappers-sumo's, as its typings declare them.
import * as sodium from 'libsodium-wrappers-sumo';
export = sodium;
