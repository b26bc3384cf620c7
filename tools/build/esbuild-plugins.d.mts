// Types for esbuild-plugins.mjs (test/build-plugins.test.ts imports it).
import type { Plugin } from 'esbuild';

export declare const protocolWithoutSideEffects: Plugin;
export declare const zodEnglishOnly: Plugin;
