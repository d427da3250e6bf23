/**
 * `npm run sdk:generate`: builds the app on a throwaway in-memory database, takes its OpenAPI document
 * and writes the SDK's types (sdk/src/schema.ts) with openapi-typescript.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openMemoryDatabase } from '../src/db/database.ts';
import { buildServices } from '../src/services.ts';
import { SDK_TYPES_FILE, sdkTypes } from './sdk-types.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sbgen-'));
const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', BOOTSTRAP: 'false', JWT_SECRET: 'generate-sdk-types-0123456789abcdef', ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') });
const database = await openMemoryDatabase(dir, 2);
const services = await buildServices(config, database, { startQueue: false });
const app = await buildApp(services);
try {
  fs.writeFileSync(SDK_TYPES_FILE, await sdkTypes(app.swagger()));
  console.log(`written ${SDK_TYPES_FILE.pathname}`);
} finally {
  await app.close();
  await services.close();
  await database.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
