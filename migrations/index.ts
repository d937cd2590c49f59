import { InitialSchema1763780000000 } from './1763780000000-InitialSchema.js';
import { Workspace1763900000000 } from './1763900000000-Workspace.js';
import { Embedding1764000000000 } from './1764000000000-Embedding.js';

/** Every migration, in order. Listed explicitly: ESM builds cannot rely on globbing. */
export const MIGRATIONS = [InitialSchema1763780000000, Workspace1763900000000, Embedding1764000000000];
