import type { Response } from 'express';
import { errorsOf } from '../../../core/errors/api-error.js';
import type { ErrorRenderer } from '../../../core/http/route-behaviour.js';
import { AUTH_REALM } from '../../../core/http/www-authenticate.js';

/** The codes git's routes answer besides the access rule's and the deployment's. */
export const gitHttpError = errorsOf(
  'validation_failed',
  'unsupported_media_type',
  'payload_too_large',
  'git_push_not_supported',
  'git_fetch_limit_reached',
  'git_fetch_busy',
  'git_fetch_timeout',
);

/** git's own client, libgit2 (`git/2.0 (libgit2 …)`) and JGit name themselves so. */
const GIT_CLIENT = /^(git|JGit)\//i;

/**
 * Errors of the git routes. Other clients get the one error shape. A git client shows only a
 * `text/plain` body of an error (`remote: <line>`), so it gets the message as text; and it sends
 * its credential only after a challenge it can answer, so a 401 also challenges for Basic.
 */
export const renderGitError: ErrorRenderer = (res: Response, body) => {
  if (!GIT_CLIENT.test(res.req.headers['user-agent'] ?? '')) {
    res.status(body.statusCode).json(body);
    return;
  }
  if (body.statusCode === 401) {
    const bearer = res.getHeader('WWW-Authenticate');
    res.setHeader('WWW-Authenticate', [`Basic realm="${AUTH_REALM}"`, ...(bearer ? [String(bearer)] : [])]);
  }
  const lines = Array.isArray(body.message) ? body.message : [body.message];
  res
    .status(body.statusCode)
    .type('text/plain; charset=utf-8')
    .send(`${lines.join('\n')}\n`);
};
