import { InitialSchema1763780000000 } from './1763780000000-InitialSchema.js';

/** Every migration, in order. Listed explicitly: ESM builds cannot rely on globbing. */
export const MIGRATIONS = [InitialSchema1763780000000];
