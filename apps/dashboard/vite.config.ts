import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into dist/ and served by the gateway at `/`; `vite` (dev) proxies the API to a gateway on :3000.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: { '/dashboard/api': 'http://localhost:3000' } },
});
