import { defineConfig } from 'drizzle-kit';

// Migrations are generated from the schema with `npm run db:generate` (drizzle-kit generate) and
// applied at start by src/db/migrate.ts on both Postgres and PGlite.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema.ts',
  out: './migrations',
});
