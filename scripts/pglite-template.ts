/**
 * `npm run pglite-template`: makes pglite/initdb-template.tar.br (and .json) with the installed
 * PGlite: its initdb in memory, the data folder dumped as a tar and brotli-compressed. Run it after
 * upgrading @electric-sql/pglite (test/db/pglite-template.test.ts fails until then; meanwhile new
 * folders are initialised by initdb, which takes more memory and time). See src/db/pglite-template.ts.
 */
import { writeFileSync } from 'node:fs';
import { constants, brotliCompressSync } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_TEMPLATE_FILE, PGLITE_TEMPLATE_INFO, installedPgliteVersion, type PgliteTemplateInfo } from '../src/db/pglite-template.js';

const db = await PGlite.create('memory://');
const tar = new Uint8Array(await (await db.dumpDataDir('none')).arrayBuffer());
await db.close();
const packed = brotliCompressSync(tar, {
  params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24, [constants.BROTLI_PARAM_SIZE_HINT]: tar.length },
});
writeFileSync(PGLITE_TEMPLATE_FILE, packed);
const info: PgliteTemplateInfo = { pglite: installedPgliteVersion() };
writeFileSync(PGLITE_TEMPLATE_INFO, `${JSON.stringify(info, null, 2)}\n`);
process.stdout.write(`${PGLITE_TEMPLATE_FILE}: ${packed.length} bytes (tar ${tar.length} bytes), PGlite ${info.pglite}\n`);
