import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import pino from 'pino';
import { requestLogging } from '../../src/core/logging/request-logging.js';

/** A root logger writing JSON lines into `lines`, with the request serialiser the app uses. */
function rootLogger(level: string, lines: Array<Record<string, unknown>>) {
  return pino(
    {
      level,
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
}

function exchange() {
  const req = { id: 'r-1', method: 'GET', url: '/x' } as unknown as Request & { log: pino.Logger };
  const res = Object.assign(new EventEmitter(), { statusCode: 200 }) as unknown as Response & EventEmitter;
  return { req, res };
}

describe('requestLogging', () => {
  it('writes the closing line of pino-http, bound to the request', () => {
    const lines: Array<Record<string, unknown>> = [];
    const { req, res } = exchange();
    const next = jest.fn() as NextFunction;
    requestLogging(rootLogger('info', lines))(req, res, next);
    expect(next).toHaveBeenCalledTimes(1);
    req.log.warn('inside');
    res.emit('finish');
    res.emit('close'); // one closing line, whichever events follow
    expect(lines.map(({ time: _t, pid: _p, hostname: _h, responseTime: _r, ...rest }) => rest)).toEqual([
      { level: 40, req: { id: 'r-1', method: 'GET', url: '/x' }, msg: 'inside' },
      {
        level: 30,
        req: { id: 'r-1', method: 'GET', url: '/x' },
        res: { statusCode: 200 },
        msg: 'request completed',
      },
    ]);
    expect(typeof lines[1].responseTime).toBe('number');
  });

  it('writes 5xx answers and failed responses as errors', () => {
    const lines: Array<Record<string, unknown>> = [];
    const { req, res } = exchange();
    res.statusCode = 503;
    requestLogging(rootLogger('warn', lines))(req, res, jest.fn());
    res.emit('finish');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 50,
      msg: 'request errored',
      err: { message: 'failed with status code 503' },
    });
  });

  it('makes no child logger and listens to nothing when nothing can be written', () => {
    const lines: Array<Record<string, unknown>> = [];
    const root = rootLogger('silent', lines);
    const child = jest.spyOn(root, 'child');
    const { req, res } = exchange();
    requestLogging(root)(req, res, jest.fn());
    expect(res.listenerCount('finish')).toBe(0);
    res.emit('finish');
    expect(child).not.toHaveBeenCalled();
    req.log.info('only now');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([]);
  });

  it('makes the child only when something is written at an enabled level', () => {
    const lines: Array<Record<string, unknown>> = [];
    const root = rootLogger('warn', lines);
    const child = jest.spyOn(root, 'child');
    const { req, res } = exchange();
    requestLogging(root)(req, res, jest.fn());
    res.emit('finish'); // a 200 at warn: nothing to write
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });
});
