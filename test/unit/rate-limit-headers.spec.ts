import express from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import request from 'supertest';
import { hashToken } from '../../src/core/auth/token.js';
import { requestLimits } from '../../src/core/rate-limit/rate-limit.js';

/**
 * The request limit answers what express-rate-limit (draft-8 headers, which it used before the
 * limits were counted in one step) answers for the same requests: statuses, RateLimit,
 * RateLimit-Policy and Retry-After, with and without a token, over several window lengths.
 */
describe('request limits: the headers of express-rate-limit', () => {
  const key = (req: express.Request) => {
    const token = /^(?:Bearer|Api-Key) +(\S+)/i.exec(req.headers.authorization ?? '')?.[1];
    return token ? `t:${hashToken(token)}` : `ip:${ipKeyGenerator(req.ip ?? '')}`;
  };
  const ok = (_req: express.Request, res: express.Response) => void res.json({ ok: true });

  it.each([5_000, 60_000, 2 * 3_600_000, 2 * 86_400_000])('window of %i ms', async (windowMs) => {
    const reference = express()
      .use(
        rateLimit({
          windowMs,
          limit: 3,
          standardHeaders: 'draft-8',
          legacyHeaders: false,
          keyGenerator: key,
          handler: (_req, res) => void res.status(429).json({ limited: true }),
        }),
      )
      .get('/', ok);
    const ours = express()
      .use(requestLimits({ windowMs, failureMax: 0, limit: 3, redis: null, prefix: 'test' }))
      .get('/', ok);
    for (const auth of ['Bearer pat_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH', undefined]) {
      for (let i = 0; i < 5; i++) {
        const send = (app: express.Express) => {
          const r = request(app).get('/');
          return auth ? r.set('Authorization', auth) : r;
        };
        const [a, b] = await Promise.all([send(reference), send(ours)]);
        expect(b.status).toBe(a.status);
        for (const header of ['ratelimit', 'ratelimit-policy', 'retry-after']) {
          expect([header, b.headers[header]]).toEqual([header, a.headers[header]]);
        }
      }
    }
  });
});
