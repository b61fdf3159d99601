// The package version, read once from package.json.
import { readFileSync } from 'node:fs';
import { PACKAGE_FILES } from './package-root.js';

export const VERSION: string = (JSON.parse(readFileSync(PACKAGE_FILES.manifest, 'utf8')) as { version: string }).version;
