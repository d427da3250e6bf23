import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes a numbered SQL migration for every schema change.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/*.ts',
  out: './migrations',
});
