import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// The control panel: built into dist/web and served by the service at /app/ (src/http/routes/panel.ts).
export default defineConfig({
  root: here,
  base: '/app/',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2020',
    // The CSP allows no inline script: keep the module preload polyfill in a file of its own.
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
