/**
 * `import.meta.letkiteBundle`: which bundle a module was built into ("cli", "agent"), set by tools/build/build.mjs
 * through esbuild's `define`; undefined when the module runs from source (tsx, vitest). A bundled module's run-time
 * files (migrations, wasm, helpers) sit next to the bundle instead of where the source tree keeps them.
 */
interface ImportMeta {
  readonly letkiteBundle?: 'cli' | 'agent';
}
