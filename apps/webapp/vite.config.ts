import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into dist/ and served by the gateway (apps/gateway/src/http/web-app.ts) under a strict CSP: no inline
// scripts or styles, so the build emits only files.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsInlineLimit: 0, modulePreload: { polyfill: false } },
  server: { proxy: { '/api': 'http://localhost:8787', '/mcp': 'http://localhost:8787' } },
});
