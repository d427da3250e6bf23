import { defaultClientConditions, defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built into dist/ by the root `prepare` script (npm install) and served by the server at /.
// `npm run dev -w console` proxies /api to a server on :3000 for work on the pages.
export default defineConfig({
  plugins: [react()],
  // The SDK from its TypeScript sources (its exports map's `@switchboard/source`), not its published build.
  resolve: { conditions: ['@switchboard/source', ...defaultClientConditions] },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 1000 },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
