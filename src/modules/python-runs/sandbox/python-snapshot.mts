/**
 * Makes the memory snapshot Python children start from: Pyodide loaded, the driver compiled and
 * the common modules imported (python-driver.mts), written to a file. PythonSandbox runs it once
 * when its pool starts, as a plain child with an empty environment: it runs only this service's
 * code and Pyodide's, never a job's, so what it captures holds nothing of a tenant or of the host's
 * environment. A child then starts in a third of a second instead of two and more.
 *
 * argv: <Pyodide's directory, with a trailing slash> <the file to write>
 */
import fs from 'node:fs';
import { prepared } from './python-driver.mjs';

const [indexURL, file] = process.argv.slice(2);
if (!indexURL || !file) throw new Error("usage: python-snapshot.mjs <Pyodide's directory> <file>");
const snapshot = await prepared(indexURL);
// Whole or not at all: a child never reads half a snapshot.
fs.writeFileSync(`${file}.partial`, snapshot, { mode: 0o600 });
fs.renameSync(`${file}.partial`, file);
