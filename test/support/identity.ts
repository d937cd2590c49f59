import { newAccount, newUser, startApp, type Actor, type TestApp } from './app.js';
import { Factories } from './factories.js';

/** What the identity test files (users, roles, groups, API keys) start from. */
export interface IdentityApp {
  t: TestApp;
  /** A console user of `acme` with the built-in Viewer role (reads, manages nothing). */
  viewer: Actor;
  /** The admin of a second account, `globex`: its resources must stay invisible to `acme`. */
  other: Actor;
  make: Factories;
}

/**
 * The application the identity files share, one per file: the HTTP app with the `acme` admin, a
 * Viewer of `acme` and the admin of another account. Call it in `beforeAll`; close `t` in `afterAll`.
 */
export async function setupIdentityApp(env: Record<string, string | undefined> = {}): Promise<IdentityApp> {
  const t = await startApp(env);
  try {
    const [viewer, other] = await Promise.all([
      newUser(t, t.admin, { defaultRoles: ['Viewer'] }),
      newAccount(t, 'globex'),
    ]);
    return { t, viewer, other, make: new Factories(t.app, t.admin) };
  } catch (err) {
    await t.close();
    throw err;
  }
}
