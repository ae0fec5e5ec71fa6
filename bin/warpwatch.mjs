#!/usr/bin/env node
// Runs the TypeScript CLI from source: tsx registers its ESM loader, then the entry point loads.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv);
