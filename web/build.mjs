// Bundles src/ into the Python package's assets, buzz_signer/web/ (generated, not in git):
// app.<hash>.js, page.<hash>.css, icon.<hash>.svg and manifest.json, which names them for
// the server (buzz_signer/relay/page.py). The hash in a name changes with the content, so the server
// can let browsers keep each file for good. `node build.mjs` (or `npm run build`).
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as esbuild from 'esbuild'

const here = path.dirname(fileURLToPath(import.meta.url))
const outdir = path.resolve(here, '..', 'buzz_signer', 'web')
const entries = { 'app.js': 'src/app.js', 'page.css': 'src/page.css', 'icon.svg': 'src/icon.svg' }

const result = await esbuild.build({
  absWorkingDir: here,
  entryPoints: Object.values(entries),
  outdir,
  entryNames: '[name].[hash]',
  bundle: true,
  loader: { '.svg': 'copy' },
  format: 'esm',
  target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
  minify: true,
  legalComments: 'eof',
  metafile: true,
  write: false,
  logLevel: 'warning',
})

// The output of each entry point, by the entry's logical name (app.js -> app.1a2b3c4d.js).
const manifest = {}
for (const [output, meta] of Object.entries(result.metafile.outputs)) {
  const logical = Object.keys(entries).find((name) => entries[name] === meta.entryPoint)
  if (logical) manifest[logical] = path.basename(output)
}

// Only this build's files are left in outdir, so the wheel never ships a stale bundle.
await mkdir(outdir, { recursive: true })
for (const name of await readdir(outdir)) await rm(path.join(outdir, name), { recursive: true })
for (const file of result.outputFiles) await writeFile(file.path, file.contents)
await writeFile(path.join(outdir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
console.log(`built ${Object.values(manifest).join(', ')} into ${path.relative(process.cwd(), outdir) || '.'}`)
